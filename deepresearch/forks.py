"""Forks as new runs: a checkpoint of a run, copied into a new run's thread with a validated patch applied
through LangGraph's update_state, then continued. The original run, its thread and its history are not
touched; the fork starts with copies of the original's receipts, so a call whose arguments did not change
is answered from its recorded result (docs/steering.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from config import STORED, ResearchOptions
from stages import STAGES_BY_KEY

from .auth import CLI, Principal
from .contracts import ForkPreviewPublic
from .engine import graph_config
from .rules import InvalidInput, RunConflict
from .service import RunService
from .state_patch import ForkPlan, PatchError, StatePatch, plan_fork
from .store import ACTIVE_STATUSES, CheckpointRecord, RunRecord, utcnow
from .store.steering import REUSABLE_TOOLS


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
    checkpoint = await service.checkpoint(run_id, request.checkpoint_id)
    config = graph_config(checkpoint.thread_id, checkpoint.checkpoint_id, checkpoint.checkpoint_ns)
    snapshot = await service.engine.graph.aget_state(config)
    options = service.options(run.options, request.patch.options, principal).model_dump()
    try:
        plan = plan_fork(dict(snapshot.values), checkpoint.stage, request.patch, options, {})
    except PatchError as exc:
        raise InvalidInput(str(exc), exc.field) from None
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


async def fork_run(
    service: RunService, run_id: str, request: ForkRequest, principal: Principal = CLI
) -> tuple[RunRecord, ForkPreviewPublic]:
    """Create and start the fork; returns it with its preview."""
    prepared, _ = await _prepare(service, run_id, request, principal)
    options = ResearchOptions.model_validate(prepared.options, context=STORED)
    fork = await service.create_with(prepared.run.question, options, principal)
    identity = {"run_id": fork.run_id, "artifact_dir": fork.artifact_dir}
    plan = plan_fork(prepared.values, prepared.checkpoint.stage, request.patch, prepared.options, identity)
    forked_from = {"run_id": run_id, "checkpoint_id": prepared.checkpoint.checkpoint_id}
    fork = await service.store.update_run(fork.run_id, forked_from=forked_from)
    await service.store.copy_receipts(run_id, fork.run_id)
    graph = service.engine.graph
    seeded = await graph.aupdate_state(graph_config(fork.thread_id), plan.values, as_node=plan.as_node)
    stage = STAGES_BY_KEY[plan.seeded_stage]
    snapshot = await graph.aget_state(seeded)
    await service.store.add_checkpoint(
        CheckpointRecord(
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
    )
    text = (
        f"Forked from run {run_id} at its {prepared.checkpoint.stage} checkpoint "
        f"({'; '.join(plan.changes) or 'no changes'}); running {', '.join(plan.stages_to_run) or 'nothing'}."
    )
    await service.store.append_event(fork.run_id, "message", None, {"text": text, "forked_from": forked_from})
    service.launch(fork.run_id)
    return fork, prepared.preview
