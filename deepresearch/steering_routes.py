"""The routes that steer runs: answer a plan review, fork a run into a new one, ask a follow-up
(docs/steering.md). Routes only translate HTTP to the service and back."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from .contracts import RunPublic
from .http_access import PrincipalDep, ServiceDep, request_principal
from .http_errors import error_responses
from .plan_edit import PlanDecision
from .plan_review import answer_plan_review
from .run_views import public_run

steering = APIRouter(
    prefix="/api/runs",
    tags=["steering"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)


@steering.post(
    "/{run_id}/input",
    status_code=202,
    response_model=RunPublic,
    responses=error_responses(403, 404, 409, 413, 422),
)
async def answer_input(
    run_id: str, body: PlanDecision, service: ServiceDep, principal: PrincipalDep
) -> RunPublic:
    """Answer the plan review a run waits for: approve it, edit it (the whole edited lists: sub-questions
    and queries, at least one query) or reject it (the run ends `cancelled` with your reason)."""
    return public_run(await answer_plan_review(service, run_id, body, principal))
