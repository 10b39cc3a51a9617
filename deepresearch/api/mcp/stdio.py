"""``deepresearch mcp``: the MCP server over stdio, for hosts that start a command (Claude Desktop, VS Code).

The process is a runner like ``serve``: it opens the engine on the configured database, recovers runs a dead
process left behind, delivers cancels asked elsewhere, and executes the runs its host starts. stdout carries
only the protocol (logs go to stderr). Its user is the local one (``local``, as the CLI's and a tokenless
local client's runs), without the CLI's right to name server folders: the host is driven by a model.

When the host closes stdin, the runs this process executes go on to their end (up to
DEEPRESEARCH_MCP_RESEARCH_TIMEOUT_SECONDS), so a host that disconnects does not lose them; SIGTERM or Ctrl-C
stops them at their next checkpoint instead (interrupted, resumable: resume_research, or the next start).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from config import Settings
from deepresearch.api.mcp.tools import McpFrontEnd, build_mcp_server
from deepresearch.engine.core import open_engine
from deepresearch.service.auth import LOCAL_CLIENT, Principal
from deepresearch.service.runs import RunService

__all__ = ["STDIO_PRINCIPAL", "serve_stdio"]

logger = logging.getLogger(__name__)

STDIO_PRINCIPAL: Principal = LOCAL_CLIENT


async def serve_stdio(settings: Settings, version: str) -> int:
    """Serve MCP on stdin/stdout until the host closes stdin (then let this process's runs finish)."""
    async with open_engine(settings) as engine:
        service = RunService(engine, shutdown_grace_seconds=settings.shutdown_grace_seconds)
        front = McpFrontEnd(
            lambda: service, lambda _ctx: STDIO_PRINCIPAL, settings.mcp_research_timeout_seconds
        )
        server = build_mcp_server(front, version)
        chores = [asyncio.create_task(service.replicas.watch_cancels(), name="deliver cancels")]
        if settings.recover_runs_on_startup:
            await service.replicas.recover()
            chores.append(
                asyncio.create_task(service.replicas.watch_orphans(), name="take over orphaned runs")
            )
        main = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if main is not None:
            loop.add_signal_handler(signal.SIGTERM, main.cancel)
        try:
            await server.run_stdio_async()
            await _finish_runs(service, settings.mcp_research_timeout_seconds)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            for chore in chores:
                chore.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await chore
            await service.shutdown()
    return 0


async def _finish_runs(service: RunService, limit_seconds: float) -> None:
    """The host went away: the runs executing here go on to their end, within ``limit_seconds``."""
    runs = service.active_run_ids()
    if not runs:
        return
    logger.info("stdin closed: letting %s run(s) finish before exiting", len(runs))
    # never cancelled: that would tear a run down mid-call; past the limit, shutdown stops them properly
    waits = [asyncio.create_task(service.wait(run_id)) for run_id in runs]
    _, pending = await asyncio.wait(waits, timeout=limit_seconds)
    if pending:
        logger.warning(
            "%s run(s) still executing after %.0fs: stopping them",
            len(pending),
            limit_seconds,
        )
