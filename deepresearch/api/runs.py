"""The routes of /api/runs: start, list, read, stream (SSE), cancel, resume, checkpoints, receipts,
artifacts, the report and delete. Routes only translate HTTP to the run service
(deepresearch/service/runs.py) and back; every rule about runs lives there. Every route declares its response
model and every status it can answer."""

from __future__ import annotations

import asyncio
import json
import mimetypes
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response
from fastapi.responses import FileResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from config import Settings
from deepresearch.api.access import PrincipalDep, RunDep, ServiceDep, ViewsDep, request_principal
from deepresearch.api.errors import error_responses
from deepresearch.options import OptionsPatch
from deepresearch.service.contracts import (
    ArtifactsPublic,
    CancelPublic,
    CheckpointsPublic,
    PreviewPublic,
    ReceiptsPublic,
    ResumedPublic,
    RunDetailPublic,
    RunsPublic,
    RunStatus,
)
from deepresearch.service.options import QUESTION_PATTERN, question_problem
from deepresearch.service.reading import download_name
from deepresearch.service.runs import RunService
from deepresearch.store import EventRecord

# any id that is not the run's checkpoint's is simply not found: 404, like a deleted one
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


class MarkdownResponse(Response):
    media_type = "text/markdown"


# --- routes --------------------------------------------------------------------------------------
# every route of /api/runs answers only a client with a valid token (or none needed): 401 otherwise
# FileResponse guesses a media type; the first guess reads the system's mime.types files, which must not
# happen on the event loop: read them now, at import
mimetypes.init()

runs = APIRouter(
    prefix="/api/runs",
    tags=["runs"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)
_NOT_FOUND = error_responses(404, 422)
# a run's file that it has not written (yet): 409 until the run completes
_NOT_WRITTEN = error_responses(404, 409, 422)
_CHANGES = error_responses(403, 404, 422)  # state-changing: a cross-site request is refused with 403


@runs.get("", response_model=RunsPublic, responses=error_responses(422))
async def list_runs(
    service: ServiceDep,
    principal: PrincipalDep,
    status: RunStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
    q: Annotated[str | None, Query(max_length=200, description="Words in the question or title.")] = None,
) -> RunsPublic:
    """Your runs (an admin: everyone's), newest first."""
    page, more = await service.list_runs(status, limit, offset, principal, search=(q or "").strip() or None)
    return RunsPublic(runs=page, limit=limit, offset=offset, next_offset=offset + limit if more else None)


@runs.get("/{run_id}", response_model=RunDetailPublic, responses=_NOT_FOUND)
async def get_run(run: RunDep, views: ViewsDep) -> RunDetailPublic:
    """The run with its stages, checkpoint count and artifacts."""
    return await views.detail(run.run_id)


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
        **error_responses(404, 422, 429),
    },
)
async def stream_events(
    run: RunDep,
    request: Request,
    service: ServiceDep,
    principal: PrincipalDep,
    after: Annotated[int, Query(ge=0, le=SEQ_MAX, description="Replay events after this seq.")] = 0,
    last_event_id: Annotated[
        str,
        Header(
            pattern=r"^[0-9]{0,18}$", description="Resume after this seq (SSE reconnect); wins over `after`."
        ),
    ] = "",
) -> EventSourceResponse:
    start = int(last_event_id) if last_event_id else after
    settings: Settings = request.app.state.settings
    # a user's streams count together; clients without a token by their address
    address = request.client.host if request.client else "?"
    client = principal.user if principal.token_id else f"address {address}"
    release = request.app.state.streams.acquire(client)  # 429 here, before the response starts
    # released when the stream ends, however it ends (the generator's finally, or after the response)
    return EventSourceResponse(
        _event_stream(service, request, run.run_id, start, release),
        ping=settings.sse_heartbeat_seconds,
        background=BackgroundTask(release),
    )


async def _event_stream(
    service: RunService, request: Request, run_id: str, start: int, release: Callable[[], None]
) -> AsyncIterator[ServerSentEvent]:
    """Replay the log after `start`, then tail it; close after the terminal `end` of a stopped run.

    Events this process appends are handed over in memory (no read per event); the log is read to
    replay, after a gap, and for runs executing on another replica (woken by NOTIFY, or every second).
    A client that goes away ends this generator (sse-starlette cancels it): the run goes on."""
    last = start
    try:
        with service.notifier.subscribe(run_id) as subscription:
            batch: list[EventRecord] | None = None  # None: read the log
            look = True  # is the run over? asked at the start, after an `end`, and when idle
            while True:
                if batch is None:
                    batch = await service.views.events(run_id, after=last, limit=500)
                for event in batch:
                    last = event.seq
                    look = look or event.type == "end"
                    yield ServerSentEvent(data=_event_json(event), event=event.type, id=str(event.seq))
                if len(batch) == 500:
                    batch = None  # more to replay
                    continue
                if look and await service.views.caught_up(run_id, last):
                    return
                look = False
                subscription.wake.clear()  # before looking: an event handed over after it sets it again
                batch = subscription.take(last)
                if batch == []:
                    try:
                        await asyncio.wait_for(subscription.wake.wait(), timeout=1.0)
                        batch = subscription.take(last)
                    except TimeoutError:
                        # other replicas' events without NOTIFY (SQLite) are only seen by polling the log
                        batch, look = None, True
                        if await request.is_disconnected():
                            return
    finally:
        release()


def _event_json(event: EventRecord) -> str:
    # the same text whether the event was read back from the log or handed over in memory
    return json.dumps(event.to_dict(), ensure_ascii=False, default=str)


@runs.post("/{run_id}/cancel", status_code=202, response_model=CancelPublic, responses=_CHANGES)
async def cancel_run(run: RunDep, service: ServiceDep) -> CancelPublic:
    """Stop at the nearest checkpoint (idempotent). The run stays resumable."""
    run = await service.cancel(run.run_id)
    return CancelPublic(run_id=run.run_id, status=run.status, cancel_requested=run.cancel_requested)  # type: ignore[arg-type]


@runs.post(
    "/{run_id}/resume",
    status_code=202,
    response_model=ResumedPublic,
    responses=error_responses(400, 403, 404, 409, 413, 422),
)
async def resume_run(
    run: RunDep, service: ServiceDep, principal: PrincipalDep, body: ResumeRequest | None = None
) -> ResumedPublic:
    """Continue from the latest checkpoint, or fork from `checkpoint_id`: completed calls are reused."""
    body = body or ResumeRequest()
    run = await service.resume(
        run.run_id, body.checkpoint_id, body.options, takeover=body.takeover, principal=principal
    )
    return ResumedPublic(
        **(await service.get(run.run_id)).model_dump(), resumed_from=body.checkpoint_id or "latest"
    )


@runs.get("/{run_id}/checkpoints", response_model=CheckpointsPublic, responses=_NOT_FOUND)
async def list_checkpoints(run: RunDep, views: ViewsDep) -> CheckpointsPublic:
    """The business safety points, oldest first."""
    return CheckpointsPublic(run_id=run.run_id, checkpoints=await views.checkpoints(run.run_id))


@runs.get("/{run_id}/checkpoints/{checkpoint_id}/preview", response_model=PreviewPublic, responses=_NOT_FOUND)
async def preview_checkpoint(run: RunDep, checkpoint_id: CheckpointId, views: ViewsDep) -> PreviewPublic:
    """What resuming from this checkpoint would skip, run and reuse, and the risk of a duplicate call."""
    return await views.preview(run.run_id, checkpoint_id)


@runs.get("/{run_id}/receipts", response_model=ReceiptsPublic, responses=_NOT_FOUND)
async def list_receipts(
    run: RunDep,
    views: ViewsDep,
    receipt_key: Annotated[str | None, Query(max_length=200)] = None,
    status: Literal["started", "succeeded", "failed"] | None = None,
) -> ReceiptsPublic:
    """The run's tool receipts: one per external call, with its arguments (never its result body)."""
    return ReceiptsPublic(run_id=run.run_id, receipts=await views.receipts(run.run_id, receipt_key, status))


@runs.get("/{run_id}/artifacts", response_model=ArtifactsPublic, responses=_NOT_FOUND)
async def list_artifacts(run: RunDep, views: ViewsDep) -> ArtifactsPublic:
    return ArtifactsPublic(
        run_id=run.run_id, artifact_dir=run.artifact_dir, artifacts=await views.artifacts(run)
    )


@runs.get(
    "/{run_id}/artifacts/{path:path}",
    response_class=FileResponse,
    responses={
        200: {"description": "The file, with its own media type.", "content": {"*/*": {}}},
        **_NOT_WRITTEN,
    },
)
async def get_artifact(run: RunDep, path: str, views: ViewsDep) -> FileResponse:
    target = await views.artifact_file(run, path)
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
        **_NOT_WRITTEN,
    },
)
async def get_report(run: RunDep, views: ViewsDep, format: Literal["md", "html"] = "md") -> Response:
    target = await views.artifact_file(run, f"deepresearch-report.{format}")
    text = await asyncio.to_thread(target.read_text, "utf-8")
    # named after the run's topic when saved (the workbench's download links leave the name to this)
    headers = {"X-Content-Type-Options": "nosniff", "Content-Disposition": download_name(run, format)}
    if format == "md":
        return MarkdownResponse(text, media_type="text/markdown; charset=utf-8", headers=headers)
    headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    return Response(text, media_type="text/html; charset=utf-8", headers=headers)


@runs.delete(
    "/{run_id}", status_code=204, response_class=Response, responses=error_responses(403, 404, 409, 422)
)
async def delete_run(run: RunDep, service: ServiceDep) -> Response:
    """The run with its events, checkpoints, receipts and artifacts; cancel a running run first."""
    await service.delete(run.run_id)
    return Response(status_code=204)


def create_router(settings: Settings) -> APIRouter:
    """POST /api/runs, built per app: its body's schema carries this server's question limit."""
    router = APIRouter(prefix="/api/runs", tags=["runs"])
    RunCreate = run_create_model(settings.max_question_chars)

    async def create_run(body: BaseModel, service: ServiceDep, principal: PrincipalDep) -> RunDetailPublic:
        """Start a run (yours); stream its events from /api/runs/{run_id}/events."""
        run = await service.start(body.question, body.options, principal)  # type: ignore[attr-defined]
        return await service.views.detail(run.run_id)

    # the body's model is built at run time; FastAPI reads the (postponed) annotation from here
    create_run.__annotations__["body"] = RunCreate
    router.post(
        "",
        status_code=201,
        response_model=RunDetailPublic,
        responses=error_responses(400, 401, 403, 413, 422, 429),
    )(create_run)
    return router
