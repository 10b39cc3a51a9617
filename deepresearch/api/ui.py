"""Serves the bundled research workbench (research-ui/) at /research, with a strict CSP.

Besides the static files it answers ``GET /research/config.json``: what the workbench needs to know before a
run exists — the engine and model, the server's default run options and their bounds, the reviewers, the
question and upload limits and the graph's stages — so the workbench copies none of them and labels the
extractive engine honestly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from config import Settings
from deepresearch.options import DEFAULT_REVIEWERS, ResearchOptions, option_limits
from deepresearch.service.collections import MEDIA_TYPES
from stages import GRAPH_NODES

UI_DIR = Path(__file__).resolve().parents[2] / "research-ui"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


class NodePublic(BaseModel):
    key: str
    title: str
    short: str
    description: str
    headline: str
    business: bool = Field(description="A business stage (ends in a `checkpoint` event); else the loop.")
    artifacts: list[str] = Field(description="Files the stage writes into the run's workspace.")


class UploadLimits(BaseModel):
    """What an upload into My documents may be (PUT /api/collections/{name}/documents/{file} enforces it)."""

    max_bytes: int = Field(description="Largest document a user may upload (DEEPRESEARCH_MAX_UPLOAD_BYTES).")
    types: list[str] = Field(description="File extensions the document search indexes, e.g. '.md'.")


class DefaultOptions(ResearchOptions):
    """The server's default run options as a client sees them: the server's own folder
    (DEEPRESEARCH_CORPUS_DIR) is left out, so `corpus_only` may be on without a collection named here."""

    def _corpus_only_needs_corpus(self) -> DefaultOptions:
        # same name: replaces ResearchOptions' rule, which the hidden folder satisfies on the server
        return self


class UiConfig(BaseModel):
    """The workbench's start-up facts; no secrets (no keys, no URLs of providers)."""

    engine: str
    model: str | None
    defaults: DefaultOptions
    server_documents: bool = Field(
        description="A run that names no collection (options.corpus) searches the server's own documents "
        "(DEEPRESEARCH_CORPUS_DIR); with defaults.corpus_only, only them."
    )
    limits: dict[str, dict[str, int | float]] = Field(
        description="JSON Schema bounds of each numeric option."
    )
    reviewers: list[str]
    max_question_chars: int
    uploads: UploadLimits
    stages: list[NodePublic] = Field(description="The graph's nodes in order (business stages + reflection).")


def ui_config(settings: Settings) -> UiConfig:
    engine = settings.engine_mode
    return UiConfig(
        engine=engine,
        model=settings.openai_model_name if engine == "llm" else None,
        # the server's own default folder is the operator's business, not the page's
        defaults=DefaultOptions.model_validate(settings.default_option_values() | {"corpus_dir": None}),
        server_documents=settings.corpus_dir is not None,
        limits=option_limits(),
        reviewers=list(DEFAULT_REVIEWERS),
        max_question_chars=settings.max_question_chars,
        uploads=UploadLimits(max_bytes=settings.max_upload_bytes, types=sorted(MEDIA_TYPES)),
        stages=[NodePublic(**_node(n)) for n in GRAPH_NODES],
    )


def _node(node: Any) -> dict[str, Any]:
    # the artifacts are stages.py's: the workbench reloads them when their stage's result arrives
    return {name: getattr(node, name) for name in NodePublic.model_fields} | {
        "artifacts": list(node.artifacts)
    }


class _SecurityHeaders:
    """CSP and friends on the workbench's files. Plain ASGI (not BaseHTTPMiddleware): it must not wrap
    `receive` in a task group, which would turn a body-limit error into an ExceptionGroup."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/research"):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("Content-Security-Policy", CSP)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "no-referrer")
                if path.endswith(("/", ".html", ".js", ".css", ".json")):
                    # a tool kept open all day: a reload must pick up a new release at once
                    headers.setdefault("Cache-Control", "no-cache")
            await send(message)

        await self.app(scope, receive, with_headers)


def mount_ui(app: FastAPI, settings: Settings) -> None:
    if not (UI_DIR / "index.html").is_file():
        return

    app.add_middleware(_SecurityHeaders)

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/research/")

    @app.get("/research/config.json", tags=["workbench"], response_model=UiConfig)
    async def workbench_config() -> UiConfig:
        """What the workbench reads before any run exists: engine, defaults, bounds, stages."""
        return ui_config(settings)

    app.mount("/research", StaticFiles(directory=UI_DIR, html=True), name="research-ui")
