"""The HTTP runner: durable research runs over HTTP — start, stream (SSE), cancel, resume, checkpoints,
receipts, artifacts — on SQLite (embedded default) or PostgreSQL. OpenAPI at /openapi.json, docs at /docs
(served by the app itself: no CDN).

    deepresearch serve [--host 127.0.0.1] [--port 8000]

This module builds the app from the routers of deepresearch/api/ (the runs' routes are in
deepresearch/api/runs.py) and serves it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import uvicorn
from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi_offline import FastAPIOffline

from config import Settings
from deepresearch.api.access import (
    BrowserGuard,
    HeadAsGet,
    access_policy,
)
from deepresearch.api.accounts import collections, session
from deepresearch.api.agent_protocol import mount_agent_protocol
from deepresearch.api.docs import document_api
from deepresearch.api.errors import BodyLimit, install_error_handlers, single_query_values
from deepresearch.api.mcp.http import mount_mcp
from deepresearch.api.metrics import install_metrics, ops_metrics
from deepresearch.api.ops import ops
from deepresearch.api.reading import reading
from deepresearch.api.runs import create_router, runs
from deepresearch.api.steering import steering
from deepresearch.api.ui import mount_ui
from deepresearch.engine.core import open_engine
from deepresearch.service.auth import Tokens, is_loopback
from deepresearch.service.limits import StreamSlots
from deepresearch.service.runs import RunService
from deepresearch.service.webhooks import WebhookNotifier
from deepresearch.store import DATABASE_ERRORS, open_persistence

logger = logging.getLogger("deepresearch.runner")

VERSION = "0.1.0"


def create_app(settings: Settings, bind_host: str = "127.0.0.1") -> FastAPI:
    """The runner for a server bound to `bind_host` (which decides whether tokens are required)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_engine(settings) as engine:
            service = RunService(engine, shutdown_grace_seconds=settings.shutdown_grace_seconds)
            app.state.service = service
            app.state.tokens = Tokens(engine.store)
            app.state.streams = StreamSlots(settings.max_streams_per_client)
            app.state.metrics = install_metrics(service, app.state.streams.open_count)
            webhooks = WebhookNotifier(settings)
            service.on_stopped.append(webhooks.run_stopped)
            if settings.recover_runs_on_startup:
                await service.replicas.recover()
            # streams wake when any replica appends an event (PostgreSQL LISTEN; SQLite: the 1 s poll)
            chores = [
                asyncio.create_task(service.store.watch_events(service.notifier.notify)),
                # a cancel asked on another replica reaches this one's runs within a poll
                asyncio.create_task(service.replicas.watch_cancels(), name="deliver cancels"),
            ]
            if settings.recover_runs_on_startup:
                chores.append(
                    asyncio.create_task(service.replicas.watch_orphans(), name="take over orphaned runs")
                )
            if settings.retention_days:
                chores.append(asyncio.create_task(_prune_periodically(service, settings.retention_days)))
            try:
                async with mcp.running():  # /mcp's session manager
                    yield
            finally:
                for chore in chores:
                    chore.cancel()
                    with suppress(asyncio.CancelledError):
                        await chore
                await service.shutdown()
                await webhooks.aclose()

    app = FastAPIOffline(
        dependencies=[Depends(single_query_values)],
        title="deepresearch runner",
        version=VERSION,
        lifespan=lifespan,
        description="Durable deep-research runs: start, stream, cancel, resume, fork. Every error answers "
        '`{"detail": ..., "errors"?: [...]}`.',
    )
    app.state.settings = settings
    app.state.access = policy = access_policy(settings, bind_host)
    mcp = mount_mcp(app, VERSION)  # the MCP server over streamable HTTP at /mcp (docs/mcp.md)
    app.include_router(create_router(settings))  # POST /api/runs: its body's schema depends on settings
    app.include_router(runs)
    app.include_router(reading)
    app.include_router(steering)
    app.include_router(session)
    app.include_router(collections)
    app.include_router(ops)
    app.include_router(ops_metrics)
    mount_agent_protocol(app)  # LangGraph's Agent Protocol at the root (docs/agent-protocol.md)
    mount_ui(app, settings)
    install_error_handlers(app)
    # documents are uploaded with PUT /api/collections/…: their own, larger limit
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_request_bytes,
        uploads=("/api/collections/", settings.max_upload_bytes),
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(policy.origins),
            allow_methods=["GET", "POST", "DELETE", "PATCH"],
            allow_headers=["Authorization", "Content-Type", "X-Requested-With", "Last-Event-ID", "X-Api-Key"],
        )
    app.add_middleware(HeadAsGet)
    # outermost: a foreign Host or a cross-site write is refused before anything else reads the request
    app.add_middleware(BrowserGuard, policy=policy)
    document_api(app)
    return app


async def _prune_periodically(service: RunService, days: float) -> None:
    """DEEPRESEARCH_RETENTION_DAYS: prune at start-up, then every hour, until the server stops."""
    while True:
        try:
            pruned = await service.prune(days)
        except DATABASE_ERRORS:
            logger.exception("pruning old runs failed; trying again in an hour")
        else:
            logger.info(
                "retention: %s run(s) pruned; database %s bytes, workspace %s bytes",
                len(pruned.deleted),
                pruned.database_bytes,
                pruned.workspace_bytes,
            )
        await asyncio.sleep(3600)


def serve_problem(settings: Settings, host: str) -> str | None:
    """Why this server must not start on `host`, or None: tokens are required there and none exists."""
    if not access_policy(settings, host).token_required or asyncio.run(_tokens_exist(settings)):
        return None
    where = "on loopback with DEEPRESEARCH_REQUIRE_TOKEN" if is_loopback(host) else f"on {host}"
    return (
        f"refusing to serve {where} without an API token: every request would be refused. Create one with "
        "`deepresearch token create NAME --admin`, then start the server again"
    )


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> int:
    if host in ("0.0.0.0", "::") and not settings.allowed_hosts:
        logger.warning(
            "serving on all interfaces: only loopback Host names are answered until the server's names "
            "are listed in DEEPRESEARCH_ALLOWED_HOSTS"
        )
    uvicorn.run(
        create_app(settings, bind_host=host),
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=int(settings.shutdown_grace_seconds) + 5,
    )
    return 0


async def _tokens_exist(settings: Settings) -> bool:
    async with open_persistence(settings.resolved_database_url) as persistence:
        return await Tokens(persistence.store).active_count() > 0
