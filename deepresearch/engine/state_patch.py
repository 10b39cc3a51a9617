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
from stages import REFLECTION, REPORT_STAGES, STAGE_KEYS, node_before, stages_after


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
    _check_queries(values, patch)
    draft = _Draft({**values, **identity, "options": options}, STAGE_KEYS.index(stage))
    if patch.sub_questions is not None:
        draft.edit_outline(patch.sub_questions)
    if patch.drop_queries:
        draft.drop_queries({q.casefold() for q in patch.drop_queries})
    if patch.drop_sources:
        draft.drop_sources(set(patch.drop_sources))
    if patch.add_queries:
        draft.add_queries(patch.add_queries)
    draft.compare_options(values.get("options") or {}, options)
    draft.out["plan"] = draft.plan
    return draft.plan_from(values, stage, options)


def _check_queries(values: dict[str, Any], patch: StatePatch) -> None:
    """A query to drop must be one of the run's; a query to add must not have run, nor be dropped too."""
    plan, done = values.get("plan") or {}, values.get("queries_done") or []
    known = {q.casefold() for q in [*plan.get("queries", []), *done, *values.get("pending_queries", [])]}
    for query in patch.drop_queries:
        if query.casefold() not in known:
            raise PatchError(f"{query!r} is not a query of this run at that checkpoint", "patch.drop_queries")
    dropped = {q.casefold() for q in patch.drop_queries}
    for query in patch.add_queries:
        if query.casefold() in {q.casefold() for q in done}:
            raise PatchError(f"{query!r} was searched already; its results are kept", "patch.add_queries")
        if query.casefold() in dropped:
            raise PatchError(f"{query!r} is both added and dropped", "patch.add_queries")


@dataclass(slots=True)
class _Draft:
    """The fork's state while the patch is applied, and the first stage it must run again."""

    out: dict[str, Any]
    position: int
    """The checkpoint's stage (an index of STAGE_KEYS)."""
    plan: dict[str, Any] = field(default_factory=dict)
    restart: int = len(STAGE_KEYS)
    changes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.plan = dict(self.out.get("plan") or {})

    def run_again_from(self, stage: str) -> None:
        self.restart = min(self.restart, STAGE_KEYS.index(stage))

    def fetched(self) -> bool:
        """Whether the checkpoint is at fetch_sources or later (sources fetched: screening uses them)."""
        return self.position >= STAGE_KEYS.index("fetch_sources")

    def edit_outline(self, edit: PlanEdit) -> None:
        self.plan["sub_questions"] = list(edit.sub_questions)
        self.plan["queries"] = list(edit.queries)
        if edit.rationale is not None:
            self.plan["rationale"] = edit.rationale
        self.changes.append(f"outline: {len(self.plan['sub_questions'])} sub-questions")
        self.run_again_from("screen_evidence")
        if self.position == 0:  # not searched yet: the plan's queries are what the first round searches
            self.out["pending_queries"] = list(self.plan["queries"])

    def drop_queries(self, dropped: set[str]) -> None:
        """Forget the queries, and the results and sources only they found."""

        def keep(query: str) -> bool:
            return query.casefold() not in dropped

        out = self.out
        self.plan["queries"] = [q for q in self.plan.get("queries", []) if keep(q)]
        out["pending_queries"] = [q for q in out.get("pending_queries", []) if keep(q)]
        results = []
        for result in out.get("search_results", []):
            queries = [q for q in result.get("queries", []) if keep(q)]
            if queries or not result.get("queries"):
                results.append({**result, "queries": queries})
        only_dropped = {r["url"] for r in out.get("search_results", [])} - {r["url"] for r in results}
        out["search_results"] = results
        out["sources"] = [s for s in out.get("sources", []) if s["url"] not in only_dropped]
        out["queries_done"] = [q for q in out.get("queries_done") or [] if keep(q)]
        self.changes.append(f"dropped {len(dropped)} quer{'y' if len(dropped) == 1 else 'ies'}")
        if self.fetched():
            self.run_again_from("screen_evidence")

    def drop_sources(self, urls: set[str]) -> None:
        out = self.out
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
        self.changes.append(f"dropped {len(urls)} source(s)")
        if self.fetched():
            self.run_again_from("screen_evidence")

    def add_queries(self, queries: list[str]) -> None:
        self.plan["queries"] = [*self.plan.get("queries", []), *queries]
        if self.position == 0:
            self.out["pending_queries"] = [*self.out.get("pending_queries", []), *queries]
        else:
            self.out["pending_queries"] = list(queries)
            self.run_again_from("search_web")
        self.changes.append(f"{len(queries)} more quer{'y' if len(queries) == 1 else 'ies'}")

    def compare_options(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """A changed option a stage reruns on (stages.py, ``reruns_on``) runs that stage again."""
        for stage in REPORT_STAGES:
            for option in stage.reruns_on:
                if new.get(option) != old.get(option):
                    self.run_again_from(stage.key)
                    self.changes.append(_option_change(option, new))
        if any(new.get(k) != old.get(k) for k in new if k not in RERUN_OPTIONS):
            self.changes.append("options changed")

    def plan_from(self, values: dict[str, Any], stage: str, options: dict[str, Any]) -> ForkPlan:
        """Continue from the checkpoint's next stage, or - when the patch changed what an earlier one
        read - from that stage, its results and those of every stage after it dropped."""
        if self.restart > self.position:  # nothing before the checkpoint's next stage changes
            return ForkPlan(self.out, stage, stage, stages_after(stage, options), self.changes)
        first, kept = STAGE_KEYS[self.restart], STAGE_KEYS[self.restart - 1]
        for later in REPORT_STAGES[self.restart :]:
            for key in later.outputs:
                self.out.pop(key, None)
        as_node = node_before(first)
        if as_node == REFLECTION.key:  # recorded as the reflection, the fork goes on only if it does not loop
            self.out["reflection"] = {**(values.get("reflection") or {}), "loop_again": False}
        return ForkPlan(self.out, as_node, kept, stages_after(kept, options), self.changes)


RERUN_OPTIONS = frozenset(option for stage in REPORT_STAGES for option in stage.reruns_on)


def _option_change(option: str, options: dict[str, Any]) -> str:
    """How a fork's changes name a changed option that makes a stage run again."""
    if option == "reviewers":
        return "reviewers: " + ", ".join(options.get("reviewers") or [])
    if option == "requires_critic_review":
        return f"critic review: {'on' if options.get('requires_critic_review') else 'off'}"
    return f"{option} changed"
