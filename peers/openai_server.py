"""A scripted OpenAI-compatible chat-completions server for tests (real HTTP, real wire format).

    server = make_openai_server()
    server.responder = lambda body: '{"queries": ["a"]}'
    server.fail_next(429, retry_after=0.2)
    with serve_app(server) as base_url:          # client base URL: f"{base_url}/v1"
        ...
    assert len(server.calls) == 2

Workflow tests route by prompt: every prompt of the engine carries a line ``deepresearch prompt <id>``
in its system message, and :func:`prompt_id` extracts it from a request body.

``flavour`` makes it behave like a real server family where they differ:

- ``"llama.cpp"``: llama-cpp-python's server - ``/v1/models`` lists ``owned_by: "me"`` with
  ``permissions``; ``response_format`` ``json_schema`` is refused with HTTP 500 ("Input should be 'text' or
  'json_object'"); ``json_object`` with a ``schema`` is taken and the schema becomes the grammar;
- ``"ollama"``: Ollama's OpenAI layer - ``owned_by: "library"``; ``json_schema``'s schema becomes the
  native ``format`` (``json_object``: ``"json"``), a top-level ``format`` is ignored;
- ``"vllm"``: ``owned_by: "vllm"`` with ``max_model_len``; ``json_schema`` or ``guided_json`` constrain.

:attr:`grammars` records, per request, what the server's decoder was constrained by (None: nothing).
``slots`` makes a server that computes that many answers at once and queues the rest (llama.cpp's
``--parallel``); :attr:`max_in_flight` is the peak of requests open at once, queued ones included.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

DEFAULT_MODEL = "scripted-model"
STREAM_HOLD_SECONDS = 60.0  # a held stream goes on by itself after this, so a failing test cannot hang it
_PROMPT_MARKER = re.compile(r"deepresearch prompt\s+(\S+)")
Flavour = Literal["generic", "llama.cpp", "ollama", "vllm"]
# what llama-cpp-python 0.3.36's server answers, HTTP 500 (its traceback line aside)
LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or "
    "'json_object'\"}}"
)


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """Full control over one answer, for tests that need more than the content string."""

    content: str | None
    finish_reason: str = "stop"
    reasoning_content: str | None = None
    include_usage: bool = True


Responder = Callable[[dict[str, Any]], str | ScriptedReply]


@dataclass(frozen=True, slots=True)
class _Fault:
    status: int
    retry_after: float | None
    body: str | None


def prompt_id(request_body: dict[str, Any]) -> str | None:
    """The ``deepresearch prompt <id>`` marker of the request's system (or developer) message."""
    for message in request_body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer"):
            continue
        match = _PROMPT_MARKER.search(_content_text(message.get("content")))
        if match:
            return match.group(1)
    return None


def format_kind(request_body: dict[str, Any]) -> str | None:
    """Which structured-output mode a request asks for: ``json_schema``, ``json_object_schema`` (llama.cpp's
    json_object with a schema), ``json_object`` or None."""
    fmt = request_body.get("response_format")
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object" and "schema" in fmt:
        return "json_object_schema"
    return str(fmt.get("type"))


def last_user_message(request_body: dict[str, Any]) -> str:
    """Text of the last user message (re-asks append one, so responders can tell them apart)."""
    for message in reversed(request_body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}]
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _default_responder(body: dict[str, Any]) -> str:
    return f"scripted answer to: {last_user_message(body)[:200]}"


class ScriptedOpenAI:
    """ASGI app (pass it to ``serve_app``) plus the knobs and records a test needs.

    Faults queued with :meth:`fail_next` are served first, one per request, in order; then
    :attr:`responder` produces the assistant content. Every request body is recorded in :attr:`calls`,
    including the ones answered with a fault. :attr:`latency` delays every answer (faults included).
    """

    def __init__(
        self, model: str = DEFAULT_MODEL, flavour: Flavour = "generic", slots: int | None = None
    ) -> None:
        self.model = model
        self.flavour: Flavour = flavour
        self.slots = slots
        self.in_flight = 0
        self.max_in_flight = 0
        self.grammars: list[Any] = []
        self.anonymous = False  # /v1/models says nothing about the flavour (a proxy in front, say)
        self._slot_gate: asyncio.Semaphore | None = None  # made on the server's own event loop
        self.latency: float = 0.0
        self.responder: Responder = _default_responder
        self.errors: list[str] = []  # responder exceptions, served as HTTP 500
        # structured-output modes this "server" refuses with a 400, as older or other servers do
        self.refuse_formats: set[str] = set()
        self.refuse_status = 400  # llama-cpp-python's server refuses with a 500 and a validation error
        # when set, requests without "Authorization: Bearer <api_key>" get a 401, as a hosted API answers
        self.api_key: str | None = None
        # "stream": true requests get server-sent chunks of this many characters, this far apart
        self.stream_chunk_chars = 40
        self.stream_delay = 0.0
        # cleared, each stream stops before its next chunk until it is set (at most STREAM_HOLD_SECONDS):
        # a test can hold a report mid-stream while it reloads a page, however loaded the machine is
        self.stream_open = threading.Event()
        self.stream_open.set()
        self.streams_finished = 0  # streams sent to the end (a client that hangs up does not count)
        self._calls: list[dict[str, Any]] = []
        self._faults: deque[_Fault] = deque()
        # Handlers run on the server thread's event loop while the test thread reads: guard shared state.
        self._lock = threading.Lock()
        self._app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    # --- test-facing API -----------------------------------------------------------------------
    @property
    def calls(self) -> list[dict[str, Any]]:
        """Snapshot of every request body received so far, in arrival order."""
        with self._lock:
            return list(self._calls)

    def calls_by_prompt(self) -> Counter[str | None]:
        return Counter(prompt_id(body) for body in self.calls)

    def fail_next(
        self, status: int, times: int = 1, retry_after: float | None = None, body: str | None = None
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (optional Retry-After / raw body).

        ``status`` may be 200 with a ``body`` to serve a malformed or non-OpenAI response.
        """
        with self._lock:
            self._faults.extend(_Fault(status, retry_after, body) for _ in range(times))

    def reset(self) -> None:
        with self._lock:
            self._calls.clear()
            self._faults.clear()
            self.errors.clear()
            self.grammars.clear()
            self.in_flight = self.max_in_flight = 0
        self.latency = 0.0
        self.responder = _default_responder
        self.refuse_formats = set()
        self.api_key = None
        self.stream_chunk_chars, self.stream_delay, self.streams_finished = 40, 0.0, 0
        self.stream_open.set()
        self.refuse_status = 400

    # --- handlers --------------------------------------------------------------------------------
    def _unauthorized(self, request: Request) -> Response | None:
        if self.api_key is None or request.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        return _error(401, "Incorrect API key provided", "invalid_request_error")

    async def _chat_completions(self, request: Request) -> Response:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.slots is None:
                return await self._answer(request)
            if self._slot_gate is None:
                self._slot_gate = asyncio.Semaphore(self.slots)
            async with self._slot_gate:  # like llama.cpp: the rest wait in the server's queue
                return await self._answer(request)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with self._lock:
            self._calls.append(body if isinstance(body, dict) else {"_raw": raw.decode("utf-8", "replace")})
            fault = self._faults.popleft() if self._faults else None
        if (refused := self._unauthorized(request)) is not None:
            return refused
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if fault is not None:
            return _fault_response(fault)
        if not isinstance(body, dict):
            return _error(400, "request body is not a JSON object", "invalid_request_error")
        if (kind := format_kind(body)) in self.refuse_formats:
            message = f"1 validation error: body.response_format.type: {kind} is not supported"
            return _error(self.refuse_status, message, "invalid_request_error")
        if self.flavour == "llama.cpp" and kind == "json_schema":
            return _error(500, LLAMA_CPP_REFUSAL, "internal_server_error")
        with self._lock:
            self.grammars.append(_grammar(self.flavour, body))
        try:
            reply = self.responder(body)
        except Exception as exc:  # a test's responder bug must surface as a visible server error
            message = f"responder raised {exc!r}"
            with self._lock:
                self.errors.append(message)
            return _error(500, message, "server_error")
        if isinstance(reply, str):
            reply = ScriptedReply(content=reply)
        completion = self._completion(body, reply)
        if body.get("stream"):
            return StreamingResponse(self._chunks(completion), media_type="text/event-stream")
        return JSONResponse(completion)

    async def _chunks(self, completion: dict[str, Any]) -> Any:
        """The completion as OpenAI's stream: content deltas, the finish reason, then usage, then [DONE]."""
        base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        content = completion["choices"][0]["message"]["content"] or ""
        size = max(1, self.stream_chunk_chars)
        for start in range(0, len(content), size):
            await self._held()
            delta = {"content": content[start : start + size]}
            yield _sse(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            if self.stream_delay > 0:
                await asyncio.sleep(self.stream_delay)
        finish = completion["choices"][0]["finish_reason"]
        yield _sse(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if "usage" in completion:
            yield _sse(base | {"choices": [], "usage": completion["usage"]})
        yield "data: [DONE]\n\n"
        with self._lock:
            self.streams_finished += 1

    async def _held(self) -> None:
        """Wait while :attr:`stream_open` is cleared, polling (the event is set from the test's thread)."""
        for _ in range(int(STREAM_HOLD_SECONDS / 0.01)):
            if self.stream_open.is_set():
                return
            await asyncio.sleep(0.01)

    async def _models(self, request: Request) -> Response:
        if (refused := self._unauthorized(request)) is not None:
            return refused
        entry: dict[str, Any] = {"id": self.model, "object": "model", "created": 0, "owned_by": "scripted"}
        if self.anonymous:
            pass
        elif self.flavour == "llama.cpp":  # llama-cpp-python's server
            entry = {"id": self.model, "object": "model", "owned_by": "me", "permissions": []}
        elif self.flavour == "ollama":
            entry["owned_by"] = "library"
        elif self.flavour == "vllm":
            entry |= {"owned_by": "vllm", "root": self.model, "max_model_len": 8192}
        return JSONResponse({"object": "list", "data": [entry]})

    def _completion(self, body: dict[str, Any], reply: ScriptedReply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        }
        if reply.include_usage:
            prompt_chars = sum(
                len(_content_text(m.get("content")))
                for m in body.get("messages") or []
                if isinstance(m, dict)
            )
            prompt_tokens = _tokens(prompt_chars)
            completion_tokens = _tokens(len(reply.content or "") + len(reply.reasoning_content or ""))
            payload["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return payload


def _grammar(flavour: Flavour, body: dict[str, Any]) -> Any:
    """What the server's decoder is constrained by for this request, as the flavour's server reads it."""
    fmt = body.get("response_format")
    fmt = fmt if isinstance(fmt, dict) else {}
    if flavour == "ollama":  # its OpenAI layer maps response_format onto the native `format`
        if fmt.get("type") == "json_schema":
            return (fmt.get("json_schema") or {}).get("schema")
        return "json" if fmt.get("type") == "json_object" else None
    if flavour == "llama.cpp":
        return fmt.get("schema") if fmt.get("type") == "json_object" else None
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema")
    return fmt.get("schema") or body.get("guided_json")


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": None}}, status_code=status)


def _fault_response(fault: _Fault) -> Response:
    headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
    if fault.body is None:
        kind = "rate_limit_error" if fault.status == 429 else "scripted_error"
        response = _error(fault.status, f"scripted failure (HTTP {fault.status})", kind)
        response.headers.update(headers)
        return response
    # JSON-looking bodies are labelled JSON even when broken, so tests can serve a truncated body.
    media_type = "application/json" if fault.body.lstrip().startswith(("{", "[")) else "text/plain"
    return Response(fault.body, status_code=fault.status, headers=headers, media_type=media_type)


def make_openai_server(
    model: str = DEFAULT_MODEL, flavour: Flavour = "generic", slots: int | None = None
) -> ScriptedOpenAI:
    return ScriptedOpenAI(model, flavour, slots)


__all__ = [
    "DEFAULT_MODEL",
    "ScriptedOpenAI",
    "ScriptedReply",
    "format_kind",
    "last_user_message",
    "make_openai_server",
    "prompt_id",
]
