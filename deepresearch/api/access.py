"""Who may talk to the HTTP runner, and from where (docs/security.md).

- :func:`request_principal` (a FastAPI dependency): the bearer token (``Authorization`` header, or the
  workbench's HttpOnly session cookie) names the user; without one, a loopback server that does not require
  tokens treats the client as the local owner, and any other server answers 401.
- :class:`BrowserGuard` (plain ASGI): answers only the Host names this server is for (a DNS-rebinding page
  gets 421), refuses state-changing requests that a cross-site page could send (403: a foreign ``Origin``;
  a POST with neither a JSON content type, an ``X-Requested-With`` header nor a bearer token), and puts
  ``nosniff`` on every response.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Path, Request
from fastapi.security import APIKeyCookie, APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from config import Settings
from deepresearch.service.auth import LOCAL_CLIENT, Principal, Tokens, is_loopback
from deepresearch.service.contracts import ErrorPublic
from deepresearch.service.runs import RunService
from deepresearch.store import RunRecord

SESSION_COOKIE = "deepresearch_token"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
# where the writes are: our API, MCP, and the Agent Protocol at the root (deepresearch/api/agent_protocol/)
GUARDED_PATHS = ("/api/", "/mcp", "/assistants", "/threads", "/runs", "/store")


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    token_required: bool
    hosts: frozenset[str]
    any_host: bool
    origins: frozenset[str]


def access_policy(settings: Settings, bind_host: str) -> AccessPolicy:
    """Tokens are required off loopback (or when configured); loopback names and the bind address are
    always answered, other Host names only when listed."""
    hosts = {h.lower().strip("[]") for h in settings.allowed_hosts if h != "*"}
    if bind_host not in _WILDCARD_BINDS:
        hosts.add(bind_host.lower().strip("[]"))
    return AccessPolicy(
        token_required=settings.require_token or not is_loopback(bind_host),
        hosts=frozenset(hosts),
        any_host="*" in settings.allowed_hosts,
        origins=frozenset(o.rstrip("/").lower() for o in settings.cors_origins),
    )


# documented in OpenAPI as the two ways to present a token; auto_error=False: the rule below decides
_bearer = HTTPBearer(auto_error=False, description="An API token: `deepresearch token create NAME`.")
_cookie = APIKeyCookie(
    name=SESSION_COOKIE, auto_error=False, description="Set by POST /api/session (the workbench)."
)
# the LangGraph SDKs send their key in this header (docs/agent-protocol.md): the same tokens
_api_key = APIKeyHeader(
    name="x-api-key", auto_error=False, description="An API token, as the LangGraph SDKs send it."
)


def unauthorised(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


async def request_principal(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    cookie: Annotated[str | None, Depends(_cookie)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> Principal:
    """The user this request acts as; 401 when a token is required and missing, or given and not valid."""
    policy: AccessPolicy = request.app.state.access
    token = bearer.credentials if bearer else api_key or cookie
    if not token:
        if policy.token_required:
            raise unauthorised(
                "an API token is required: send `Authorization: Bearer <token>` (the operator creates one "
                "with `deepresearch token create NAME`)"
            )
        return LOCAL_CLIENT
    tokens: Tokens = request.app.state.tokens
    principal = await tokens.authenticate(token)
    if principal is None:
        raise unauthorised("the API token is unknown or revoked")
    return principal


PrincipalDep = Annotated[Principal, Depends(request_principal)]


def get_service(request: Request) -> RunService:
    return request.app.state.service  # type: ignore[no-any-return]


ServiceDep = Annotated[RunService, Depends(get_service)]
# any id that is not a run's is simply not found: 404, like a deleted one
RunId = Annotated[str, Path(description="The run's id (32 hex digits).")]


async def visible_run(run_id: RunId, service: ServiceDep, principal: PrincipalDep) -> RunRecord:
    """The path's run, if this client may see it: another user's run is 404, like a missing one."""
    return await service.visible_run(run_id, principal)


RunDep = Annotated[RunRecord, Depends(visible_run)]


class BrowserGuard:
    """Host allowlist, cross-site request refusal and nosniff, before any route runs."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, detail = refusal
            body = ErrorPublic(detail=detail).model_dump(exclude_none=True)
            response = JSONResponse(body, status_code=status, headers={"X-Content-Type-Options": "nosniff"})
            await response(scope, receive, send)
            return

        async def with_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).setdefault("X-Content-Type-Options", "nosniff")
            await send(message)

        await self.app(scope, receive, with_nosniff)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        host = headers.get("host", "")
        name = _host_name(host)
        if not name:
            return 400, "a Host header is required"
        if not (self.policy.any_host or is_loopback(name) or name in self.policy.hosts):
            return 421, (
                f"this server does not answer for Host {name!r}; the operator can allow it with "
                "DEEPRESEARCH_ALLOWED_HOSTS"
            )
        if scope["method"] in _SAFE_METHODS or not scope["path"].startswith(GUARDED_PATHS):
            return None  # every write is under these (elsewhere a POST is simply not allowed: 405)
        origin = headers.get("origin")
        if origin is not None and not self._same_or_allowed(origin, scope, host):
            return 403, (
                f"cross-origin request from {origin!r} refused; the operator can allow an origin with "
                "DEEPRESEARCH_CORS_ORIGINS"
            )
        # Only a POST can be a "simple" cross-site request that skips the CORS preflight (a form, or fetch
        # with a form content type); DELETE/PUT/PATCH from another page always need a preflight, which fails.
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if (
            scope["method"] == "POST"
            and content_type != "application/json"
            and not ("x-requested-with" in headers or "authorization" in headers)
        ):
            return 403, (
                "a state-changing request needs a JSON body (Content-Type: application/json; an empty body "
                "will do where none is read), an X-Requested-With header or a bearer token: this keeps "
                "other web pages from sending it"
            )
        return None

    def _same_or_allowed(self, origin: str, scope: Scope, host: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.policy.origins:
            return True
        scheme = scope.get("scheme", "http")
        return origin == f"{scheme}://{host.lower()}"


def _host_name(host: str) -> str:
    """The name in a Host header, without the port ("[::1]:8000" → "::1")."""
    if not host:
        return ""
    try:
        parsed = urlsplit(f"//{host}")
        return (parsed.hostname or "").lower()
    except ValueError:
        return ""


class HeadAsGet:
    """HEAD answers like GET without the body (RFC 9110 9.3.2), for health checkers and link probes;
    FastAPI's GET routes alone answer HEAD with 405. An event stream has no end to measure: not for it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or scope["path"].endswith("/events"):
            await self.app(scope, receive, send)
            return
        finished = False

        async def headers_only(message: Message) -> None:
            nonlocal finished
            if finished:
                return
            if message["type"] == "http.response.body":
                finished = not message.get("more_body", False)
                if finished:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
