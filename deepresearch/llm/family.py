"""Which kind of server is behind an OpenAI-compatible base URL: llama.cpp, Ollama, vLLM, LM Studio, OpenAI.

The family decides how structured output is asked for (deepresearch.llm.modes: each family's ladder starts
at the grammar-constrained form it offers). What the server says about itself wins over conventions: the
shape of ``GET /models`` (``owned_by`` and the extra fields each server adds), then its response headers,
then llama.cpp's ``/props`` and Ollama's ``/api/version`` at the server's root, and only then the base
URL's host and port (Ollama listens on 11434, LM Studio on 1234, llama-server on 8080 by default). A server
that says nothing recognisable is ``unknown`` and gets the full ladder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

FamilyName = Literal["llama.cpp", "ollama", "vllm", "lmstudio", "openai", "unknown"]
PROBE_TIMEOUT_SECONDS = 5.0

# owned_by of /models entries, as each server writes it
_OWNED_BY: dict[str, FamilyName] = {
    "llamacpp": "llama.cpp",  # llama.cpp's C++ llama-server
    "vllm": "vllm",
    "organization_owner": "lmstudio",
    "openai": "openai",
    "system": "openai",
    "openai-internal": "openai",
    "library": "ollama",  # Ollama: the namespace of models pulled from its library
}
_PORTS: dict[int, FamilyName] = {11434: "ollama", 1234: "lmstudio", 8080: "llama.cpp"}


@dataclass(frozen=True, slots=True)
class ServerFamily:
    name: FamilyName
    evidence: str
    """What gave it away, for the capability record and the logs."""

    def describe(self) -> str:
        return f"server: {self.name} ({self.evidence})"


UNKNOWN = ServerFamily("unknown", "nothing recognisable in /models, headers or the URL")


def from_models(payload: object) -> ServerFamily | None:
    """The family a ``GET /models`` body reveals, if any."""
    if not isinstance(payload, dict):
        return None
    entries = [e for e in payload.get("data") or [] if isinstance(e, dict)]
    for entry in entries:
        owner = str(entry.get("owned_by", "")).strip().lower()
        if owner in _OWNED_BY:
            return ServerFamily(_OWNED_BY[owner], f"owned_by {owner!r} at /models")
        if owner == "me" and "permissions" in entry:  # llama-cpp-python's server
            return ServerFamily("llama.cpp", "owned_by 'me' with 'permissions' at /models (llama-cpp-python)")
        if "max_model_len" in entry:
            return ServerFamily("vllm", "max_model_len at /models")
        if "meta" in entry and isinstance(entry["meta"], dict) and "n_ctx_train" in entry["meta"]:
            return ServerFamily("llama.cpp", "GGUF meta at /models")
    if "models" in payload and entries:  # llama-server lists its models twice (OpenAI and Ollama shapes)
        return ServerFamily("llama.cpp", "'models' beside 'data' at /models")
    return None


def from_headers(headers: Mapping[str, str]) -> ServerFamily | None:
    server = headers.get("server", "").lower()
    if "llama.cpp" in server:
        return ServerFamily("llama.cpp", f"Server header {server!r}")
    if "vllm" in server:
        return ServerFamily("vllm", f"Server header {server!r}")
    if "openai-organization" in headers or "openai-processing-ms" in headers:
        return ServerFamily("openai", "OpenAI response headers")
    return None


def from_url(base_url: str) -> ServerFamily | None:
    """The conventions of hosts and default ports: the last resort."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host == "api.openai.com":
        return ServerFamily("openai", "host api.openai.com")
    try:
        port = parts.port
    except ValueError:
        return None
    if port in _PORTS:
        return ServerFamily(_PORTS[port], f"port {port}, {_PORTS[port]}'s default")
    return None


async def detect_family(http: httpx.AsyncClient, base_url: str, api_key: str = "") -> ServerFamily:
    """Ask the server (a few cheap GETs, no tokens). Never raises: an unreachable or silent server is
    judged by its URL, else ``unknown`` (the chat request that follows reports real trouble)."""
    base = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    payload, answer_headers = await _get_json(http, f"{base}/models", headers)
    found = from_models(payload) or from_headers(answer_headers or {})
    if found is None:
        found = await _root_probes(http, base, headers)
    return found or from_url(base_url) or UNKNOWN


async def _root_probes(http: httpx.AsyncClient, base: str, headers: dict[str, str]) -> ServerFamily | None:
    """llama.cpp's ``/props`` and Ollama's ``/api/version`` live at the server's root, not under /v1."""
    parts = urlsplit(base)
    if (parts.hostname or "").lower() == "api.openai.com":
        return None
    root = urlunsplit((parts.scheme, parts.netloc, parts.path.removesuffix("/v1"), "", "")).rstrip("/")
    props, _ = await _get_json(http, f"{root}/props", headers)
    if isinstance(props, dict) and ("default_generation_settings" in props or "total_slots" in props):
        return ServerFamily("llama.cpp", "/props answers like llama-server")
    version, _ = await _get_json(http, f"{root}/api/version", headers)
    if isinstance(version, dict) and set(version) == {"version"}:
        return ServerFamily("ollama", "/api/version answers like Ollama")
    return None


async def _get_json(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[Any, Mapping[str, str] | None]:
    try:
        response = await http.get(url, headers=headers, timeout=PROBE_TIMEOUT_SECONDS)
    except httpx.HTTPError:
        return None, None
    if response.status_code >= 400:
        return None, response.headers
    try:
        return response.json(), response.headers
    except ValueError:
        return None, response.headers
