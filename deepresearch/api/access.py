"""Who may talk to the HTTP runner, and from where (docs/security.md).

- :func:`request_principal` (a FastAPI dependency): the bearer token (``Authorization`` header), or the
  workbench's session (an HttpOnly cookie holding a session id, never the token) names the user; without
  either, a loopback server that does not require tokens treats the client as the local owner, and any
  other server answers 401.
- :class:`BrowserGuard` (plain ASGI): answers only the Host names this server is for (a DNS-rebinding page
  gets 421), refuses state-changing requests a browser sends from another origin (403: ``Sec-Fetch-Site``
  cross-site or same-site, or a foreign ``Origin``; the rules of Go 1.25's ``http.CrossOriginProtection``)
  while clients that are not browsers need nothing extra, and puts ``nosniff`` on every response.
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
from deepresearch.service.views import RunViews
from deepresearch.store import RunRecord

SESSION_COOKIE = "deepresearch_session"
SECURE_SESSION_COOKIE = "__Host-deepresearch_session"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})


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


# documented in OpenAPI as the two ways to present who you are; auto_error=False: the rule below decides
_bearer = HTTPBearer(auto_error=False, description="An API token: `deepresearch token create NAME`.")
_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    auto_error=False,
    description=(
        f"A workbench session, set by POST /api/session (`{SECURE_SESSION_COOKIE}` when served over HTTPS)."
    ),
)
# the LangGraph SDKs send their key in this header (docs/agent-protocol.md): the same tokens
_api_key = APIKeyHeader(
    name="x-api-key", auto_error=False, description="An API token, as the LangGraph SDKs send it."
)


def session_cookie_name(request: Request) -> str:
    """Over HTTPS the cookie is ``__Host-`` prefixed: the browser then takes it only from this very host,
    Secure and for Path=/, so a sibling subdomain cannot plant one (cookie tossing)."""
    return SECURE_SESSION_COOKIE if request.url.scheme == "https" else SESSION_COOKIE


async def session_cookie(request: Request, plain: Annotated[str | None, Depends(_cookie)]) -> str | None:
    """The session id this request carries: over HTTPS only the ``__Host-`` cookie counts."""
    return request.cookies.get(SECURE_SESSION_COOKIE) if request.url.scheme == "https" else plain


def unauthorised(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


async def request_principal(
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    session: Annotated[str | None, Depends(session_cookie)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> Principal:
    """The user this request acts as; 401 when a token is required and missing, or when what is given (a
    token, an Authorization header of another scheme, a session cookie) is not valid: never ignored."""
    policy: AccessPolicy = request.app.state.access
    tokens: Tokens = request.app.state.tokens
    if bearer is not None or api_key:
        principal = await tokens.authenticate(bearer.credentials if bearer is not None else api_key or "")
        if principal is None:
            raise unauthorised("the API token is unknown or revoked")
        return principal
    if "authorization" in request.headers:
        raise unauthorised("the Authorization header must be `Bearer <token>` (an API token)")
    if session:
        principal = await tokens.session_principal(session)
        if principal is None:
            raise unauthorised("the session has ended (signed out, expired or its token revoked); sign in")
        return principal
    if policy.token_required:
        raise unauthorised(
            "an API token is required: send `Authorization: Bearer <token>` (the operator creates one "
            "with `deepresearch token create NAME`)"
        )
    return LOCAL_CLIENT


PrincipalDep = Annotated[Principal, Depends(request_principal)]


async def get_service(request: Request) -> RunService:  # async: no thread hop
    return request.app.state.service  # type: ignore[no-any-return]


ServiceDep = Annotated[RunService, Depends(get_service)]


def get_views(service: ServiceDep) -> RunViews:
    return service.views


ViewsDep = Annotated[RunViews, Depends(get_views)]
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
        if scope["method"] in _SAFE_METHODS:
            return None
        return self._cross_origin_refusal(headers, host)

    def _cross_origin_refusal(self, headers: Headers, host: str) -> tuple[int, str] | None:
        """A state-changing request (any path) a browser sent from another origin: 403. Go 1.25's
        ``http.CrossOriginProtection`` rules: an ``Origin`` in DEEPRESEARCH_CORS_ORIGINS passes; else
        ``Sec-Fetch-Site`` decides (same-origin and none pass: this server's own page, or the user typing
        in the address bar; same-site, cross-site and anything else are refused); without it (a browser from
        before 2023) the ``Origin``'s host must be the ``Host``. A request with neither header is not a
        browser's — browsers send one of them on every unsafe request — so a plain client (curl, httpx)
        needs no extra header or body; a token-less loopback server stays protected, since a page elsewhere
        can only reach it through a browser, which names where the page is."""
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() in self.policy.origins:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None:
            if site.strip().lower() in ("same-origin", "none"):
                return None
            return 403, (
                "cross-site request refused: a page of another origin sent it (Sec-Fetch-Site); the operator "
                "can allow that page's origin with DEEPRESEARCH_CORS_ORIGINS"
            )
        if origin is None or _origin_host(origin) == host.lower():
            return None
        return 403, (
            "cross-origin request refused (its Origin is not this server); the operator can allow an origin "
            "with DEEPRESEARCH_CORS_ORIGINS"
        )


def _origin_host(origin: str) -> str:
    """host[:port] of an Origin header ("null" and anything malformed: "", which matches no Host)."""
    try:
        parsed = urlsplit(origin.strip())
    except ValueError:
        return ""
    return parsed.netloc.lower() if parsed.scheme in ("http", "https") else ""


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
