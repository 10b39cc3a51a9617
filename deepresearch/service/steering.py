"""Steering a run: forks from a checkpoint, follow-up questions and answers to a plan review.

Forks as new runs: a checkpoint of a run, copied into a new run's thread with a validated patch applied
through LangGraph's update_state, then continued. The original run, its thread and its history are not
touched; the fork starts with copies of the original's receipts, so a call whose arguments did not change
is answered from its recorded result (docs/steering.md).

Follow-up questions: a new run on a finished one, seeded with its fetched sources (and what its
searches found for them) through update_state(as_node="__input__"). It plans the new question, searches
only for what those sources do not cover (deepresearch/graph/seeding.py) and answers repeated calls
from copies of the original's receipts; the original is not touched (docs/steering.md).

Plan review: a run that waits at its `interrupt()` is answered here (approve, edit or reject), and the
answer goes to the graph as `Command(resume=...)` (docs/steering.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deepresearch.engine.core import graph_config
from deepresearch.engine.state_patch import ForkPlan, StatePatch, plan_fork
from deepresearch.errors import RunConflict
from deepresearch.graph.plan_edit import PlanDecision
from deepresearch.options import STORED, OptionsPatch, ResearchOptions
from deepresearch.receipts.specs import REUSABLE_TOOLS
from deepresearch.service.auth import CLI, Principal
from deepresearch.service.contracts import ForkPreviewPublic
from deepresearch.service.options import Patch, check_question
from deepresearch.service.runs import RunService
from deepresearch.store import ACTIVE_STATUSES, CheckpointRecord, RunRecord, utcnow
from stages import STAGES_BY_KEY


class ForkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    checkpoint_id: str = Field(max_length=64, description="A checkpoint of the run (GET .../checkpoints).")
    patch: StatePatch = Field(default_factory=StatePatch, description="What the fork changes.")


@dataclass(slots=True)
class _Prepared:
    run: RunRecord
    checkpoint: CheckpointRecord
    values: dict[str, Any]
    options: dict[str, Any]
    preview: ForkPreviewPublic


async def _prepare(
    service: RunService, run_id: str, request: ForkRequest, principal: Principal
) -> tuple[_Prepared, ForkPlan]:
    """Every check, before anything is created: the run, the checkpoint, the options and the patch."""
    run = await service.visible_run(run_id, principal)
    if run.status in ACTIVE_STATUSES:
        raise RunConflict(f"run {run_id} is {run.status}; fork it once it has stopped (or cancel it)")
    checkpoint = await service.views.checkpoint(run_id, request.checkpoint_id)
    config = graph_config(checkpoint.thread_id, checkpoint.checkpoint_id, checkpoint.checkpoint_ns)
    snapshot = await service.engine.state(config)
    options = service.options(run.options, request.patch.options, principal).model_dump()
    # a patch that cannot apply raises PatchError, an InvalidInput (422 naming the patch's field)
    plan = plan_fork(dict(snapshot.values), checkpoint.stage, request.patch, options, {})
    receipts = await service.store.list_receipts(run_id, status="succeeded")
    preview = ForkPreviewPublic(
        run_id=run_id,
        checkpoint_id=checkpoint.checkpoint_id,
        stage=checkpoint.stage,
        kept_through=plan.seeded_stage,
        stages_to_run=plan.stages_to_run,
        changes=plan.changes,
        receipts_reusable=sum(1 for r in receipts if r.tool_name in REUSABLE_TOOLS),
    )
    return _Prepared(run, checkpoint, dict(snapshot.values), options, preview), plan


async def preview_fork(
    service: RunService, run_id: str, request: ForkRequest, principal: Principal = CLI
) -> ForkPreviewPublic:
    """What the fork would keep, run and reuse; nothing is created."""
    prepared, _ = await _prepare(service, run_id, request, principal)
    return prepared.preview


@dataclass(slots=True)
class Fork:
    run: RunRecord
    preview: ForkPreviewPublic
    checkpoint: CheckpointRecord
    """The fork's first checkpoint: the original's state with the patch applied."""


async def create_fork(
    service: RunService, run_id: str, request: ForkRequest, principal: Principal = CLI, *, held: bool = False
) -> Fork:
    """Create the fork, seeded and ready to run; not started. `held`: it stays stopped (cancelled,
    resumable) until someone continues it - otherwise the caller launches it at once (fork_run)."""
    prepared, _ = await _prepare(service, run_id, request, principal)
    options = ResearchOptions.model_validate(prepared.options, context=STORED)
    fork = await service.create_with(prepared.run.question, options, principal)
    identity = {"run_id": fork.run_id, "artifact_dir": fork.artifact_dir}
    plan = plan_fork(prepared.values, prepared.checkpoint.stage, request.patch, prepared.options, identity)
    forked_from = {"run_id": run_id, "checkpoint_id": prepared.checkpoint.checkpoint_id}
    fork = await service.store.update_run(fork.run_id, forked_from=forked_from)
    await service.store.copy_receipts(run_id, fork.run_id, REUSABLE_TOOLS)
    seeded = await service.engine.update_state(graph_config(fork.thread_id), plan.values, plan.as_node)
    stage = STAGES_BY_KEY[plan.seeded_stage]
    snapshot = await service.engine.state(seeded)
    record = CheckpointRecord(
        run_id=fork.run_id,
        checkpoint_id=seeded["configurable"]["checkpoint_id"],
        stage=stage.key,
        title=stage.title,
        created_at=utcnow(),
        next=list(snapshot.next),
        summary=f"forked from run {run_id}: " + ("; ".join(plan.changes) or "no changes"),
        thread_id=fork.thread_id,
        checkpoint_ns=seeded["configurable"].get("checkpoint_ns", ""),
        parent_checkpoint_id=None,
        fork_of=prepared.checkpoint.checkpoint_id,
    )
    await service.store.add_checkpoint(record)
    to_run = ", ".join(plan.stages_to_run) or "nothing"
    text = (
        f"Forked from run {run_id} at its {prepared.checkpoint.stage} checkpoint "
        f"({'; '.join(plan.changes) or 'no changes'}); "
        + (f"continue it to run {to_run}." if held else f"running {to_run}.")
    )
    await service.store.append_event(fork.run_id, "message", None, {"text": text, "forked_from": forked_from})
    if held:
        # not `queued`: a queued run nobody executes is an orphan the takeover scan would start
        fork = await service.store.update_run(
            fork.run_id, status="cancelled", error="forked, not started: continue it", finished_at=utcnow()
        )
    return Fork(fork, prepared.preview, record)


async def fork_run(
    service: RunService, run_id: str, request: ForkRequest, principal: Principal = CLI
) -> tuple[RunRecord, ForkPreviewPublic]:
    """Create and start the fork; returns it with its preview."""
    fork = await create_fork(service, run_id, request, principal)
    service.launch(fork.run.run_id)
    return fork.run, fork.preview


SEEDED_KEYS = ("sources", "fetch_failures", "queries_done")


class FollowUpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=100_000, description="The follow-up question.")
    options: OptionsPatch | None = Field(  # type: ignore[valid-type]
        None,
        description="Options to change; the rest are the original run's, but review_plan is off unless set "
        "here.",
    )


async def follow_up(
    service: RunService, run_id: str, question: str, patch: Patch | None = None, principal: Principal = CLI
) -> RunRecord:
    original = await service.visible_run(run_id, principal)
    if original.status != "completed":
        raise RunConflict(f"run {run_id} is {original.status}; ask a follow-up once it has completed")
    question = check_question(question, service.settings.max_question_chars)
    values = (await service.engine.state(graph_config(original.thread_id))).values
    # asked from a finished report, a follow-up does not stop for a plan review unless asked to
    options = service.options({**original.options, "review_plan": False}, patch, principal)
    run = await service.create_with(question, options, principal)
    run = await service.store.update_run(run.run_id, follow_up_of=run_id)
    await service.store.copy_receipts(run_id, run.run_id, REUSABLE_TOOLS)
    read = {s["url"] for s in values.get("sources", [])} | {
        f["url"] for f in values.get("fetch_failures", [])
    }
    seed = {
        "run_id": run.run_id,
        "question": question,
        "options": options.model_dump(),
        "engine": run.engine,
        "artifact_dir": run.artifact_dir,
        # only what the original read (or could not): other results it left unread are not carried over
        "search_results": [r for r in values.get("search_results", []) if r["url"] in read],
        **{key: values.get(key, []) for key in SEEDED_KEYS},
    }
    await service.engine.update_state(graph_config(run.thread_id), seed, "__input__")
    text = (
        f"A follow-up of run {run_id}: starts with its {len(seed['sources'])} sources and searches only "
        "for what they do not cover."
    )
    await service.store.append_event(run.run_id, "message", None, {"text": text, "follow_up_of": run_id})
    service.launch(run.run_id)
    return run


async def answer_plan_review(
    service: RunService, run_id: str, decision: PlanDecision, principal: Principal = CLI
) -> RunRecord:
    """Resume a run waiting for its plan review with the person's decision (already validated)."""
    run = await service.visible_run(run_id, principal)
    pending = run.pending_input or {}
    if run.status != "waiting_for_input" or pending.get("kind") != "plan_review":
        raise RunConflict(f"run {run_id} is {run.status}: it waits for no plan review")
    return await service.answer_input(run_id, decision.model_dump(mode="json"), principal)
