"""Search data types, errors and URL canonicalisation shared by the web providers and the corpus."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict

__all__ = [
    "AllProvidersFailed",
    "ProviderError",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "canonical_url",
    "clean_text",
    "is_web_url",
]

_TRACKING_PARAMS = frozenset({"fbclid", "gclid", "dclid", "msclkid"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")
_SPACE_RE = re.compile(r"\s+")


class SearchResult(BaseModel):
    """One hit from a web provider or the local corpus."""

    model_config = ConfigDict(frozen=True)

    title: str
    url: str
    snippet: str
    published: str | None = None
    provider: str


@runtime_checkable
class SearchProvider(Protocol):
    """A web search backend. Raises :class:`ProviderError` on any failure; ``[]`` means "no hits"."""

    name: str

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


class ProviderError(Exception):
    """A provider could not answer. ``str()`` is ``"<provider>: <message>"``."""

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.message = message

    def __reduce__(self) -> tuple[type[ProviderError], tuple[str, str]]:
        # keep the two-argument constructor working across pickling (checkpoints, worker processes)
        return (type(self), (self.provider, self.message))


class AllProvidersFailed(Exception):
    """Every source that was tried raised. ``failures`` maps source name -> reason."""

    def __init__(self, failures: dict[str, str]) -> None:
        self.failures = dict(failures)
        detail = "; ".join(f"{name}: {reason}" for name, reason in self.failures.items())
        super().__init__(f"all search providers failed ({detail})" if detail else "no search provider")

    def __reduce__(self) -> tuple[type[AllProvidersFailed], tuple[dict[str, str]]]:
        return (type(self), (self.failures,))


@dataclass
class SearchOutcome:
    """What one query produced. ``providers_used`` lists the sources whose results are included."""

    query: str
    results: list[SearchResult]
    providers_used: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)


def is_web_url(url: str) -> bool:
    """True for absolute http(s) URLs with a host: the only URLs a web provider may hand on."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in _DEFAULT_PORTS and bool(parts.hostname)


def clean_text(value: str) -> str:
    """Providers return highlight markup (``<strong>``) and entities; keep plain, single-spaced text."""
    return _SPACE_RE.sub(" ", html.unescape(_TAG_RE.sub("", value))).strip()


def canonical_url(url: str) -> str:
    """Normalise an http(s) URL so that trivially different spellings of one page compare equal.

    Lower-cases scheme and host, drops the default port, the fragment and tracking parameters
    (``utm_*``, ``fbclid``, ``gclid``...), sorts the query and strips a trailing slash (except the
    root path). Other schemes (``corpus://``...) are opaque identifiers and returned unchanged.
    """
    stripped = url.strip()
    try:
        parts = urlsplit(stripped)
        port = parts.port
    except ValueError:
        return stripped
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return stripped
    host = parts.hostname  # already lower-cased by urlsplit
    if ":" in host:  # IPv6 literal must keep its brackets
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    params = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if not key.lower().startswith("utm_") and key.lower() not in _TRACKING_PARAMS
    ]
    query = urlencode(sorted(params))
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    return urlunsplit((scheme, netloc, path, query, ""))
