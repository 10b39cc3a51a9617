"""LLM client for any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, vLLM, Ollama, llama.cpp server and LM Studio.

Uses the official ``openai`` SDK with its own retries switched off: the retry loop lives here so every
attempt is counted, logged and bounded by the settings. ``structured()`` turns the model's answer into a
validated pydantic object, repairing sloppy JSON and re-asking once (see ``deepresearch.llm_json``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Generic, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai
from openai import AsyncOpenAI
from pydantic import BaseModel

from config import Settings
from deepresearch.llm_json import parse_json_loosely, reask_prompt, strip_think, validate_loosely

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
# The SDK refuses to start without a key; local servers (vLLM, Ollama, llama.cpp) ignore it.
PLACEHOLDER_API_KEY = "not-needed"
RETRYABLE_STATUSES = frozenset({408, 409, 429})
BACKOFF_BASE_SECONDS = 0.5
# A bad answer is echoed back in the re-ask; cap it so a runaway answer cannot blow the context window.
REASK_ECHO_MAX_CHARS = 8_000
RAW_EXCERPT_CHARS = 300
TIMEOUT_HINT = (
    "Raise DEEPRESEARCH_LLM_TIMEOUT_SECONDS, lower DEEPRESEARCH_LLM_MAX_OUTPUT_TOKENS or use a faster model."
)
CONNECTION_HINT = (
    "Check that the server is running and that OPENAI_BASE_URL points at its OpenAI-compatible API."
)


@dataclass(frozen=True, slots=True)
class LLMUsage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cost_usd + other.cost_usd,
        )


ZERO_USAGE = LLMUsage(0, 0, 0, 0.0)


@dataclass(frozen=True, slots=True)
class LLMResponse:
    text: str
    model: str
    usage: LLMUsage
    attempts: int
    finish_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "model": self.model,
            "usage": self.usage.to_dict(),
            "attempts": self.attempts,
            "finish_reason": self.finish_reason,
        }


@dataclass
class StructuredResult(Generic[T]):
    value: T
    responses: list[LLMResponse] = field(default_factory=list)  # first answer (+ the re-ask, if any)

    @property
    def usage(self) -> LLMUsage:
        return sum((r.usage for r in self.responses), ZERO_USAGE)


class LLMError(Exception):
    """A chat completion could not be obtained; the message says where, why and what to do."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        endpoint: str = "",
        model: str = "",
        attempts: int = 0,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.model = model
        self.attempts = attempts


class StructuredOutputError(LLMError):
    """The model's answer could not be turned into the requested schema, even after one re-ask."""

    def __init__(
        self,
        message: str,
        *,
        schema_name: str,
        raw_excerpt: str,
        responses: list[LLMResponse] | None = None,
        endpoint: str = "",
        model: str = "",
    ) -> None:
        super().__init__(message, endpoint=endpoint, model=model, attempts=len(responses or []))
        self.schema_name = schema_name
        self.raw_excerpt = raw_excerpt
        # Kept so callers can still account the tokens the failed answers cost.
        self.responses = list(responses or [])


class LLMClient:
    """Async client of one OpenAI-compatible endpoint and model. Use as ``async with LLMClient(s) as llm``
    (or call :meth:`aclose`). Bound to the event loop it is first used on, like any httpx client."""

    def __init__(self, settings: Settings) -> None:
        model = settings.openai_model_name.strip()
        if not model:
            raise LLMError(
                "no LLM model is configured: set OPENAI_MODEL_NAME (plus OPENAI_BASE_URL for a local "
                "server such as vLLM/Ollama/llama.cpp, or OPENAI_API_KEY for OpenAI), "
                "or run with DEEPRESEARCH_ENGINE=extractive"
            )
        base_url = settings.openai_base_url.strip()
        if not base_url and not settings.openai_api_key:
            raise LLMError(
                f"model {model} is configured but neither OPENAI_BASE_URL (local server) nor "
                "OPENAI_API_KEY (OpenAI) is set",
                model=model,
            )
        self.model = model
        self.endpoint = _safe_endpoint(base_url or DEFAULT_OPENAI_BASE_URL)
        self._settings = settings
        self._api_key = settings.openai_api_key
        timeout = settings.llm_timeout_seconds
        # trust_env=False: no proxy/netrc surprises; the endpoint is exactly what the settings say.
        self._http = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(timeout))
        self._client = AsyncOpenAI(
            api_key=settings.openai_api_key or PLACEHOLDER_API_KEY,
            base_url=base_url or DEFAULT_OPENAI_BASE_URL,
            timeout=timeout,
            max_retries=0,
            http_client=self._http,
        )
        # Request shape adapts once to servers/models that reject a parameter (see _adapt_to_rejection).
        self._use_max_completion_tokens = False
        self._send_temperature = True
        self._json_mode = settings.llm_json_mode

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.close()
        await self._http.aclose()

    # --- plain completion ----------------------------------------------------------------------
    async def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json_mode: bool = False,
    ) -> LLMResponse:
        """One chat completion, retried on 408/409/429/5xx, timeouts and connection errors.

        ``json_mode`` asks for ``response_format=json_object`` only when ``settings.llm_json_mode`` is on
        (many local servers reject or mishandle it). ``<think>`` reasoning is stripped from the text.
        """
        settings = self._settings
        max_tokens = max_tokens or settings.llm_max_output_tokens
        temperature = settings.llm_temperature if temperature is None else temperature
        attempts = 0
        retries = 0
        started = time.monotonic()
        while True:
            attempts += 1
            send_json_mode = json_mode and self._json_mode
            params = self._request_params(messages, max_tokens, temperature, send_json_mode)
            retry_headers: Mapping[str, str] | None = None
            try:
                completion = await self._client.chat.completions.create(**params)
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = self._redact(_server_message(exc))
                if status in (400, 422) and self._adapt_to_rejection(detail, send_json_mode):
                    continue
                if not (status in RETRYABLE_STATUSES or status >= 500) or retries >= settings.llm_max_retries:
                    raise self._error(
                        f"failed with HTTP {status}: {detail}", attempts, _hint(status), status
                    ) from exc
                failure = f"HTTP {status}: {detail}"
                retry_headers = exc.response.headers
            except openai.APITimeoutError as exc:
                failure = f"timed out after {settings.llm_timeout_seconds:g}s"
                if retries >= settings.llm_max_retries:
                    raise self._error(failure, attempts, TIMEOUT_HINT) from exc
            except openai.APIConnectionError as exc:
                failure = f"hit a connection error ({_root_cause(exc)})"
                if retries >= settings.llm_max_retries:
                    raise self._error(failure, attempts, CONNECTION_HINT) from exc
            except json.JSONDecodeError as exc:
                # A JSON body cut off or garbled (flaky proxy, server dying mid-write): worth a retry.
                failure = f"returned a malformed JSON body ({exc.msg})"
                if retries >= settings.llm_max_retries:
                    raise self._error(failure, attempts, CONNECTION_HINT) from exc
            except openai.OpenAIError as exc:
                # Anything else the SDK raises is not transient, but callers only handle LLMError.
                detail = self._redact(" ".join(str(exc).split()))[:RAW_EXCERPT_CHARS]
                raise self._error(f"failed ({type(exc).__name__}: {detail})", attempts, "") from exc
            else:
                response = self._to_response(completion, attempts)
                logger.debug(
                    "LLM %s answered in %.2fs (attempts=%s, tokens=%s/%s, finish=%s)",
                    self.model,
                    time.monotonic() - started,
                    attempts,
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    response.finish_reason,
                )
                return response
            retries += 1
            await self._wait_before_retry(retries, failure, retry_headers)

    # --- structured output ---------------------------------------------------------------------
    async def structured(self, messages: list[dict[str, str]], schema: type[T]) -> StructuredResult[T]:
        """Ask for JSON matching ``schema``; repair the answer, re-ask once if it is still unusable."""
        name = schema.__name__
        first = await self.complete(messages, json_mode=True)
        responses = [first]
        try:
            return StructuredResult(validate_loosely(first.text, schema), responses)
        except ValueError as exc:  # parse failures and (described) validation errors alike
            problem = str(exc)
        logger.warning("LLM answer for %s unusable, re-asking once: %s", name, problem)
        reask = [
            *messages,
            {"role": "assistant", "content": first.text[:REASK_ECHO_MAX_CHARS] or "(empty answer)"},
            {"role": "user", "content": reask_prompt(schema, problem)},
        ]
        second = await self.complete(reask, json_mode=True)
        responses.append(second)
        try:
            return StructuredResult(validate_loosely(second.text, schema), responses)
        except ValueError as exc:
            problem = str(exc)
        raise StructuredOutputError(
            f"the model's answer for {name} was not valid JSON after one re-ask: {problem} "
            f"(endpoint {self.endpoint}, model {self.model}; a larger or instruction-tuned model, or "
            "DEEPRESEARCH_LLM_JSON_MODE=true if the server supports it, usually helps)",
            schema_name=name,
            raw_excerpt=second.text[:RAW_EXCERPT_CHARS],
            responses=responses,
            endpoint=self.endpoint,
            model=self.model,
        )

    # --- internals -----------------------------------------------------------------------------
    def _error(self, failure: str, attempts: int, hint: str, status: int | None = None) -> LLMError:
        message = (
            f"LLM request to {self.endpoint} (model {self.model}) {failure} after {attempts} attempt(s)."
        )
        return LLMError(
            f"{message} {hint}".strip(),
            status=status,
            endpoint=self.endpoint,
            model=self.model,
            attempts=attempts,
        )

    def _request_params(
        self, messages: list[dict[str, str]], max_tokens: int, temperature: float, json_mode: bool
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": cast(Any, messages)}
        params["max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"] = max_tokens
        if self._send_temperature:
            params["temperature"] = temperature
        if json_mode:
            params["response_format"] = {"type": "json_object"}
        return params

    def _adapt_to_rejection(self, detail: str, sent_json_mode: bool) -> bool:
        """Some models/servers reject a standard parameter (OpenAI reasoning models: max_tokens and
        temperature; some local servers: response_format). Switch it off once and retry; each switch can
        happen only once, so this cannot loop."""
        lowered = detail.lower()
        if not self._use_max_completion_tokens and "max_completion_tokens" in lowered:
            self._use_max_completion_tokens = True
            change = "using max_completion_tokens instead of max_tokens"
        elif self._send_temperature and "temperature" in lowered and "support" in lowered:
            self._send_temperature = False
            change = "no longer sending temperature"
        elif sent_json_mode and "response_format" in lowered:
            self._json_mode = False
            change = "no longer sending response_format (JSON mode)"
        else:
            return False
        logger.warning("LLM %s rejected a parameter (%s); %s", self.model, detail, change)
        return True

    async def _wait_before_retry(self, retry: int, failure: str, headers: Mapping[str, str] | None) -> None:
        cap = self._settings.llm_retry_max_wait_seconds
        hinted = _retry_after_seconds(headers)
        if hinted is not None:
            delay = min(hinted, cap)
        else:
            # Exponential backoff with jitter so parallel callers do not retry in lockstep.
            ceiling = min(cap, BACKOFF_BASE_SECONDS * 2 ** (retry - 1))
            delay = random.uniform(ceiling / 2, ceiling)
        logger.warning(
            "LLM request to %s (model %s) failed (%s); retry %s/%s in %.2fs",
            self.endpoint,
            self.model,
            failure,
            retry,
            self._settings.llm_max_retries,
            delay,
        )
        await asyncio.sleep(delay)

    def _to_response(self, completion: object, attempts: int) -> LLMResponse:
        # getattr throughout: OpenAI-compatible servers differ, and the SDK does not validate responses.
        choices = getattr(completion, "choices", None)
        if not choices:
            raw = (
                completion.model_dump_json(exclude_none=True)
                if isinstance(completion, BaseModel)
                else str(completion)
            )
            excerpt = self._redact(raw)[:RAW_EXCERPT_CHARS]
            raise LLMError(
                f"LLM endpoint {self.endpoint} (model {self.model}) returned no chat completion choices: "
                f"{excerpt!r}. Check that OPENAI_BASE_URL points at the OpenAI-compatible API "
                "(it usually ends in /v1).",
                endpoint=self.endpoint,
                model=self.model,
                attempts=attempts,
            )
        choice = choices[0]
        content = getattr(getattr(choice, "message", None), "content", None)
        # reasoning_content (DeepSeek, vLLM reasoning parsers) is deliberately ignored.
        text = strip_think(content if isinstance(content, str) else "")
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason == "length":
            logger.warning("LLM %s answer was cut off at the output token limit", self.model)
        if not text:
            logger.warning("LLM %s returned an empty answer (finish_reason=%s)", self.model, finish_reason)
        return LLMResponse(
            text=text,
            model=str(getattr(completion, "model", None) or self.model),
            usage=self._usage(getattr(completion, "usage", None)),
            attempts=attempts,
            finish_reason=finish_reason,
        )

    def _usage(self, usage: object) -> LLMUsage:
        prompt = _as_int(getattr(usage, "prompt_tokens", 0))
        completion = _as_int(getattr(usage, "completion_tokens", 0))
        total = _as_int(getattr(usage, "total_tokens", 0)) or prompt + completion
        cost = (
            prompt * self._settings.llm_input_cost_per_mtok
            + completion * self._settings.llm_output_cost_per_mtok
        ) / 1_000_000
        return LLMUsage(prompt, completion, total, cost)

    def _redact(self, text: str) -> str:
        # Servers sometimes echo request headers in errors; the key must not reach logs or messages.
        if self._api_key and len(self._api_key) >= 4:
            return text.replace(self._api_key, "***")
        return text


def _safe_endpoint(url: str) -> str:
    """The base URL without credentials or query string, for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", "")) or url


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body.get("detail")
        text = message if isinstance(message, str) else json.dumps(body)
    elif isinstance(body, str) and body.strip():
        text = body
    else:
        text = exc.message
    return " ".join(text.split())[:500]


def _retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Server-requested wait: ``retry-after-ms`` (OpenAI), else ``Retry-After`` as seconds or HTTP-date."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        with suppress(ValueError):  # malformed: fall back to Retry-After
            return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    with suppress(ValueError):  # not a number: try the HTTP-date form
        return max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _hint(status: int) -> str:
    if status in (401, 403):
        return "Check OPENAI_API_KEY (and that the key may use this model)."
    if status == 404:
        return "Check OPENAI_BASE_URL (it usually ends in /v1) and OPENAI_MODEL_NAME."
    if status in (400, 413, 422):
        return (
            "The server rejected the request: check that the model exists and accepts these parameters "
            "and that the prompt fits its context window."
        )
    if status == 429:
        return "The server is rate limiting: lower DEEPRESEARCH_LLM_CONCURRENCY or raise the retry settings."
    if status >= 500:
        return "The server failed: check its logs; raise DEEPRESEARCH_LLM_MAX_RETRIES if this is transient."
    return "Check the server's logs and the OPENAI_* settings."


def _root_cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return type(cause).__name__ if cause is not None else type(exc).__name__


def _as_int(value: object) -> int:
    try:
        return max(0, int(cast(Any, value) or 0))
    except (TypeError, ValueError):
        return 0


__all__ = [
    "LLMClient",
    "LLMError",
    "LLMResponse",
    "LLMUsage",
    "StructuredOutputError",
    "StructuredResult",
    "parse_json_loosely",
]
