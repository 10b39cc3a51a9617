"""The HTTP runner: durable research runs over HTTP — start, stream (SSE), cancel, resume, checkpoints,
receipts, artifacts — on SQLite (embedded default) or PostgreSQL. OpenAPI at /openapi.json, docs at /docs
(served by the app itself: no CDN).

    deepresearch serve [--host 127.0.0.1] [--port 8000]

Routes only translate HTTP to the run service (deepresearch/service.py) and back; every rule about runs lives
there. Every route declares its response model and every status it can answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Path, Query, Request, Response
from fastapi.responses import FileResponse
from fastapi_offline import FastAPIOffline
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, create_model
from sse_starlette import EventSourceResponse, ServerSentEvent

from config import OptionsPatch, Settings
from deepresearch.contracts import (
    EVENT_TYPES,
    ArtifactsPublic,
    CancelPublic,
    CheckpointsPublic,
    HealthPublic,
    PreviewPublic,
    ProvidersHealthPublic,
    ReadyPublic,
    ReceiptsPublic,
    ResumedPublic,
    RunDetailPublic,
    RunEvent,
    RunsPublic,
    RunStatus,
)
from deepresearch.engine import open_engine
from deepresearch.http_errors import BodyLimit, error_responses, install_error_handlers, single_query_values
from deepresearch.preflight import llm_public, providers_health
from deepresearch.service import QUESTION_PATTERN, RunService, question_problem
from deepresearch.store import ACTIVE_STATUSES, DATABASE_ERRORS
from deepresearch.ui import mount_ui

VERSION = "0.1.0"
# any id that is not a run's (or the run's checkpoint's) is simply not found: 404, like a deleted one
RunId = Annotated[str, Path(description="The run's id (32 hex digits).")]
CheckpointId = Annotated[str, Path(description="A checkpoint id from GET /api/runs/{run_id}/checkpoints.")]
SEQ_MAX = 10**18


# --- request bodies ------------------------------------------------------------------------------
class ResumeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    checkpoint_id: str | None = Field(
        None, max_length=64, description="Fork from this checkpoint; omitted: continue from the latest."
    )
    options: OptionsPatch | None = Field(None, description="Options to change (e.g. a higher budget).")  # type: ignore[valid-type]
    takeover: bool = Field(
        False,
        description="Resume a run still marked running whose process is gone (killed, crashed). Never use "
        "it while another process runs it.",
    )


def run_create_model(max_question_chars: int) -> type[BaseModel]:
    """The start-a-run body, with the server's configured question limit in its schema."""

    def checked(question: str) -> str:
        # the service's rule and messages; the schema states the same rule as a pattern
        if problem := question_problem(question.strip(), max_question_chars):
            raise ValueError(problem)
        return question.strip()

    return create_model(
        "RunCreate",
        __config__=ConfigDict(extra="forbid", strict=True),
        question=(
            Annotated[str, AfterValidator(checked)],
            Field(
                min_length=1,
                max_length=max_question_chars,
                json_schema_extra={"pattern": QUESTION_PATTERN},
                description="The question: visible text, no control characters but tabs and newlines.",
            ),
        ),
        options=(OptionsPatch, Field(default_factory=OptionsPatch, description="Per-run options.")),  # type: ignore[valid-type]
    )


# --- dependencies --------------------------------------------------------------------------------
def get_service(request: Request) -> RunService:
    return request.app.state.service  # type: ignore[no-any-return]


ServiceDep = Annotated[RunService, Depends(get_service)]


class MarkdownResponse(Response):
    media_type = "text/markdown"


# --- routes --------------------------------------------------------------------------------------
runs = APIRouter(prefix="/api/runs", tags=["runs"])
_NOT_FOUND = error_responses(404, 422)


@runs.get("", response_model=RunsPublic, responses=error_responses(422))
async def list_runs(
    service: ServiceDep,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
) -> RunsPublic:
    """Runs, newest first."""
    page, more = await service.list_runs(status, limit, offset)
    return RunsPublic(runs=page, limit=limit, offset=offset, next_offset=offset + limit if more else None)


@runs.get("/{run_id}", response_model=RunDetailPublic, responses=_NOT_FOUND)
async def get_run(run_id: RunId, service: ServiceDep) -> RunDetailPublic:
    """The run with its stages, checkpoint count and artifacts."""
    return await service.detail(run_id)


@runs.get(
    "/{run_id}/events",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "Server-sent events: `event` = the type, `id` = seq, `data` = the event as JSON "
            "(schema RunEvent). Replays the log after `after` / Last-Event-ID, then tails it; closes "
            "after the `end` of a run that has stopped.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/SseMessage"}}},
        },
        **_NOT_FOUND,
    },
)
async def stream_events(
    run_id: RunId,
    request: Request,
    service: ServiceDep,
    after: Annotated[int, Query(ge=0, le=SEQ_MAX, description="Replay events after this seq.")] = 0,
    last_event_id: Annotated[
        str,
        Header(
            pattern=r"^[0-9]{0,18}$", description="Resume after this seq (SSE reconnect); wins over `after`."
        ),
    ] = "",
) -> EventSourceResponse:
    await service.store.get_run(run_id)
    start = int(last_event_id) if last_event_id else after
    settings: Settings = request.app.state.settings
    return EventSourceResponse(
        _event_stream(service, request, run_id, start), ping=settings.sse_heartbeat_seconds
    )


async def _event_stream(
    service: RunService, request: Request, run_id: str, start: int
) -> AsyncIterator[ServerSentEvent]:
    """Replay the log after `start`, then tail it; close after the terminal `end` of a stopped run.

    A client that goes away only ends this generator: the run goes on."""
    last = start
    with service.notifier.subscribe(run_id) as wake:
        while not await request.is_disconnected():
            wake.clear()  # before reading: an event appended after the read sets it again
            batch = await service.store.list_events(run_id, after=last, limit=500)
            for event in batch:
                last = event.seq
                yield ServerSentEvent(
                    data=json.dumps(event.to_dict(), ensure_ascii=False), event=event.type, id=str(event.seq)
                )
            if len(batch) < 500 and await _stopped(service, run_id, last):
                return
            if not batch:
                # events of runs executing in another process are only seen by polling the log
                with suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=1.0)


async def _stopped(service: RunService, run_id: str, last: int) -> bool:
    """The run is not running anywhere and the client has every event of it."""
    run = await service.store.get_run(run_id)
    if run.status in ACTIVE_STATUSES or service.is_active_here(run_id):
        return False
    return not await service.store.list_events(run_id, after=last, limit=1)


@runs.post("/{run_id}/cancel", status_code=202, response_model=CancelPublic, responses=_NOT_FOUND)
async def cancel_run(run_id: RunId, service: ServiceDep) -> CancelPublic:
    """Stop at the nearest checkpoint (idempotent). The run stays resumable."""
    run = await service.cancel(run_id)
    return CancelPublic(run_id=run.run_id, status=run.status, cancel_requested=run.cancel_requested)  # type: ignore[arg-type]


@runs.post(
    "/{run_id}/resume",
    status_code=202,
    response_model=ResumedPublic,
    responses=error_responses(400, 404, 409, 413, 422),
)
async def resume_run(run_id: RunId, service: ServiceDep, body: ResumeRequest | None = None) -> ResumedPublic:
    """Continue from the latest checkpoint, or fork from `checkpoint_id`: completed calls are reused."""
    body = body or ResumeRequest()
    run = await service.resume(run_id, body.checkpoint_id, body.options, takeover=body.takeover)
    return ResumedPublic(
        **(await service.get(run.run_id)).model_dump(), resumed_from=body.checkpoint_id or "latest"
    )


@runs.get("/{run_id}/checkpoints", response_model=CheckpointsPublic, responses=_NOT_FOUND)
async def list_checkpoints(run_id: RunId, service: ServiceDep) -> CheckpointsPublic:
    """The business safety points, oldest first."""
    return CheckpointsPublic(run_id=run_id, checkpoints=await service.checkpoints(run_id))


@runs.get("/{run_id}/checkpoints/{checkpoint_id}/preview", response_model=PreviewPublic, responses=_NOT_FOUND)
async def preview_checkpoint(
    run_id: RunId, checkpoint_id: CheckpointId, service: ServiceDep
) -> PreviewPublic:
    """What resuming from this checkpoint would skip, run and reuse, and the risk of a duplicate call."""
    return await service.preview(run_id, checkpoint_id)


@runs.get("/{run_id}/receipts", response_model=ReceiptsPublic, responses=_NOT_FOUND)
async def list_receipts(
    run_id: RunId,
    service: ServiceDep,
    receipt_key: Annotated[str | None, Query(max_length=200)] = None,
    status: Literal["started", "succeeded", "failed"] | None = None,
) -> ReceiptsPublic:
    """The run's tool receipts: one per external call, with its arguments (never its result body)."""
    return ReceiptsPublic(run_id=run_id, receipts=await service.receipts(run_id, receipt_key, status))


@runs.get("/{run_id}/artifacts", response_model=ArtifactsPublic, responses=_NOT_FOUND)
async def list_artifacts(run_id: RunId, service: ServiceDep) -> ArtifactsPublic:
    run = await service.store.get_run(run_id)
    return ArtifactsPublic(
        run_id=run_id, artifact_dir=run.artifact_dir, artifacts=await service.artifacts(run)
    )


@runs.get(
    "/{run_id}/artifacts/{path:path}",
    response_class=FileResponse,
    responses={
        200: {"description": "The file, with its own media type.", "content": {"*/*": {}}},
        **_NOT_FOUND,
    },
)
async def get_artifact(run_id: RunId, path: str, service: ServiceDep) -> FileResponse:
    run = await service.store.get_run(run_id)
    target = service.artifact_file(run, path)
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        "X-Content-Type-Options": "nosniff",
    }
    return FileResponse(target, headers=headers)


@runs.get(
    "/{run_id}/report",
    response_class=MarkdownResponse,
    responses={
        200: {
            "description": "The cited report: Markdown, or sanitised self-contained HTML with `format=html`.",
            "content": {
                "text/markdown": {"schema": {"type": "string"}},
                "text/html": {"schema": {"type": "string"}},
            },
        },
        **_NOT_FOUND,
    },
)
async def get_report(run_id: RunId, service: ServiceDep, format: Literal["md", "html"] = "md") -> Response:
    run = await service.store.get_run(run_id)
    target = service.artifact_file(run, f"deepresearch-report.{format}")
    text = await asyncio.to_thread(target.read_text, "utf-8")
    headers = {"X-Content-Type-Options": "nosniff"}
    if format == "md":
        return MarkdownResponse(text, media_type="text/markdown; charset=utf-8", headers=headers)
    headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return Response(text, media_type="text/html; charset=utf-8", headers=headers)


@runs.delete("/{run_id}", status_code=204, response_class=Response, responses=error_responses(404, 409, 422))
async def delete_run(run_id: RunId, service: ServiceDep) -> Response:
    """The run with its events, checkpoints, receipts and artifacts; cancel a running run first."""
    await service.delete(run_id)
    return Response(status_code=204)


ops = APIRouter(tags=["ops"])


@ops.get("/healthz", response_model=HealthPublic)
async def healthz() -> HealthPublic:
    """The process answers."""
    return HealthPublic(status="ok")


@ops.get("/readyz", response_model=ReadyPublic, responses=error_responses(503))
async def readyz(service: ServiceDep) -> ReadyPublic:
    """The database answers."""
    try:
        await service.store.ping()
    except DATABASE_ERRORS as exc:
        raise HTTPException(503, f"database not reachable: {type(exc).__name__}") from exc
    settings = service.engine.settings
    return ReadyPublic(
        status="ready", engine=settings.engine_mode, llm=await llm_public(settings, service.store)
    )


@ops.get("/api/providers/health", response_model=ProvidersHealthPublic)
async def providers_health_route(service: ServiceDep) -> ProvidersHealthPublic:
    """Which search providers and which model this server can reach now (nothing is searched or asked)."""
    return await providers_health(service.engine.settings, service.store)


# --- the app -------------------------------------------------------------------------------------
def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_engine(settings) as engine:
            service = RunService(engine, shutdown_grace_seconds=settings.shutdown_grace_seconds)
            app.state.service = service
            if settings.recover_runs_on_startup:
                await service.recover()
            try:
                yield
            finally:
                await service.shutdown()

    app = FastAPIOffline(
        dependencies=[Depends(single_query_values)],
        title="deepresearch runner",
        version=VERSION,
        lifespan=lifespan,
        description="Durable deep-research runs: start, stream, cancel, resume, fork. Every error answers "
        '`{"detail": ..., "errors"?: [...]}`.',
    )
    app.state.settings = settings
    app.include_router(_create_router(settings))
    app.include_router(runs)
    app.include_router(ops)
    mount_ui(app, settings)
    install_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    _document_events(app)
    return app


def _create_router(settings: Settings) -> APIRouter:
    """POST /api/runs, built per app: its body's schema carries this server's question limit."""
    router = APIRouter(prefix="/api/runs", tags=["runs"])
    RunCreate = run_create_model(settings.max_question_chars)

    async def create_run(body: BaseModel, service: ServiceDep) -> RunDetailPublic:
        """Start a run; stream its events from /api/runs/{run_id}/events."""
        run = await service.start(body.question, body.options)  # type: ignore[attr-defined]
        return await service.detail(run.run_id)

    # the body's model is built at run time; FastAPI reads the (postponed) annotation from here
    create_run.__annotations__["body"] = RunCreate
    router.post(
        "", status_code=201, response_model=RunDetailPublic, responses=error_responses(400, 413, 422)
    )(create_run)
    return router


def _document_events(app: FastAPI) -> None:
    """Put the event models into the OpenAPI document's components (the SSE route refers to RunEvent),
    and give every error response its JSON body."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            events = TypeAdapter(RunEvent).json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(events.pop("$defs", {}))
            components["RunEvent"] = events
            # one SSE message (OpenAPI 3.1: the per-message schema; `itemSchema` from 3.2 on)
            components["SseMessage"] = {
                "type": "object",
                "required": ["event", "id", "data"],
                "properties": {
                    "event": {"type": "string", "enum": list(EVENT_TYPES)},
                    "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The event's seq."},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": "#/components/schemas/RunEvent"},
                    },
                },
            }
            # error bodies are JSON whatever the route's own media type (report: text/markdown)
            error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorPublic"}}}
            for operations in schema["paths"].values():
                for operation in operations.values():
                    for code, response in operation["responses"].items():
                        if code[0] in "45":
                            response["content"] = error_body
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> int:
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=int(settings.shutdown_grace_seconds) + 5,
    )
    return 0
