"""A connection to one provider MCP server, for one run execution: opened on its first call, closed with the
run's tools.

The SDK's transports hold anyio task groups and cancel scopes, which must be entered and left by one task; a
run's calls come from many (each tool call runs in a shielded task of its own). So each connection lives in a
task of its own, which opens the client, hands it over and keeps it until the connection is closed; calls
from any task share it (requests are multiplexed by id). A connection that breaks is opened again by the
next call, a bounded number of times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult

from deepresearch.mcpclient.servers import McpServer

__all__ = ["McpConnection", "McpFailure"]

logger = logging.getLogger(__name__)

MAX_STARTS = 3
"""Connections per server and run execution: the first, and two more after it broke."""
CLOSE_SECONDS = 5.0
_MESSAGE_CHARS = 300


class McpFailure(Exception):
    """A provider server failed: it could not be started or reached, did not answer in time, or answered an
    error. ``str()`` names the server; ``reason`` is the message alone."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"mcp:{server}: {reason}")
        self.server = server
        self.reason = reason

    def __reduce__(self) -> tuple[type[McpFailure], tuple[str, str]]:
        return (type(self), (self.server, self.reason))


class McpConnection:
    """One server's connection (see the module's docstring). ``timeout``: per call, connecting included."""

    def __init__(self, server: McpServer, timeout: float) -> None:
        self.server = server
        self.timeout = server.timeout_seconds or timeout
        self._lock = asyncio.Lock()
        self._ready: asyncio.Future[Client] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._starts = 0
        self._last_failure = ""

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """The tool's result, an error result included (the caller reads ``is_error``); McpFailure when the
        server cannot be reached, fails the request or takes longer than the timeout."""
        name = self.server.name
        try:
            async with asyncio.timeout(self.timeout):
                client = await self._client()
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            raise McpFailure(name, f"{tool} did not answer within {self.timeout:g}s") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._last_failure = f"the connection closed during {tool}"
                await self._broken()
                raise McpFailure(name, f"the connection closed during {tool} (did it exit?)") from None
            raise McpFailure(name, f"{tool} failed: {_short(exc.message)}") from None
        except McpFailure:
            raise
        # the transports' own failures: a dead pipe, a refused or reset connection, a malformed answer
        except (OSError, httpx2.HTTPError, ValueError, RuntimeError) as exc:
            self._last_failure = f"{tool} failed: {_describe(exc)}"
            await self._broken()
            raise McpFailure(name, self._last_failure) from None

    async def aclose(self) -> None:
        async with self._lock:
            await self._close_current()

    async def _client(self) -> Client:
        async with self._lock:
            if self._task is None or self._task.done():
                if self._starts >= MAX_STARTS:
                    raise McpFailure(
                        self.server.name,
                        f"not connecting again after {MAX_STARTS} tries; the last: {self._last_failure}",
                    )
                await self._close_current()
                self._starts += 1
                loop = asyncio.get_running_loop()
                self._ready = loop.create_future()
                self._stop = asyncio.Event()
                self._task = asyncio.create_task(
                    self._hold(self._ready, self._stop), name=f"mcp-{self.server.name}"
                )
            ready = self._ready
        assert ready is not None
        # shielded: a caller that times out must not cancel the connection that others share
        return await asyncio.shield(ready)

    async def _broken(self) -> None:
        """The connection failed under a call: the next call opens a new one."""
        async with self._lock:
            await self._close_current()

    async def _close_current(self) -> None:
        task, stop = self._task, self._stop
        self._task = self._stop = None
        if task is None or stop is None:
            return
        stop.set()
        done, _ = await asyncio.wait([task], timeout=CLOSE_SECONDS)
        if not done:
            task.cancel()
            await asyncio.wait([task], timeout=CLOSE_SECONDS)

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """The connection's task: open the client, hand it over, keep it until ``stop``."""
        try:
            async with self._open() as client:
                ready.set_result(client)
                await stop.wait()
        except Exception as exc:  # a foreign server and transport: any failure of theirs is its failure
            reason = f"could not connect ({self.server.where}): {_describe(exc)}"
            self._last_failure = reason
            failure = McpFailure(self.server.name, reason)
            if not ready.done():
                ready.set_exception(failure)
            else:
                self._last_failure = f"its connection ended: {_describe(exc)}"
                logger.warning("MCP server %s: %s", self.server.name, self._last_failure)
        finally:
            if not ready.done():
                ready.set_exception(McpFailure(self.server.name, "the connection was closed"))
            # nobody may await it any more (a run that ended): mark a stored failure as seen
            if ready.done() and not ready.cancelled():
                ready.exception()

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        server = self.server
        # provider calls are never served from a cache: each one is a receipt's call
        if server.url is not None:
            timeout = httpx2.Timeout(self.timeout)
            async with (
                create_mcp_http_client(headers=server.headers or None, timeout=timeout) as http,
                Client(streamable_http_client(server.url, http_client=http), cache=None) as client,
            ):
                yield client
            return
        assert server.command is not None
        params = StdioServerParameters(
            command=server.command, args=list(server.args), env=server.env or None, cwd=server.cwd
        )
        async with Client(stdio_client(params), cache=None) as client:
            yield client


def _describe(exc: BaseException) -> str:
    """The first real failure inside task-group wrappers, in one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return _short(f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"
