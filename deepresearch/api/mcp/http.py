"""``/mcp`` on ``deepresearch serve``: the MCP server (deepresearch/api/mcp/tools.py) over streamable HTTP.

Who is asking is decided exactly as for /api (deepresearch/api/access.py): a bearer token names the user; a
loopback server that does not require tokens takes a client without one as the local user; anything else is
401 before the MCP layer reads the request. (The workbench's session cookie is not taken here: MCP clients
send a header.) The principal travels in the request's ASGI scope to the tools, which act as that user:
each user sees only their own runs. The SDK's session manager runs stateless (no session state, so any
replica can answer any request) and streams each response, so progress reaches the host as it happens.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from deepresearch.api.access import request_principal
from deepresearch.service.auth import Principal
from deepresearch.service.contracts import ErrorPublic

# The MCP SDK (and our tools on it) is imported when /mcp gets its first request, not at start-up: it is
# about a second of a server's start-up CPU, and most servers never see an MCP client.
if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["McpEndpoint", "mount_mcp"]

PRINCIPAL_KEY = "deepresearch.principal"
"""The ASGI scope key that carries the authenticated principal from the endpoint to the tools."""


def scope_principal(ctx: Context) -> Principal:
    """The principal the endpoint authenticated for this request."""
    from mcp.server.mcpserver.exceptions import ToolError

    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):
        raise ToolError("this request was not authenticated")  # only reachable past the endpoint: a bug
    return principal


class McpEndpoint:
    """The ASGI endpoint at /mcp: authenticate as /api does, then hand the request to the SDK. The SDK's
    server and session manager are built at the first request and run until the app stops."""

    def __init__(self, app: FastAPI, version: str) -> None:
        self._app = app
        self._version = version
        self._manager: StreamableHTTPSessionManager | None = None
        self._group: TaskGroup | None = None
        self._lock = asyncio.Lock()

    def _build(self) -> StreamableHTTPSessionManager:
        from mcp.server.transport_security import TransportSecuritySettings

        from deepresearch.api.mcp.tools import McpFrontEnd, build_mcp_server

        app = self._app
        settings = app.state.settings
        front = McpFrontEnd(lambda: app.state.service, scope_principal, settings.mcp_research_timeout_seconds)
        server = build_mcp_server(front, self._version)
        # builds the session manager; the Host and Origin checks are BrowserGuard's, for every route alike
        server.streamable_http_app(
            stateless_http=True,
            max_request_body_size=settings.max_request_bytes,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server.session_manager

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The app's lifetime (entered by its lifespan): the task group the session manager runs in once
        built, cancelled when the app stops."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    async def _started(self) -> StreamableHTTPSessionManager:
        async with self._lock:
            if self._manager is None:
                if self._group is None:
                    raise RuntimeError("/mcp is served only while the app runs (its lifespan)")
                # importing the SDK is about a second of CPU: in a thread, so the loop keeps serving
                manager = await asyncio.to_thread(self._build)
                await self._group.start(self._run, manager)
                self._manager = manager
            return self._manager

    @staticmethod
    async def _run(manager: StreamableHTTPSessionManager, *, task_status: TaskStatus[Any]) -> None:
        async with manager.run():  # the session manager's task group, in a task of the app's lifetime
            task_status.started()
            await anyio.sleep_forever()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await request_principal(request, _bearer(request), session=None, api_key=None)
        except HTTPException as exc:
            body = ErrorPublic(detail=str(exc.detail)).model_dump(exclude_none=True)
            await JSONResponse(body, status_code=exc.status_code, headers=exc.headers)(scope, receive, send)
            return
        manager = await self._started()
        await manager.handle_request({**scope, PRINCIPAL_KEY: principal}, receive, send)


def _bearer(request: Request) -> HTTPAuthorizationCredentials | None:
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials.strip())


def mount_mcp(app: FastAPI, version: str) -> McpEndpoint:
    """Serve MCP at /mcp of `app` (whose lifespan must enter the endpoint's ``running()``)."""
    endpoint = McpEndpoint(app, version)
    app.add_route("/mcp", endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    return endpoint
