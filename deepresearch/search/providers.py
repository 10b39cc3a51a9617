"""Web search providers: SearXNG, Tavily, Brave, a generic JSON endpoint and DuckDuckGo (``ddgs``).

Every provider turns *any* failure (network, HTTP status, malformed payload) into a
:class:`ProviderError` with a readable message, validates the response shape, and drops hits whose
URL is not absolute http(s). None of them retries: the chain falls back to the next provider instead,
which keeps the number of calls at each backend predictable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

import httpx
from ddgs import DDGS  # a lazy proxy: the engines and their HTTP stack load on first use
from ddgs.exceptions import DDGSException

from deepresearch.search.base import ProviderError, SearchResult, clean_text, is_web_url
from deepresearch.web.tls import shared_ssl_context

__all__ = [
    "MCP_PROVIDERS",
    "PROVIDERS",
    "BraveProvider",
    "DuckDuckGoProvider",
    "GenericProvider",
    "SearxngProvider",
    "TavilyProvider",
    "make_http_client",
]

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "deepresearch/0.1 (+self-hosted research agent)"
# Tavily and Brave reject larger page sizes; asking for more would turn a valid run into an HTTP 422.
TAVILY_MAX_RESULTS = 20
BRAVE_MAX_COUNT = 20
_ERROR_EXCERPT_CHARS = 200


class ProviderSettings(Protocol):
    """What the providers read of config.py's Settings (this layer does not import config)."""

    searxng_url: str
    tavily_api_key: str
    brave_api_key: str
    web_search_url: str
    duckduckgo_enabled: bool
    search_timeout_seconds: float


def make_http_client(timeout: float, user_agent: str = DEFAULT_USER_AGENT) -> httpx.AsyncClient:
    """The client shared by the providers of one chain. ``trust_env=False``: no proxy/netrc surprises."""
    return httpx.AsyncClient(
        timeout=timeout,
        trust_env=False,
        verify=shared_ssl_context(),
        follow_redirects=True,
        max_redirects=5,
        headers={"User-Agent": user_agent, "Accept": "application/json"},
    )


def _checked_base_url(provider: str, url: str) -> httpx.URL:
    """Fail at construction (configuration time) rather than on every query."""
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise ValueError(f"{provider}: invalid URL {url!r}: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"{provider}: URL must be absolute http(s), got {url!r}")
    return parsed


def _join_path(base: httpx.URL, suffix: str) -> httpx.URL:
    path = base.path.rstrip("/")
    if not path.endswith(suffix):
        path += suffix
    return base.copy_with(path=path)


def _display(url: httpx.URL) -> str:
    """URL for error messages: without the query string, which may carry the user's query or a key."""
    return str(url.copy_with(query=None, fragment=None))


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _optional_str(provider: str, item: Mapping[str, Any], key: str, where: str) -> str | None:
    value = item.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ProviderError(
        provider, f"malformed response: {where}.{key} is {_type_name(value)}, expected a string"
    )


def parse_items(
    provider: str,
    items: object,
    *,
    where: str,
    max_results: int,
    url_keys: tuple[str, ...] = ("url",),
    snippet_keys: tuple[str, ...] = ("snippet", "content"),
    published_keys: tuple[str, ...] = ("published",),
) -> list[SearchResult]:
    """Validate a provider's list of hits and convert it. Non-http(s) URLs are dropped, not fatal."""
    if not isinstance(items, list):
        raise ProviderError(provider, f"malformed response: {where} is {_type_name(items)}, expected a list")
    results: list[SearchResult] = []
    for index, item in enumerate(items):
        here = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise ProviderError(provider, f"malformed response: {here} is {_type_name(item)}, not an object")
        url = next((u for key in url_keys if (u := _optional_str(provider, item, key, here))), None)
        if url is None or not is_web_url(url):
            logger.debug("%s: dropping hit without an http(s) URL: %r", provider, url)
            continue
        url = url.strip()
        title = clean_text(_optional_str(provider, item, "title", here) or "")
        snippet = next(
            (s for key in snippet_keys if (s := _optional_str(provider, item, key, here)) is not None), ""
        )
        # dates come in many spellings ("2024-05-01T00:00:00", "3 days ago"); keep them verbatim
        published = next(
            (p.strip() for key in published_keys if isinstance(p := item.get(key), str) and p.strip()),
            None,
        )
        results.append(
            SearchResult(
                title=title or url,
                url=url,
                snippet=clean_text(snippet),
                published=published,
                provider=provider,
            )
        )
        if len(results) >= max_results:
            break
    return results


def _require_object(provider: str, payload: object, where: str = "response") -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise ProviderError(provider, f"malformed response: {where} is {_type_name(payload)}, not an object")
    return payload


def _require_key(provider: str, payload: dict[str, Any], key: str, where: str = "response") -> object:
    if key not in payload:
        raise ProviderError(provider, f"malformed response: {where} has no {key!r} field")
    return payload[key]


class _HttpProvider:
    """Shared request/response handling. Uses the chain's client, or owns one when used alone."""

    name = "http"
    advertised: ClassVar[bool] = True
    """Named in the advice given when no web search works (see ADVERTISED_SETTINGS)."""

    def __init__(self, *, client: httpx.AsyncClient | None, timeout: float) -> None:
        self._timeout = timeout
        self._owns_client = client is None
        self._client = client if client is not None else make_http_client(timeout)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def _request_json(
        self,
        method: str,
        url: httpx.URL,
        *,
        headers: Mapping[str, str] | None = None,
        json_body: Mapping[str, Any] | None = None,
        hint: Callable[[int], str] | None = None,
    ) -> object:
        shown = _display(url)
        try:
            response = await self._client.request(
                method, url, headers=headers, json=json_body, timeout=self._timeout
            )
        except httpx.TimeoutException as exc:
            raise ProviderError(self.name, f"timed out after {self._timeout:g}s calling {shown}") from exc
        except httpx.HTTPError as exc:
            raise ProviderError(self.name, f"request to {shown} failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            excerpt = clean_text(response.text)[:_ERROR_EXCERPT_CHARS]
            extra = hint(response.status_code) if hint else ""
            raise ProviderError(
                self.name,
                f"HTTP {response.status_code} from {shown}{extra}" + (f": {excerpt}" if excerpt else ""),
            )
        try:
            return response.json()
        except ValueError as exc:
            content_type = response.headers.get("content-type", "?")
            raise ProviderError(
                self.name, f"response from {shown} is not valid JSON (content-type {content_type})"
            ) from exc


class SearxngProvider(_HttpProvider):
    """SearXNG JSON API: ``GET {base}/search?q=..&format=json``."""

    name = "searxng"
    setting: ClassVar[str] = "SEARXNG_URL"

    @classmethod
    def from_settings(cls, settings: ProviderSettings, client: httpx.AsyncClient) -> SearxngProvider | None:
        if not settings.searxng_url:
            return None
        return cls(settings.searxng_url, client=client, timeout=settings.search_timeout_seconds)

    @staticmethod
    def probe_url(settings: ProviderSettings) -> str | None:
        return settings.searxng_url or None

    def __init__(
        self, base_url: str, *, client: httpx.AsyncClient | None = None, timeout: float = 20.0
    ) -> None:
        super().__init__(client=client, timeout=timeout)
        self._endpoint = _join_path(_checked_base_url(self.name, base_url), "/search")

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        url = self._endpoint.copy_merge_params({"q": query, "format": "json"})
        payload = _require_object(self.name, await self._request_json("GET", url, hint=self._hint))
        results = parse_items(
            self.name,
            _require_key(self.name, payload, "results"),
            where="results",
            max_results=max_results,
            snippet_keys=("content",),
            published_keys=("publishedDate", "published_date"),
        )
        unresponsive = payload.get("unresponsive_engines")
        if not results and isinstance(unresponsive, list) and unresponsive:
            # no hits because every engine behind SearXNG failed: a failure, not an empty answer
            names = ", ".join(
                " ".join(str(part) for part in entry) if isinstance(entry, list) else str(entry)
                for entry in unresponsive
            )
            raise ProviderError(self.name, f"no results; unresponsive engines: {names}")
        return results

    @staticmethod
    def _hint(status: int) -> str:
        return " (is the json format enabled in SearXNG's settings.yml?)" if status == 403 else ""


class TavilyProvider(_HttpProvider):
    """Tavily search API: ``POST {base}/search``."""

    name = "tavily"
    setting: ClassVar[str] = "TAVILY_API_KEY"

    @classmethod
    def from_settings(cls, settings: ProviderSettings, client: httpx.AsyncClient) -> TavilyProvider | None:
        if not settings.tavily_api_key:
            return None
        return cls(settings.tavily_api_key, client=client, timeout=settings.search_timeout_seconds)

    @staticmethod
    def probe_url(settings: ProviderSettings) -> str | None:
        return "https://api.tavily.com/" if settings.tavily_api_key else None

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "https://api.tavily.com",
        client: httpx.AsyncClient | None = None,
        timeout: float = 20.0,
    ) -> None:
        if not api_key:
            raise ValueError("tavily: an API key is required")
        super().__init__(client=client, timeout=timeout)
        self._api_key = api_key
        self._endpoint = _join_path(_checked_base_url(self.name, base_url), "/search")

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        body = {
            "query": query,
            "max_results": min(max_results, TAVILY_MAX_RESULTS),
            "search_depth": "basic",
            # the body key is the older auth style; some proxies/self-hosted gateways still expect it
            "api_key": self._api_key,
        }
        headers = {"Authorization": f"Bearer {self._api_key}"}
        payload = _require_object(
            self.name, await self._request_json("POST", self._endpoint, headers=headers, json_body=body)
        )
        return parse_items(
            self.name,
            _require_key(self.name, payload, "results"),
            where="results",
            max_results=max_results,
            snippet_keys=("content",),
            published_keys=("published_date",),
        )


class BraveProvider(_HttpProvider):
    """Brave web search API: ``GET {base}/res/v1/web/search?q=&count=``."""

    name = "brave"
    setting: ClassVar[str] = "BRAVE_API_KEY"

    @classmethod
    def from_settings(cls, settings: ProviderSettings, client: httpx.AsyncClient) -> BraveProvider | None:
        if not settings.brave_api_key:
            return None
        return cls(settings.brave_api_key, client=client, timeout=settings.search_timeout_seconds)

    @staticmethod
    def probe_url(settings: ProviderSettings) -> str | None:
        return "https://api.search.brave.com/" if settings.brave_api_key else None

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "https://api.search.brave.com",
        client: httpx.AsyncClient | None = None,
        timeout: float = 20.0,
    ) -> None:
        if not api_key:
            raise ValueError("brave: an API key is required")
        super().__init__(client=client, timeout=timeout)
        self._api_key = api_key
        self._endpoint = _join_path(_checked_base_url(self.name, base_url), "/res/v1/web/search")

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        url = self._endpoint.copy_merge_params({"q": query, "count": min(max_results, BRAVE_MAX_COUNT)})
        headers = {"X-Subscription-Token": self._api_key}
        payload = _require_object(self.name, await self._request_json("GET", url, headers=headers))
        if "web" not in payload and payload.get("type") == "search":
            # Brave leaves out the whole "web" section when nothing matched
            return []
        web = _require_object(self.name, _require_key(self.name, payload, "web"), "web")
        return parse_items(
            self.name,
            _require_key(self.name, web, "results", "web"),
            where="web.results",
            max_results=max_results,
            snippet_keys=("description",),
            published_keys=("page_age", "age"),
        )


class GenericProvider(_HttpProvider):
    """Any endpoint answering ``GET {url}?q=&max_results=`` with ``{"results": [{title, url, ...}]}``."""

    name = "generic"
    setting: ClassVar[str] = "DEEPRESEARCH_WEB_SEARCH_URL"
    advertised: ClassVar[bool] = False  # a self-hosted JSON endpoint: named only where all settings are

    @classmethod
    def from_settings(cls, settings: ProviderSettings, client: httpx.AsyncClient) -> GenericProvider | None:
        if not settings.web_search_url:
            return None
        return cls(settings.web_search_url, client=client, timeout=settings.search_timeout_seconds)

    @staticmethod
    def probe_url(settings: ProviderSettings) -> str | None:
        return settings.web_search_url or None

    def __init__(self, url: str, *, client: httpx.AsyncClient | None = None, timeout: float = 20.0) -> None:
        super().__init__(client=client, timeout=timeout)
        self._endpoint = _checked_base_url(self.name, url)

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        # copy_merge_params keeps parameters already in the configured URL (keys, language...)
        url = self._endpoint.copy_merge_params({"q": query, "max_results": max_results})
        payload = _require_object(self.name, await self._request_json("GET", url))
        return parse_items(
            self.name,
            _require_key(self.name, payload, "results"),
            where="results",
            max_results=max_results,
        )


class TextSearcher(Protocol):
    """The part of ``ddgs.DDGS`` we use."""

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...


def _default_ddgs_factory(timeout: float) -> Callable[[], TextSearcher]:
    def factory() -> TextSearcher:
        return DDGS(timeout=max(1, round(timeout)))

    return factory


class DuckDuckGoProvider:
    """DuckDuckGo and friends through the maintained ``ddgs`` metasearch package (blocking: run in a thread).

    ``ddgs`` cannot be cancelled once started; on timeout the worker thread finishes in the background
    (bounded by ddgs' own per-request timeout) while the chain moves on.
    """

    name = "duckduckgo"
    setting: ClassVar[str] = "DEEPRESEARCH_DUCKDUCKGO_ENABLED"
    advertised: ClassVar[bool] = False  # on by default: switched off, never configured

    @classmethod
    def from_settings(
        cls, settings: ProviderSettings, client: httpx.AsyncClient
    ) -> DuckDuckGoProvider | None:
        return cls(timeout=settings.search_timeout_seconds) if settings.duckduckgo_enabled else None

    @staticmethod
    def probe_url(settings: ProviderSettings) -> str | None:
        return "https://duckduckgo.com/" if settings.duckduckgo_enabled else None

    def __init__(
        self,
        *,
        timeout: float = 20.0,
        backend: str = "auto",
        ddgs_factory: Callable[[], TextSearcher] | None = None,
    ) -> None:
        self._timeout = timeout
        self._backend = backend
        self._factory = ddgs_factory if ddgs_factory is not None else _default_ddgs_factory(timeout)

    async def aclose(self) -> None:
        return None

    def _run(self, query: str, max_results: int) -> list[dict[str, Any]]:
        try:
            return self._factory().text(query, max_results=max_results, backend=self._backend)
        except DDGSException as exc:
            # ddgs reports "every engine answered, none had hits" this way: an empty answer, not a failure
            if str(exc) == "No results found.":
                return []
            raise

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            raw = await asyncio.wait_for(asyncio.to_thread(self._run, query, max_results), self._timeout)
        except TimeoutError as exc:
            raise ProviderError(self.name, f"timed out after {self._timeout:g}s") from exc
        except Exception as exc:
            # third-party code with many failure modes (ddgs, primp, engines): all mean "provider failed"
            raise ProviderError(self.name, f"{type(exc).__name__}: {exc}") from exc
        return parse_items(
            self.name,
            raw,
            where="results",
            max_results=max_results,
            url_keys=("href", "url"),
            snippet_keys=("body", "snippet"),
            published_keys=("date", "published"),
        )


WebProvider = SearxngProvider | TavilyProvider | BraveProvider | GenericProvider | DuckDuckGoProvider

PROVIDERS: tuple[type[WebProvider], ...] = (
    SearxngProvider,
    TavilyProvider,
    BraveProvider,
    GenericProvider,
    DuckDuckGoProvider,
)
"""Every web provider, in the default chain order. A new provider is a class above, with its name, its
setting, ``from_settings`` and ``probe_url``, listed here (and its setting in config.py's Settings)."""
MCP_PROVIDERS = "mcp"
"""The search roles of the MCP servers file (DEEPRESEARCH_MCP_SERVERS_FILE), in the file's order: built for
each run execution with its receipts (deepresearch.mcpclient), not from settings alone. First by default: an
operator who lists servers means them to be used."""
PROVIDER_NAMES: tuple[str, ...] = (MCP_PROVIDERS, *(provider.name for provider in PROVIDERS))
"""Every name DEEPRESEARCH_SEARCH_PROVIDERS may list, in the default chain order."""


def _either(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


ADVERTISED_SETTINGS = _either([p.setting for p in PROVIDERS if p.advertised])
"""What to configure for web search, as advice ("SEARXNG_URL, TAVILY_API_KEY or BRAVE_API_KEY")."""
ALL_SETTINGS = _either([p.setting for p in PROVIDERS if p is not DuckDuckGoProvider])
"""Every setting that configures a web provider, DuckDuckGo's switch aside."""
