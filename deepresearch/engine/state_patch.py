"""A fork's edit of a checkpoint's state: which queries to add or drop, which sources to drop, the
sub-questions (the report's outline) and options - and from which stage the fork must then run again.

Pure: it takes the checkpoint's values and returns the fork's, with the graph node to record them "as"
(LangGraph's update_state(as_node=...)): the node whose outgoing edge leads to the first stage that has to
run again. Everything before that stage is kept, and its calls are answered from receipts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from deepresearch.errors import InvalidInput
from deepresearch.graph.plan_edit import MAX_QUERIES, Item, PlanEdit, distinct, one_line
from deepresearch.options import OptionsPatch
from stages import STAGE_KEYS

# the node after which each stage runs: recording the fork's state as this node makes that stage next
AFTER_NODE = {
    "search_web": "review_plan",
    "fetch_sources": "search_web",
    "screen_evidence": "fetch_sources",
    "analyze_findings": "reflection",
    "critic_review": "analyze_findings",
    "write_report": "critic_review",
}
# what a stage writes (dropped when it runs again, so nothing stale reaches the report)
OUTPUTS = {
    "screen_evidence": ("evidence", "reflection"),
    "analyze_findings": ("findings",),
    "critic_review": ("critique",),
    "write_report": ("report",),
}


class StatePatch(BaseModel):
    """What a fork changes; everything omitted stays as it was at the checkpoint."""

    model_config = ConfigDict(extra="forbid", strict=True)

    add_queries: Annotated[
        list[Item],
        Field(max_length=MAX_QUERIES, description="Search these too (the fork searches again from here)."),
        AfterValidator(one_line),
        AfterValidator(distinct),
    ] = Field(default_factory=list)
    drop_queries: Annotated[list[Item], Field(max_length=100)] = Field(
        default_factory=list, description="Planned or run queries to forget, with what only they found."
    )
    drop_sources: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=2048)]], Field(max_length=100)
    ] = Field(default_factory=list, description="URLs of sources or search results to leave out.")
    sub_questions: PlanEdit | None = Field(
        None, description="A new outline: the sub-questions and the plan's queries (as in plan review)."
    )
    options: OptionsPatch | None = Field(None, description="Options to change (reviewers, budget, ...).")  # type: ignore[valid-type]


class PatchError(InvalidInput):
    """A patch that cannot apply to the run's state at that checkpoint; `field` names the patch's part."""


@dataclass(slots=True)
class ForkPlan:
    values: dict[str, Any]
    as_node: str
    seeded_stage: str
    """The last stage whose results the fork keeps."""
    stages_to_run: list[str]
    changes: list[str] = field(default_factory=list)


def plan_fork(
    values: dict[str, Any],
    stage: str,
    patch: StatePatch,
    options: dict[str, Any],
    identity: dict[str, Any],
) -> ForkPlan:
    """The fork's state from a checkpoint after `stage`: `patch` applied, `options` (merged and checked by
    the caller) and `identity` (run_id, artifact_dir) set. PatchError names a patch that cannot apply."""
    position = STAGE_KEYS.index(stage)
    natural = position + 1  # the stage the checkpoint leads to
    restart = len(STAGE_KEYS)
    out = {**values, **identity, "options": options}
    plan = dict(out.get("plan") or {})
    done = list(out.get("queries_done") or [])
    changes: list[str] = []

    known = {q.casefold() for q in [*plan.get("queries", []), *done, *out.get("pending_queries", [])]}
    for query in patch.drop_queries:
        if query.casefold() not in known:
            raise PatchError(f"{query!r} is not a query of this run at that checkpoint", "patch.drop_queries")
    dropped_queries = {q.casefold() for q in patch.drop_queries}
    for query in patch.add_queries:
        if query.casefold() in {q.casefold() for q in done}:
            raise PatchError(f"{query!r} was searched already; its results are kept", "patch.add_queries")
        if query.casefold() in dropped_queries:
            raise PatchError(f"{query!r} is both added and dropped", "patch.add_queries")

    if patch.sub_questions is not None:
        plan["sub_questions"] = list(patch.sub_questions.sub_questions)
        plan["queries"] = list(patch.sub_questions.queries)
        changes.append(f"outline: {len(plan['sub_questions'])} sub-questions")
        restart = min(restart, STAGE_KEYS.index("screen_evidence"))
        if position == 0:  # not searched yet: the plan's queries are what the first round searches
            out["pending_queries"] = list(plan["queries"])

    if dropped_queries:

        def keep(query: str) -> bool:
            return query.casefold() not in dropped_queries

        plan["queries"] = [q for q in plan.get("queries", []) if keep(q)]
        out["pending_queries"] = [q for q in out.get("pending_queries", []) if keep(q)]
        results = []
        for result in out.get("search_results", []):
            queries = [q for q in result.get("queries", []) if keep(q)]
            if queries or not result.get("queries"):
                results.append({**result, "queries": queries})
        only_dropped = {r["url"] for r in out.get("search_results", [])} - {r["url"] for r in results}
        out["search_results"] = results
        out["sources"] = [s for s in out.get("sources", []) if s["url"] not in only_dropped]
        out["queries_done"] = [q for q in done if keep(q)]
        changes.append(f"dropped {len(dropped_queries)} quer{'y' if len(dropped_queries) == 1 else 'ies'}")
        if position >= STAGE_KEYS.index("fetch_sources"):
            restart = min(restart, STAGE_KEYS.index("screen_evidence"))

    if patch.drop_sources:
        urls = set(patch.drop_sources)
        present = {r["url"] for r in out.get("search_results", [])} | {
            s["url"] for s in out.get("sources", [])
        }
        unknown = sorted(urls - present)
        if unknown:
            raise PatchError(
                f"{unknown[0]!r} is not a source or search result of this run", "patch.drop_sources"
            )
        out["search_results"] = [r for r in out.get("search_results", []) if r["url"] not in urls]
        out["sources"] = [s for s in out.get("sources", []) if s["url"] not in urls]
        changes.append(f"dropped {len(urls)} source(s)")
        if position >= STAGE_KEYS.index("fetch_sources"):
            restart = min(restart, STAGE_KEYS.index("screen_evidence"))

    if patch.add_queries:
        plan["queries"] = [*plan.get("queries", []), *patch.add_queries]
        if position == 0:
            out["pending_queries"] = [*out.get("pending_queries", []), *patch.add_queries]
        else:
            out["pending_queries"] = list(patch.add_queries)
            restart = min(restart, STAGE_KEYS.index("search_web"))
        changes.append(f"{len(patch.add_queries)} more quer{'y' if len(patch.add_queries) == 1 else 'ies'}")

    old = values.get("options") or {}
    if options.get("reviewers") != old.get("reviewers"):
        restart = min(restart, STAGE_KEYS.index("analyze_findings"))
        changes.append("reviewers: " + ", ".join(options.get("reviewers") or []))
    if options.get("requires_critic_review") != old.get("requires_critic_review"):
        restart = min(restart, STAGE_KEYS.index("critic_review"))
        changes.append(f"critic review: {'on' if options.get('requires_critic_review') else 'off'}")
    if any(options.get(k) != old.get(k) for k in options if k not in ("reviewers", "requires_critic_review")):
        changes.append("options changed")
    out["plan"] = plan

    if restart >= natural:  # nothing before the checkpoint's next stage changes: continue from it
        return ForkPlan(out, stage, stage, _stages_from(natural, options), changes)
    first = STAGE_KEYS[restart]
    for later in STAGE_KEYS[restart:]:
        for key in OUTPUTS.get(later, ()):
            out.pop(key, None)
    if first == "analyze_findings":
        out["reflection"] = {**(values.get("reflection") or {}), "loop_again": False}
    return ForkPlan(out, AFTER_NODE[first], STAGE_KEYS[restart - 1], _stages_from(restart, options), changes)


def _stages_from(index: int, options: dict[str, Any]) -> list[str]:
    return [
        s for s in STAGE_KEYS[index:] if s != "critic_review" or options.get("requires_critic_review", True)
    ]
