"""LLM client for any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, vLLM, Ollama, llama.cpp server and LM Studio.

Uses the official ``openai`` SDK with its own retries switched off: the retry loop lives here so every
attempt is counted, logged and bounded by the settings. ``structured()`` turns the model's answer into a
validated pydantic object, repairing sloppy JSON and re-asking once (see ``deepresearch.llm.jsonparse``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from config import Settings
from deepresearch.llm.family import ServerFamily, detect_family
from deepresearch.llm.jsonparse import (
    parse_json_loosely,
    reask_prompt,
    reask_text_prompt,
    strip_think,
    validate_loosely,
)
from deepresearch.llm.modes import OutputMode
from deepresearch.llm.negotiation import Negotiated, Negotiation
from deepresearch.llm.slots import EndpointSlots, default_limit, slots_for
from deepresearch.llm.types import (
    LLMError,
    LLMResponse,
    LLMUsage,
    StructuredOutputError,
    StructuredResult,
)
from deepresearch.llm.wire import (
    CONNECTION_HINT,
    DEFAULT_OPENAI_BASE_URL,
    TIMEOUT_HINT,
    as_int,
    endpoint_of,
    retry_after_seconds,
    root_cause,
    server_message,
    status_hint,
)
from deepresearch.web.tls import shared_ssl_context

# The openai SDK is imported when a client is built (open_llm_client imports it off the event loop), not
# with this module: importing it costs about a second of CPU (its pydantic types), which every process that
# imports the engine paid - the extractive CLI runs, `token`/`runs` commands, a server that never calls a
# model.
logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

# The SDK refuses to start without a key; local servers (vLLM, Ollama, llama.cpp) ignore it.
PLACEHOLDER_API_KEY = "not-needed"
RETRYABLE_STATUSES = frozenset({408, 409, 429})
BACKOFF_BASE_SECONDS = 0.5
# A bad answer is echoed back in the re-ask; cap it so a runaway answer cannot blow the context window.
REASK_ECHO_MAX_CHARS = 8_000
RAW_EXCERPT_CHARS = 300
WaitCheck = Callable[[], None]
"""Called while a request waits for a free slot of its endpoint; what it raises (a cancel) ends the wait."""
OnDelta = Callable[[str, int], Awaitable[None]]
"""Told each piece of a streamed answer and which answer it belongs to (1: the first, 2: the re-ask)."""


class LLMClient:
    """Async client of one OpenAI-compatible endpoint and model. Use as ``async with LLMClient(s) as llm``
    (or call :meth:`aclose`). Bound to the event loop it is first used on, like any httpx client."""

    def __init__(
        self,
        settings: Settings,
        *,
        output_mode: OutputMode | None = None,
        on_negotiated: Negotiated | None = None,
        wait_check: WaitCheck | None = None,
    ) -> None:
        """``output_mode``: the structured-output mode remembered for this endpoint and model (None: find
        out, asking the server what it is first); ``on_negotiated`` is told the mode once a server accepted
        it; ``wait_check`` is called while a request queues for a slot of the endpoint (a cancel check)."""
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
        self.endpoint = endpoint_of(settings)
        self._settings = settings
        self._api_key = settings.openai_api_key
        timeout = settings.llm_timeout_seconds
        # trust_env=False: no proxy/netrc surprises; the endpoint is exactly what the settings say.
        self._http = httpx.AsyncClient(
            trust_env=False, timeout=httpx.Timeout(timeout), verify=shared_ssl_context()
        )
        import openai  # (see the module's imports)

        self._client = openai.AsyncOpenAI(
            api_key=settings.openai_api_key or PLACEHOLDER_API_KEY,
            base_url=base_url or DEFAULT_OPENAI_BASE_URL,
            timeout=timeout,
            max_retries=0,
            http_client=self._http,
        )
        self._base_url = base_url or DEFAULT_OPENAI_BASE_URL
        # the request shape (structured-output mode, parameters a model refuses) adapts to the server
        self._negotiation = Negotiation(settings, output_mode, on_negotiated)
        limit = settings.llm_max_concurrency or default_limit(base_url)
        self.max_concurrency = limit
        self._wait_check = wait_check

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
        schema: type[BaseModel] | None = None,
    ) -> LLMResponse:
        """One chat completion, retried on 408/409/429/5xx, timeouts and connection errors.

        With a ``schema`` the request asks for it in the negotiated structured-output mode (see
        deepresearch.llm.modes). ``<think>`` reasoning is stripped from the text.
        """
        import openai  # bound here: the SDK is imported when a client is built

        settings = self._settings
        max_tokens = max_tokens or settings.llm_max_output_tokens
        temperature = settings.llm_temperature if temperature is None else temperature
        if schema is not None:
            await self._negotiation.prepare(self._detect_family)
        negotiation = self._negotiation
        attempts = 0
        retries = 0
        started = time.monotonic()
        while True:
            attempts += 1
            sent_mode = negotiation.mode
            params = negotiation.params(self.model, messages, max_tokens, temperature, schema)
            retry_headers: Mapping[str, str] | None = None
            try:
                # the wait for a slot comes before the request: it never counts against its timeout
                async with self._slots.slot(self._wait_check):
                    completion = await self._client.chat.completions.create(**params)
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = self._redact(server_message(exc))
                # a refused parameter is a capability, not a transient error: adapt at once, no retry count
                if negotiation.adapt(detail, status, schema is not None, sent_mode):
                    continue
                if not (status in RETRYABLE_STATUSES or status >= 500) or retries >= settings.llm_max_retries:
                    raise self._error(
                        f"failed with HTTP {status}: {detail}", attempts, status_hint(status), status
                    ) from exc
                failure = f"HTTP {status}: {detail}"
                retry_headers = exc.response.headers
            except openai.APITimeoutError as exc:
                failure = f"timed out after {settings.llm_timeout_seconds:g}s"
                if retries >= settings.llm_max_retries:
                    raise self._error(failure, attempts, TIMEOUT_HINT) from exc
            except openai.APIConnectionError as exc:
                failure = f"hit a connection error ({root_cause(exc)})"
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
                if schema is not None:
                    await negotiation.accepted(sent_mode)
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
    async def structured(
        self, messages: list[dict[str, str]], schema: type[T], context: object = None
    ) -> StructuredResult[T]:
        """Ask for JSON matching ``schema``; repair the answer, re-ask once (with the reasons) if it is
        still unusable by shape or by meaning. ``context`` is the validation context of the checks by
        meaning (see deepresearch.graph.schemas.AnswerContext)."""
        responses: list[LLMResponse] = []
        problems: list[str] = []
        ask = messages
        for _ in range(2):
            response = await self.complete(ask, schema=schema)
            responses.append(response)
            try:
                return StructuredResult(validate_loosely(response.text, schema, context), responses, problems)
            except ValueError as exc:  # parse failures and (described) validation errors alike
                problems.append(_with_cutoff(str(exc), response))
            logger.warning("LLM answer for %s unusable: %s", schema.__name__, problems[-1])
            ask = self._reask(messages, response, reask_prompt(schema, problems[-1]))
        raise self._unusable(schema.__name__, responses, problems)

    async def checked_text(
        self,
        messages: list[dict[str, str]],
        check: Callable[[str], None],
        name: str,
        on_delta: OnDelta | None = None,
    ) -> StructuredResult[Any]:
        """A free-text answer that ``check`` accepts (it raises ValueError with the reasons otherwise):
        re-asked once with the reasons, like :meth:`structured`. The value is the text. With
        ``on_delta`` the answers are streamed to it as they are written."""
        responses: list[LLMResponse] = []
        problems: list[str] = []
        ask = messages
        for attempt in (1, 2):
            if on_delta is None:
                response = await self.complete(ask)
            else:
                response = await self.stream(ask, lambda text, n=attempt: on_delta(text, n))
            responses.append(response)
            try:
                check(response.text)
                return StructuredResult(response.text, responses, problems)  # type: ignore[arg-type]
            except ValueError as exc:
                problems.append(_with_cutoff(str(exc), response))
            logger.warning("LLM answer for %s unusable: %s", name, problems[-1])
            ask = self._reask(messages, response, reask_text_prompt(name, problems[-1]))
        raise self._unusable(name, responses, problems)

    async def stream(
        self, messages: list[dict[str, str]], on_delta: Callable[[str], Awaitable[None]]
    ) -> LLMResponse:
        """One completion streamed to ``on_delta`` piece by piece. A server that refuses to stream (or
        fails before the first piece) is asked once more without streaming, with the usual retries; a
        stream that breaks midway fails (nothing half-written is returned). An exception raised by
        ``on_delta`` (a cancel) closes the stream and propagates."""
        import openai  # bound here: the SDK is imported when a client is built

        settings = self._settings
        params = self._negotiation.params(
            self.model, messages, settings.llm_max_output_tokens, settings.llm_temperature, None
        )
        async with self._slots.slot(self._wait_check):  # held to the stream's end
            try:
                stream = await self._client.chat.completions.create(
                    **params, stream=True, stream_options={"include_usage": True}
                )
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                logger.info("LLM %s did not stream (%s); asking without it", self.model, type(exc).__name__)
            else:
                return await self._read_stream(stream, on_delta)
        response = await self.complete(messages)  # outside the slot: complete() takes its own
        await on_delta(response.text)
        return response

    async def _read_stream(self, stream: Any, on_delta: Callable[[str], Awaitable[None]]) -> LLMResponse:
        import openai  # bound here: the SDK is imported when a client is built

        parts: list[str] = []
        usage: object = None
        finish: str | None = None
        model = self.model
        try:
            async with stream:
                async for chunk in stream:
                    model = str(getattr(chunk, "model", None) or model)
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in getattr(chunk, "choices", None) or []:
                        finish = getattr(choice, "finish_reason", None) or finish
                        piece = getattr(getattr(choice, "delta", None), "content", None)
                        if isinstance(piece, str) and piece:
                            parts.append(piece)
                            await on_delta(piece)
        except (openai.APIError, httpx.HTTPError) as exc:
            raise self._error(f"broke off mid-stream ({type(exc).__name__})", 1, CONNECTION_HINT) from exc
        if usage is None:
            logger.warning("LLM %s streamed without usage: its tokens are not counted", self.model)
        return LLMResponse(strip_think("".join(parts)), model, self._usage(usage), 1, finish)

    @property
    def output_mode(self) -> OutputMode:
        """The structured-output mode requests are sent in now."""
        return self._negotiation.mode

    @property
    def server_family(self) -> ServerFamily | None:
        """What the server turned out to be (None: not asked; the mode was known)."""
        return self._negotiation.family

    @property
    def _slots(self) -> EndpointSlots:
        return slots_for(self.endpoint, self.max_concurrency)

    async def _detect_family(self) -> ServerFamily:
        return await detect_family(self._http, self._base_url, self._api_key)

    @property
    def negotiation_notes(self) -> str:
        return "; ".join(self._negotiation.notes)

    def _reask(
        self, messages: list[dict[str, str]], answer: LLMResponse, prompt: str
    ) -> list[dict[str, str]]:
        echo = answer.text[:REASK_ECHO_MAX_CHARS] or "(empty answer)"
        return [*messages, {"role": "assistant", "content": echo}, {"role": "user", "content": prompt}]

    def _unusable(
        self, name: str, responses: list[LLMResponse], problems: list[str]
    ) -> StructuredOutputError:
        return StructuredOutputError(
            f"the model's answer for {name} was not usable after one re-ask: {problems[-1]} "
            f"(endpoint {self.endpoint}, model {self.model}; a larger or instruction-tuned model usually "
            "helps)",
            schema_name=name,
            raw_excerpt=responses[-1].text[:RAW_EXCERPT_CHARS],
            responses=responses,
            problems=problems,
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

    async def _wait_before_retry(self, retry: int, failure: str, headers: Mapping[str, str] | None) -> None:
        cap = self._settings.llm_retry_max_wait_seconds
        hinted = retry_after_seconds(headers)
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
        prompt = as_int(getattr(usage, "prompt_tokens", 0))
        completion = as_int(getattr(usage, "completion_tokens", 0))
        total = as_int(getattr(usage, "total_tokens", 0)) or prompt + completion
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


def _with_cutoff(problem: str, response: LLMResponse) -> str:
    if response.finish_reason == "length":
        return f"{problem} (the answer was cut off at the output token limit)"
    return problem


__all__ = [
    "LLMClient",
    "LLMError",
    "LLMResponse",
    "LLMUsage",
    "OutputMode",
    "StructuredOutputError",
    "StructuredResult",
    "endpoint_of",
    "parse_json_loosely",
]
