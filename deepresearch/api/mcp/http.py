"""``/mcp`` on ``deepresearch serve``: the MCP server (deepresearch/api/mcp/tools.py) over streamable HTTP.

Who is asking is decided exactly as for /api (deepresearch/api/access.py): a bearer token names the user; a
loopback server that does not require tokens takes a client without one as the local user; anything else is
401 before the MCP layer reads the request. (The workbench's session cookie is not taken here: MCP clients
send a header.) The principal travels in the request's ASGI scope to the tools, which act as that user:
each user sees only their own runs. The SDK's session manager runs stateless (no session state, so any
replica can answer any request) and streams each response, so progress reaches the host as it happens.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI, HTTPException
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from deepresearch.api.access import request_principal
from deepresearch.api.mcp.tools import McpFrontEnd, build_mcp_server
from deepresearch.service.auth import Principal
from deepresearch.service.contracts import ErrorPublic

__all__ = ["McpEndpoint", "mount_mcp"]

PRINCIPAL_KEY = "deepresearch.principal"
"""The ASGI scope key that carries the authenticated principal from the endpoint to the tools."""


def scope_principal(ctx: Context) -> Principal:
    """The principal the endpoint authenticated for this request."""
    request = ctx.request_context.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):
        raise ToolError("this request was not authenticated")  # only reachable past the endpoint: a bug
    return principal


class McpEndpoint:
    """The ASGI endpoint at /mcp: authenticate as /api does, then hand the request to the SDK."""

    def __init__(self, app: FastAPI, version: str) -> None:
        settings = app.state.settings
        front = McpFrontEnd(lambda: app.state.service, scope_principal, settings.mcp_research_timeout_seconds)
        self.server = build_mcp_server(front, version)
        # builds the session manager; the Host and Origin checks are BrowserGuard's, for every route alike
        self.server.streamable_http_app(
            stateless_http=True,
            max_request_body_size=settings.max_request_bytes,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.manager = self.server.session_manager

    def running(self) -> AbstractAsyncContextManager[None]:
        """The session manager's task group: entered for the app's lifetime (its lifespan)."""
        return self.manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await request_principal(request, _bearer(request), session=None, api_key=None)
        except HTTPException as exc:
            body = ErrorPublic(detail=str(exc.detail)).model_dump(exclude_none=True)
            await JSONResponse(body, status_code=exc.status_code, headers=exc.headers)(scope, receive, send)
            return
        await self.manager.handle_request({**scope, PRINCIPAL_KEY: principal}, receive, send)


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
