"""Operations routes: liveness, readiness (the database answers) and which providers this server reaches."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException

from deepresearch.api.access import ViewsDep, request_principal
from deepresearch.api.errors import error_responses
from deepresearch.service.preflight import HealthPublic, ProvidersHealthPublic, ReadyPublic
from deepresearch.store import DATABASE_ERRORS

ops = APIRouter(tags=["ops"])


@ops.get("/healthz", response_model=HealthPublic)
async def healthz() -> HealthPublic:
    """The process answers."""
    return HealthPublic(status="ok")


@ops.get("/readyz", response_model=ReadyPublic, responses=error_responses(503))
async def readyz(views: ViewsDep) -> ReadyPublic:
    """The database answers."""
    try:
        await views.ping()
    except DATABASE_ERRORS as exc:
        raise HTTPException(503, f"database not reachable: {type(exc).__name__}") from exc
    return await views.readiness()


@ops.get(
    "/api/providers/health",
    response_model=ProvidersHealthPublic,
    dependencies=[Depends(request_principal)],  # like every /api route: a token where one is required
    responses=error_responses(401),
)
async def providers_health_route(views: ViewsDep) -> ProvidersHealthPublic:
    """Which search providers and which model this server can reach now (nothing is searched or asked)."""
    return await views.providers_health()
