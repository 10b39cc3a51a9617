"""Small pieces of the LLM client's wire handling: endpoints for messages, server error bodies,
Retry-After, and the hint each HTTP status gets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import suppress
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

from config import Settings

if TYPE_CHECKING:  # the SDK is imported when an LLM client is built (llm_client.py)
    import openai

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

TIMEOUT_HINT = (
    "Raise DEEPRESEARCH_LLM_TIMEOUT_SECONDS, lower DEEPRESEARCH_LLM_MAX_OUTPUT_TOKENS or use a faster model."
)
CONNECTION_HINT = (
    "Check that the server is running and that OPENAI_BASE_URL points at its OpenAI-compatible API."
)


def endpoint_of(settings: Settings) -> str:
    """The endpoint as messages, logs and the capability store name it (no credentials, no query)."""
    return safe_endpoint(settings.openai_base_url.strip() or DEFAULT_OPENAI_BASE_URL)


def safe_endpoint(url: str) -> str:
    """The base URL without credentials or query string, for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", "")) or url


def server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error") or body.get("detail")
        text = message if isinstance(message, str) else json.dumps(body)
    elif isinstance(body, str) and body.strip():
        text = body
    else:
        text = exc.message
    return " ".join(text.split())[:500]


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
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


def status_hint(status: int) -> str:
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


def root_cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return type(cause).__name__ if cause is not None else type(exc).__name__


def as_int(value: object) -> int:
    try:
        return max(0, int(cast(Any, value) or 0))
    except (TypeError, ValueError):
        return 0
