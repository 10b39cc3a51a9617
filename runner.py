"""The HTTP runner: durable research runs over HTTP — start, stream (SSE), cancel, resume, checkpoints,
receipts, artifacts — on SQLite (embedded default) or PostgreSQL. OpenAPI at /docs.

    deepresearch serve [--host 127.0.0.1] [--port 8000]
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sse_starlette import EventSourceResponse, ServerSentEvent

from config import ResearchOptions, RunBudget, Settings, describe_validation_error
from deepresearch.service import CheckpointNotFound, RunConflict, RunService
from deepresearch.store import ACTIVE_STATUSES, RunNotFound, RunRecord
from deepresearch.ui import mount_ui
from deepresearch.workspace import Workspace, WorkspaceError
from stages import REPORT_STAGES

logger = logging.getLogger(__name__)


# --- request bodies ------------------------------------------------------------------------------
class OptionsIn(BaseModel):
    """Per-run options; anything omitted takes the server's default. Bounds as in ResearchOptions."""

    model_config = ConfigDict(extra="forbid")

    max_research_loops: int | None = Field(None, ge=1, le=10)
    queries_per_round: int | None = Field(None, ge=1, le=20)
    results_per_query: int | None = Field(None, ge=1, le=50)
    sources_to_fetch: int | None = Field(None, ge=1, le=100)
    reviewers: list[str] | None = None
    requires_critic_review: bool | None = None
    corpus_dir: str | None = None
    corpus_only: bool | None = None
    budget: RunBudget | None = None

    def merged_into(self, base: dict[str, Any]) -> dict[str, Any]:
        """These options over `base`; a budget is merged limit by limit (null removes a limit)."""
        values = {**base, **self.model_dump(exclude_none=True, exclude={"budget"})}
        if self.budget is not None:
            values["budget"] = {**base.get("budget", {}), **self.budget.model_dump(exclude_unset=True)}
        return values


class RunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    options: OptionsIn = Field(default_factory=OptionsIn)

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value.strip()


class ResumeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoint_id: str | None = None
    options: OptionsIn | None = None


# --- dependencies --------------------------------------------------------------------------------
def get_service(request: Request) -> RunService:
    return request.app.state.service  # type: ignore[no-any-return]


def get_settings(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


ServiceDep = Annotated[RunService, Depends(get_service)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


def _options(settings: Settings, base: dict[str, Any], overrides: OptionsIn | None) -> ResearchOptions:
    values = overrides.merged_into(base) if overrides else base
    try:
        options = ResearchOptions.model_validate(values)
    except ValidationError as exc:
        raise HTTPException(422, describe_validation_error(exc, "options")) from exc
    if options.corpus_dir and not Path(options.corpus_dir).is_dir():
        raise HTTPException(
            422, f"options.corpus_dir: folder {options.corpus_dir} does not exist on the server"
        )
    return options


async def _run_detail(service: RunService, settings: Settings, run: RunRecord) -> dict[str, Any]:
    checkpoints = await service.store.list_checkpoints(run.run_id)
    latest = {c.stage: c for c in checkpoints}
    stages = []
    for stage in REPORT_STAGES:
        record = latest.get(stage.key)
        status = "done" if record else "pending"
        if run.current_stage == stage.key and run.status in ACTIVE_STATUSES:
            status = "running"
        elif run.current_stage == stage.key and run.status == "failed":
            status = "failed"
        usage = (run.usage.get("by_stage") or {}).get(stage.key, {})
        stages.append(
            {
                "key": stage.key,
                "title": stage.title,
                "status": status,
                "tool_name": stage.tool_name,
                "summary": record.summary if record else "",
                "checkpoint_id": record.checkpoint_id if record else None,
                "tokens": usage.get("tokens", 0),
                "cost_usd": usage.get("cost_usd", 0.0),
            }
        )
    artifacts = await asyncio.to_thread(_list_artifacts, settings, run)
    report = next((a["path"] for a in artifacts if a["path"] == "deepresearch-report.md"), None)
    return {
        **run.to_dict(),
        "stages": stages,
        "checkpoint_count": len(checkpoints),
        "artifacts": artifacts,
        "report_path": report,
        "active_here": service.is_active_here(run.run_id),
    }


def _artifact_root(settings: Settings, run: RunRecord) -> Path | None:
    if not run.artifact_dir:
        return None
    return Workspace(settings.workspace_dir).resolve(run.artifact_dir)


def _list_artifacts(settings: Settings, run: RunRecord) -> list[dict[str, Any]]:
    root = _artifact_root(settings, run)
    if root is None or not root.is_dir():
        return []
    return [
        {"path": path.relative_to(root).as_posix(), "size": path.stat().st_size}
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    ]


def _artifact_file(settings: Settings, run: RunRecord, relative: str) -> Path:
    root = _artifact_root(settings, run)
    if root is None:
        raise HTTPException(404, "Artifact not found")
    try:
        target = Workspace(root).resolve(relative)
    except WorkspaceError as exc:
        raise HTTPException(404, f"Artifact not found: {exc}") from exc
    if not target.is_file():
        raise HTTPException(404, "Artifact not found")
    return target


# --- routes --------------------------------------------------------------------------------------
runs = APIRouter(prefix="/api/runs", tags=["runs"])


@runs.post("", status_code=201)
async def create_run(body: RunCreate, service: ServiceDep, settings: SettingsDep) -> dict[str, Any]:
    if len(body.question) > settings.max_question_chars:
        raise HTTPException(422, f"question: at most {settings.max_question_chars} characters")
    options = _options(settings, settings.default_option_values(), body.options)
    run = await service.start(body.question, options)
    return await _run_detail(service, settings, run)


@runs.get("")
async def list_runs(
    service: ServiceDep,
    status: Literal["queued", "running", "cancelled", "interrupted", "failed", "completed"] | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> dict[str, Any]:
    records = await service.store.list_runs(status=status, limit=limit + 1, offset=offset)
    return {
        "runs": [r.to_dict() for r in records[:limit]],
        "limit": limit,
        "offset": offset,
        "next_offset": offset + limit if len(records) > limit else None,
    }


@runs.get("/{run_id}")
async def get_run(run_id: str, service: ServiceDep, settings: SettingsDep) -> dict[str, Any]:
    return await _run_detail(service, settings, await service.store.get_run(run_id))


@runs.get("/{run_id}/events", response_class=EventSourceResponse)
async def stream_events(
    run_id: str,
    request: Request,
    service: ServiceDep,
    settings: SettingsDep,
    after: Annotated[int | None, Query(ge=0, description="replay events after this seq")] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    await service.store.get_run(run_id)
    start = after or 0
    if last_event_id is not None:
        if not last_event_id.strip().isdigit():
            raise HTTPException(422, "Last-Event-ID must be an event seq (a non-negative integer)")
        start = int(last_event_id)
    return EventSourceResponse(
        _event_stream(service, request, run_id, start), ping=settings.sse_heartbeat_seconds
    )


async def _event_stream(
    service: RunService, request: Request, run_id: str, start: int
) -> AsyncIterator[ServerSentEvent]:
    """Replay the log after `start`, then tail it; close after the terminal `end` of a stopped run.

    A client that goes away only ends this generator: the run goes on.
    """
    last = start
    while not await request.is_disconnected():
        batch = await service.store.list_events(run_id, after=last, limit=500)
        for event in batch:
            last = event.seq
            yield ServerSentEvent(
                data=json.dumps(event.to_dict(), ensure_ascii=False), event=event.type, id=str(event.seq)
            )
        if len(batch) < 500 and await _stopped(service, run_id, last):
            return
        if not batch:
            await service.notifier.wait(run_id, at_most_seconds=1.0)


async def _stopped(service: RunService, run_id: str, last: int) -> bool:
    """The run is not running anywhere and the client has every event of it."""
    run = await service.store.get_run(run_id)
    if run.status in ACTIVE_STATUSES or service.is_active_here(run_id):
        return False
    return not await service.store.list_events(run_id, after=last, limit=1)


@runs.post("/{run_id}/cancel", status_code=202)
async def cancel_run(run_id: str, service: ServiceDep) -> dict[str, Any]:
    run = await service.cancel(run_id)
    return {"run_id": run.run_id, "status": run.status, "cancel_requested": run.cancel_requested}


@runs.post("/{run_id}/resume", status_code=202)
async def resume_run(
    run_id: str, service: ServiceDep, settings: SettingsDep, body: ResumeRequest | None = None
) -> dict[str, Any]:
    body = body or ResumeRequest()
    run = await service.store.get_run(run_id)
    overrides = None
    if body.options is not None:
        overrides = _options(settings, run.options, body.options).model_dump()
    run = await service.resume(run_id, body.checkpoint_id, overrides)
    return {**run.to_dict(), "resumed_from": body.checkpoint_id or "latest"}


@runs.get("/{run_id}/checkpoints")
async def list_checkpoints(run_id: str, service: ServiceDep) -> dict[str, Any]:
    run = await service.store.get_run(run_id)
    records = await service.store.list_checkpoints(run_id)
    active = run.status in ACTIVE_STATUSES
    items = []
    for record in records:
        item = record.to_dict()
        item["status"] = "active" if active else run.status
        item["resumable"] = not active and bool(record.next)
        items.append(item)
    return {"run_id": run_id, "checkpoints": items}


@runs.get("/{run_id}/checkpoints/{checkpoint_id}/preview")
async def preview_checkpoint(run_id: str, checkpoint_id: str, service: ServiceDep) -> dict[str, Any]:
    return await service.preview(run_id, checkpoint_id)


@runs.get("/{run_id}/receipts")
async def list_receipts(
    run_id: str,
    service: ServiceDep,
    receipt_key: str | None = None,
    status: Literal["started", "succeeded", "failed"] | None = None,
) -> dict[str, Any]:
    await service.store.get_run(run_id)
    receipts = await service.store.list_receipts(run_id, receipt_key, status)
    return {"run_id": run_id, "receipts": [r.to_dict() for r in receipts]}


@runs.get("/{run_id}/artifacts")
async def list_artifacts(run_id: str, service: ServiceDep, settings: SettingsDep) -> dict[str, Any]:
    run = await service.store.get_run(run_id)
    artifacts = await asyncio.to_thread(_list_artifacts, settings, run)
    return {"run_id": run_id, "artifact_dir": run.artifact_dir, "artifacts": artifacts}


@runs.get("/{run_id}/artifacts/{path:path}")
async def get_artifact(run_id: str, path: str, service: ServiceDep, settings: SettingsDep) -> FileResponse:
    run = await service.store.get_run(run_id)
    target = _artifact_file(settings, run, path)
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        "X-Content-Type-Options": "nosniff",
    }
    return FileResponse(target, headers=headers)


@runs.get("/{run_id}/report")
async def get_report(
    run_id: str, service: ServiceDep, settings: SettingsDep, format: Literal["md", "html"] = "md"
) -> Response:
    run = await service.store.get_run(run_id)
    target = _artifact_file(settings, run, f"deepresearch-report.{format}")
    text = await asyncio.to_thread(target.read_text, "utf-8")
    if format == "md":
        return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")
    return Response(
        text,
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"},
    )


@runs.delete("/{run_id}", status_code=204)
async def delete_run(run_id: str, service: ServiceDep, settings: SettingsDep) -> Response:
    run = await service.store.get_run(run_id)
    root = _artifact_root(settings, run)
    await service.delete(run_id)
    if root is not None and root.is_dir():
        await asyncio.to_thread(shutil.rmtree, root)
    return Response(status_code=204)


ops = APIRouter(tags=["ops"])


@ops.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@ops.get("/readyz")
async def readyz(service: ServiceDep) -> dict[str, str]:
    try:
        await service.store.ping()
    except Exception as exc:  # readiness reports any database failure as "not ready"
        raise HTTPException(503, f"database not reachable: {type(exc).__name__}") from exc
    return {"status": "ready", "engine": service.engine.settings.engine_mode}


# --- the app -------------------------------------------------------------------------------------
def create_app(settings: Settings) -> FastAPI:
    from agent import open_engine

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_engine(settings) as engine:
            service = RunService(engine, shutdown_grace_seconds=settings.shutdown_grace_seconds)
            app.state.service = service
            app.state.settings = settings
            if settings.recover_runs_on_startup:
                await service.recover()
            try:
                yield
            finally:
                await service.shutdown()

    app = FastAPI(
        title="deepresearch runner",
        version="0.1.0",
        lifespan=lifespan,
        description="Durable deep-research runs: start, stream, cancel, resume, fork.",
    )
    app.include_router(runs)
    app.include_router(ops)
    mount_ui(app, settings)

    @app.exception_handler(RunNotFound)
    async def _run_not_found(request: Request, exc: RunNotFound) -> JSONResponse:
        return JSONResponse({"detail": "Run not found"}, status_code=404)

    @app.exception_handler(CheckpointNotFound)
    async def _checkpoint_not_found(request: Request, exc: CheckpointNotFound) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(RunConflict)
    async def _conflict(request: Request, exc: RunConflict) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    return app


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> int:
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=int(settings.shutdown_grace_seconds) + 5,
    )
    return 0
