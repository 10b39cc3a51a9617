"""The routes that steer runs: answer a plan review, fork a run into a new one, ask a follow-up
(docs/steering.md). Routes only translate HTTP to the service and back."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from deepresearch.api.access import PrincipalDep, ServiceDep, request_principal
from deepresearch.api.errors import error_responses
from deepresearch.graph.plan_edit import PlanDecision
from deepresearch.service.contracts import ForkedPublic, ForkPreviewPublic, RunPublic
from deepresearch.service.steering import (
    FollowUpRequest,
    ForkRequest,
    answer_plan_review,
    follow_up,
    fork_run,
    preview_fork,
)
from deepresearch.service.views import public_run

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


@steering.post(
    "/{run_id}/fork/preview", response_model=ForkPreviewPublic, responses=error_responses(403, 404, 409, 422)
)
async def preview_fork_route(
    run_id: str, body: ForkRequest, service: ServiceDep, principal: PrincipalDep
) -> ForkPreviewPublic:
    """What a fork from this checkpoint with this patch would keep, run again and answer from receipts."""
    return await preview_fork(service, run_id, body, principal)


@steering.post(
    "/{run_id}/fork",
    status_code=201,
    response_model=ForkedPublic,
    responses=error_responses(403, 404, 409, 413, 422, 429),
)
async def fork_route(
    run_id: str, body: ForkRequest, service: ServiceDep, principal: PrincipalDep
) -> ForkedPublic:
    """A NEW run from a checkpoint of this one, with the patch applied (add or drop queries, drop sources,
    a new outline, other options); this run and its history stay as they are."""
    fork, preview = await fork_run(service, run_id, body, principal)
    return ForkedPublic(**public_run(fork).model_dump(), preview=preview)


@steering.post(
    "/{run_id}/follow-up",
    status_code=201,
    response_model=RunPublic,
    responses=error_responses(403, 404, 409, 413, 422, 429),
)
async def follow_up_route(
    run_id: str, body: FollowUpRequest, service: ServiceDep, principal: PrincipalDep
) -> RunPublic:
    """A new run for a follow-up question on this completed one: it starts with this run's sources,
    searches only for what they do not cover and reuses this run's recorded calls."""
    return public_run(await follow_up(service, run_id, body.question, body.options, principal))
