"""Plan review: a run that waits at its `interrupt()` is answered here (approve, edit or reject), and the
answer goes to the graph as `Command(resume=...)` (docs/steering.md)."""

from __future__ import annotations

from .auth import CLI, Principal
from .plan_edit import PlanDecision
from .rules import RunConflict
from .service import RunService
from .store import RunRecord


async def answer_plan_review(
    service: RunService, run_id: str, decision: PlanDecision, principal: Principal = CLI
) -> RunRecord:
    """Resume a run waiting for its plan review with the person's decision (already validated)."""
    run = await service.visible_run(run_id, principal)
    pending = run.pending_input or {}
    if run.status != "waiting_for_input" or pending.get("kind") != "plan_review":
        raise RunConflict(f"run {run_id} is {run.status}: it waits for no plan review")
    return await service.answer_input(run_id, decision.model_dump(mode="json"), principal)
