"""Can the configured model be reached, with this key, under this name? Asked of ``GET {base}/models``.

Cheap (no tokens) and readable: a wrong base URL, a refused connection, a bad key and an unknown model
name each get their own plain sentence naming the setting to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx

from config import Settings
from deepresearch.llm.wire import CONNECTION_HINT, DEFAULT_OPENAI_BASE_URL, safe_endpoint
from deepresearch.web.tls import shared_ssl_context

ModelStatus = Literal["ok", "unreachable", "unauthorized", "not_found", "unknown_model", "error"]
PROBE_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class ModelProbe:
    endpoint: str
    model: str
    status: ModelStatus
    message: str
    detail: str = ""
    models_listed: tuple[str, ...] = ()


async def probe_model(settings: Settings) -> ModelProbe:
    base = (settings.openai_base_url.strip() or DEFAULT_OPENAI_BASE_URL).rstrip("/")
    endpoint, model = safe_endpoint(base), settings.openai_model_name.strip()
    headers = {"Authorization": f"Bearer {settings.openai_api_key}"} if settings.openai_api_key else {}
    timeout = min(PROBE_TIMEOUT_SECONDS, settings.llm_timeout_seconds)
    async with httpx.AsyncClient(trust_env=False, timeout=timeout, verify=shared_ssl_context()) as client:
        try:
            response = await client.get(f"{base}/models", headers=headers)
        except httpx.HTTPError as exc:
            return ModelProbe(
                endpoint,
                model,
                "unreachable",
                f"The model server at {endpoint} cannot be reached. {CONNECTION_HINT}",
                f"{type(exc).__name__}: {exc}"[:300],
            )
    excerpt = " ".join(response.text.split())[:300]
    if response.status_code in (401, 403):
        return ModelProbe(
            endpoint,
            model,
            "unauthorized",
            f"The model server at {endpoint} refused the key (HTTP {response.status_code}). "
            "Check OPENAI_API_KEY.",
            _redact(excerpt, settings.openai_api_key),
        )
    if response.status_code == 404:
        return ModelProbe(
            endpoint,
            model,
            "not_found",
            f"{endpoint} has no OpenAI-compatible API (HTTP 404 for /models). Check OPENAI_BASE_URL "
            "(it usually ends in /v1).",
            excerpt,
        )
    if response.status_code >= 400:
        return ModelProbe(
            endpoint, model, "error", f"The model server answered HTTP {response.status_code}.", excerpt
        )
    listed = _model_ids(response)
    if listed and model not in listed:
        return ModelProbe(
            endpoint,
            model,
            "unknown_model",
            f"The server at {endpoint} does not list the model {model!r}. Check OPENAI_MODEL_NAME "
            f"(it lists: {', '.join(listed[:10])}).",
            models_listed=listed,
        )
    return ModelProbe(
        endpoint, model, "ok", f"{endpoint} answers and serves {model!r}.", models_listed=listed
    )


def _model_ids(response: httpx.Response) -> tuple[str, ...]:
    try:
        payload = response.json()
    except ValueError:
        return ()
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return ()
    return tuple(str(item["id"]) for item in data if isinstance(item, dict) and "id" in item)


def _redact(text: str, key: str) -> str:
    return text.replace(key, "***") if key and len(key) >= 4 else text
