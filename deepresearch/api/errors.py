"""One error shape for every HTTP failure, and the OpenAPI entries that document them.

Every 4xx/5xx body is an :class:`~deepresearch.service.contracts.ErrorPublic`:
``{"detail": "...", "errors": [...]}``. A refused request raises a
:class:`~deepresearch.errors.DeepResearchError`, which carries its status; one handler answers them all.
Validation errors never echo the rejected input back (a NaN or a lone surrogate cannot be encoded as JSON).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from config import error_message
from deepresearch.errors import DeepResearchError
from deepresearch.service.contracts import ErrorPublic, FieldError

logger = logging.getLogger(__name__)

DESCRIPTIONS = {
    400: "Malformed request.",
    401: "An API token is required, or the one given is unknown or revoked.",
    403: "Refused: a write a browser sent from another origin (Sec-Fetch-Site or a foreign Origin).",
    404: "No such run, checkpoint, artifact, collection or document (or not yours).",
    409: "The run's state does not allow this now (the message says what to do first).",
    413: "The request body is larger than the server accepts.",
    415: "Not a document type that can be searched, or its bytes are not what its name says.",
    422: "Invalid input; `errors` names each bad field.",
    429: "Too many requests for now; the message says which limit.",
    503: "The database cannot be reached, or no connection to it came free in time (Retry-After says when"
    " to try again).",
}


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses, all with the ErrorPublic body."""
    return {code: {"model": ErrorPublic, "description": DESCRIPTIONS[code]} for code in codes}


def _error(status: int, detail: str, errors: list[FieldError] | None = None) -> JSONResponse:
    body = ErrorPublic(detail=detail, errors=errors).model_dump(exclude_none=True)
    return JSONResponse(body, status_code=status)


def _loc(parts: Any) -> list[str | int]:
    return [part if isinstance(part, int) else _printable(str(part)) for part in parts]


def _printable(text: str) -> str:
    # a field name taken from the request (an unknown key) may hold a lone surrogate
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(errors: list[FieldError]) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e.loc[1:]) or e.loc[0]}: {e.msg}" for e in errors)


def _allowed_methods(request: Request) -> list[str]:
    """The methods the OpenAPI document lists for this path (what a client was told it may use). As in
    OpenAPI, a concrete path wins over a templated one that also matches it: /assistants/search is that
    POST route's, not an /assistants/{assistant_id} whose id is "search"."""
    app = request.app
    templates: list[tuple[re.Pattern[str], int, list[str]]] | None
    templates = getattr(app.state, "allow_templates", None)
    if templates is None:
        templates = [
            (
                re.compile("^" + re.sub(r"\\{[^}/]+\\}", "[^/]+", re.escape(path)) + "$"),
                path.count("{"),
                list(ops),
            )
            for path, ops in app.openapi()["paths"].items()
        ]
        app.state.allow_templates = templates
    path = request.url.path
    matches = [(params, methods) for pattern, params, methods in templates if pattern.match(path)]
    fewest = min((params for params, _ in matches), default=0)
    return sorted({m.upper() for params, methods in matches if params == fewest for m in methods})


LIST_PARAMETERS = frozenset({"stream_mode"})
"""Query parameters that are lists (the Agent Protocol's join stream): given once per value."""


async def single_query_values(request: Request) -> None:
    """A query parameter given twice is refused: which one would count is nobody's guess. (The
    dependencies here are ``async def`` though they never wait: FastAPI runs a plain ``def`` dependency in
    its thread pool, a thread hop per request - measurable CPU on every poll of a run.)"""
    params = request.query_params
    repeated = sorted({key for key in params if len(params.getlist(key)) > 1 and key not in LIST_PARAMETERS})
    if repeated:
        raise RequestValidationError(
            [{"loc": ("query", key), "msg": "given more than once", "type": "repeated"} for key in repeated]
        )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            FieldError(loc=_loc(e.get("loc", ())), msg=_printable(error_message(e)), type=e["type"])
            for e in exc.errors()
        ]
        return _error(422, describe(errors) or "invalid request", errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, str(exc.detail))
        if exc.headers:
            response.headers.update(exc.headers)
        if exc.status_code == 405:
            # Starlette names only the first route that matched the path; a path served by several
            # routes (GET and POST /api/runs) allows all their methods
            response.headers["Allow"] = ", ".join(_allowed_methods(request))
        return response

    @app.exception_handler(DeepResearchError)
    async def _refused(request: Request, exc: DeepResearchError) -> JSONResponse:
        if exc.status >= 500 and exc.server_fault:
            # answered here, not re-raised by Starlette: the traceback is logged here
            logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
            return _error(exc.status, _internal(exc))
        if exc.status >= 500:  # busy for now (ServerBusy): what and when to retry, no traceback
            logger.warning("%s %s answered %s: %s", request.method, request.url.path, exc.status, exc)
        errors = None
        if exc.field:
            parts = exc.field.split(".")
            # a path parameter is named as such ("path.name"); everything else is in the body
            loc: list[str | int] = parts if parts[0] == "path" else ["body", *parts]
            errors = [FieldError(loc=loc, msg=exc.reason, type="value_error")]
        response = _error(exc.status, exc.detail, errors)
        response.headers.update(exc.headers())
        return response

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises after this answer, so the server logs the traceback at ERROR once.
        return _error(500, _internal(exc))


def _internal(exc: Exception) -> str:
    return f"internal error ({type(exc).__name__}); the server log has the traceback"


class BodyLimit:
    """413 with the JSON error body for a request body over `max_bytes`, before anything parses it: at once
    when its Content-Length says so, else as soon as the streamed body passes the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int, uploads: tuple[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.uploads = uploads
        """(path prefix, limit): PUTs under that prefix carry documents and have their own limit."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes = self.max_bytes
        if self.uploads and scope["method"] == "PUT" and scope["path"].startswith(self.uploads[0]):
            max_bytes = self.uploads[1]
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and not length.isdigit():
            await _error(400, "invalid Content-Length header")(scope, receive, send)
            return
        if length is not None and int(length) > max_bytes:
            if int(length) <= LINGER_BYTES:
                await _drain(receive)
            await self._refuse(scope, receive, send, max_bytes)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > max_bytes:
                    if message.get("more_body", False):
                        await _drain(receive)
                    raise BodyTooLarge(413, f"request body larger than {max_bytes} bytes")
            return message

        # raised inside FastAPI's body reader, which passes an HTTPException on to the error handlers
        await self.app(scope, limited, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, max_bytes: int) -> None:
        response = _error(413, f"request body larger than {max_bytes} bytes")
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


LINGER_BYTES = 16 * 1024 * 1024
LINGER_SECONDS = 2.0
"""What is read and dropped of a refused body before the 413: the server closes the connection after it,
and closing with unread bytes makes the kernel reset the connection - the client may then lose the 413 it
was already sent. A larger body, or a slower one, is cut off unread (as nginx's lingering close does)."""


async def _drain(receive: Receive) -> None:
    dropped = 0
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LINGER_SECONDS):
            while dropped <= LINGER_BYTES:
                message = await receive()
                if message["type"] != "http.request":
                    return
                dropped += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return


class BodyTooLarge(StarletteHTTPException):
    """An HTTPException, so FastAPI's body reader passes it on as it is (any other error becomes a 400)."""
