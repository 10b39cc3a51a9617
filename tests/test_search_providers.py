"""Each search provider (deepresearch/search/providers.py) and the shared types of
deepresearch/search/base.py (canonical_url, the errors).

Web providers talk real HTTP to the scripted search server on 127.0.0.1
(peers/search_server.py); DuckDuckGo is exercised only through an injected ``ddgs`` stand-in,
so no test ever leaves the machine.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest
from ddgs.exceptions import DDGSException

from deepresearch.search import (
    AllProvidersFailed,
    BraveProvider,
    DuckDuckGoProvider,
    GenericProvider,
    ProviderError,
    SearchResult,
    SearxngProvider,
    TavilyProvider,
    canonical_url,
)
from tests._search_helpers import SITE, TIMEOUT, Backend


# --- canonical_url ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM:80/a/b/?utm_source=x&b=2&a=1#frag", "http://example.com/a/b?a=1&b=2"),
        ("https://example.com:443/", "https://example.com/"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com:8443/x/", "https://example.com:8443/x"),
        ("https://example.com/p?fbclid=1&gclid=2&utm_medium=m&q=z", "https://example.com/p?q=z"),
        ("https://example.com/Case/Path", "https://example.com/Case/Path"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("corpus://Notes/A.md", "corpus://Notes/A.md"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


def test_errors_survive_pickling() -> None:
    error = pickle.loads(pickle.dumps(ProviderError("brave", "HTTP 429 from https://x")))
    assert (error.provider, error.message, str(error)) == (
        "brave",
        "HTTP 429 from https://x",
        "brave: HTTP 429 from https://x",
    )
    failed = pickle.loads(pickle.dumps(AllProvidersFailed({"a": "x", "b": "y"})))
    assert failed.failures == {"a": "x", "b": "y"}
    assert str(failed) == "all search providers failed (a: x; b: y)"


# --- individual providers over real HTTP -----------------------------------------------------------
async def test_searxng_provider(backend: Backend) -> None:
    provider = SearxngProvider(f"{backend.base}/searxng", timeout=TIMEOUT)
    try:
        results = await provider.search("sqlite wal checkpoints", 5)
    finally:
        await provider.aclose()
    assert results[0].url == f"{SITE}/articles/sqlite-wal"
    assert results[0].title.startswith("How SQLite")
    assert results[0].published == "2024-03-18"
    assert {r.provider for r in results} == {"searxng"}
    assert backend.server.calls == [("searxng", "sqlite wal checkpoints")]
    assert backend.server.requests[0].params["format"] == "json"


async def test_tavily_provider_sends_key_and_size(backend: Backend) -> None:
    provider = TavilyProvider(backend.server.api_key, base_url=f"{backend.base}/tavily", timeout=TIMEOUT)
    try:
        results = await provider.search("heat pumps in a cold climate", 1)
    finally:
        await provider.aclose()
    assert [r.url for r in results] == [f"{SITE}/articles/heat-pumps-cold-climates"]
    assert results[0].provider == "tavily"
    assert results[0].snippet.startswith("Field measurements")
    (request,) = backend.server.requests
    assert (request.style, request.query, request.max_results) == (
        "tavily",
        "heat pumps in a cold climate",
        1,
    )
    assert request.credential == backend.server.api_key


async def test_brave_provider_and_empty_answer(backend: Backend) -> None:
    provider = BraveProvider(backend.server.api_key, base_url=f"{backend.base}/brave", timeout=TIMEOUT)
    try:
        results = await provider.search("resume a durable workflow", 50)
        nothing = await provider.search("zzzz unrelated", 3)  # Brave omits "web" when nothing matched
    finally:
        await provider.aclose()
    assert results[0].url == f"{SITE}/articles/durable-workflow-checkpoints"
    assert results[0].published == "2024-06-02"
    assert nothing == []
    assert backend.server.requests[0].params["count"] == "20"  # clamped to Brave's maximum
    assert backend.server.calls == [("brave", "resume a durable workflow"), ("brave", "zzzz unrelated")]


async def test_generic_provider_keeps_existing_query_string(backend: Backend) -> None:
    provider = GenericProvider(f"{backend.base}/search?lang=en&q=stale", timeout=TIMEOUT)
    try:
        results = await provider.search("what is sqlite's wal & why?", 3)
    finally:
        await provider.aclose()
    assert results[0].url == f"{SITE}/articles/sqlite-wal"
    params = backend.server.requests[0].params
    assert params == {"lang": "en", "q": "what is sqlite's wal & why?", "max_results": "3"}


@pytest.mark.parametrize("key_style", ["tavily", "brave"])
async def test_wrong_api_key_is_a_clear_provider_error(backend: Backend, key_style: str) -> None:
    provider: TavilyProvider | BraveProvider
    if key_style == "tavily":
        provider = TavilyProvider("wrong-key", base_url=f"{backend.base}/tavily", timeout=TIMEOUT)
    else:
        provider = BraveProvider("wrong-key", base_url=f"{backend.base}/brave", timeout=TIMEOUT)
    with pytest.raises(ProviderError) as caught:
        await provider.search("sqlite", 3)
    await provider.aclose()
    assert str(caught.value).startswith(f"{key_style}: HTTP 401 from http://127.0.0.1:")
    assert "wrong-key" not in str(caught.value)


async def test_http_error_message_names_provider_status_and_url(backend: Backend) -> None:
    backend.server.fail_next(503, style="searxng")
    provider = SearxngProvider(f"{backend.base}/searxng", timeout=TIMEOUT)
    with pytest.raises(ProviderError) as caught:
        await provider.search("secret query words", 3)
    await provider.aclose()
    message = str(caught.value)
    assert message.startswith(f"searxng: HTTP 503 from {backend.base}/searxng/search")
    assert "secret" not in message  # the query string is not echoed into logs
    assert caught.value.provider == "searxng"


async def test_searxng_with_every_engine_down_is_a_failure(backend: Backend) -> None:
    backend.server.respond_next(
        {"results": [], "unresponsive_engines": [["google", "timeout"], ["bing", "CAPTCHA"]]}
    )
    provider = SearxngProvider(backend.base + "/searxng/", timeout=TIMEOUT)
    with pytest.raises(ProviderError, match="unresponsive engines: google timeout, bing CAPTCHA"):
        await provider.search("sqlite", 3)
    await provider.aclose()


@pytest.mark.parametrize(
    ("style", "body", "fragment"),
    [
        ("generic", "<html>oops</html>", "not valid JSON"),
        ("generic", {"items": []}, "has no 'results' field"),
        ("generic", {"results": {"a": 1}}, "results is dict, expected a list"),
        ("generic", {"results": ["x"]}, "results[0] is str, not an object"),
        ("generic", {"results": [{"title": 5, "url": "https://a.test/"}]}, "results[0].title is int"),
        ("generic", [1, 2], "response is list, not an object"),
        ("searxng", {"results": "x"}, "results is str, expected a list"),
        ("tavily", {"answer": "x"}, "has no 'results' field"),
        ("brave", {"web": []}, "web is list, not an object"),
        ("brave", {"web": {"results": None}}, "web.results is null, expected a list"),
        ("brave", {"unexpected": 1}, "has no 'web' field"),
    ],
)
async def test_malformed_responses_raise_provider_error(
    backend: Backend, style: str, body: Any, fragment: str
) -> None:
    backend.server.respond_next(
        body, content_type="text/html" if isinstance(body, str) else "application/json"
    )
    providers = {
        "generic": lambda: GenericProvider(f"{backend.base}/search", timeout=TIMEOUT),
        "searxng": lambda: SearxngProvider(f"{backend.base}/searxng", timeout=TIMEOUT),
        "tavily": lambda: TavilyProvider("k", base_url=f"{backend.base}/tavily", timeout=TIMEOUT),
        "brave": lambda: BraveProvider("k", base_url=f"{backend.base}/brave", timeout=TIMEOUT),
    }
    provider = providers[style]()
    with pytest.raises(ProviderError) as caught:
        await provider.search("sqlite", 3)
    await provider.aclose()
    assert fragment in str(caught.value)
    assert str(caught.value).startswith(f"{style}: ")


async def test_results_without_http_url_are_dropped_and_markup_cleaned(backend: Backend) -> None:
    backend.server.results_for = lambda query, n: [
        {"title": "ftp", "url": "ftp://files.test/x", "snippet": ""},
        {"title": "script", "url": "javascript:alert(1)", "snippet": ""},
        {"title": "relative", "url": "/articles/x", "snippet": ""},
        {"title": "no url", "snippet": "missing"},
        {"title": "<b>Bold</b> &amp; co", "url": "https://ok.test/a", "snippet": "x <strong>y</strong>"},
        {"url": "https://ok.test/untitled", "snippet": None},
    ]
    provider = GenericProvider(f"{backend.base}/search", timeout=TIMEOUT)
    results = await provider.search("anything", 10)
    await provider.aclose()
    assert results == [
        SearchResult(title="Bold & co", url="https://ok.test/a", snippet="x y", provider="generic"),
        SearchResult(
            title="https://ok.test/untitled", url="https://ok.test/untitled", snippet="", provider="generic"
        ),
    ]


async def test_slow_provider_times_out(backend: Backend) -> None:
    backend.server.latency = 0.5
    provider = GenericProvider(f"{backend.base}/search", timeout=0.1)
    with pytest.raises(ProviderError, match=r"^generic: timed out after 0.1s calling http://127\.0\.0\.1"):
        await provider.search("sqlite", 3)
    await provider.aclose()
    assert backend.server.calls == [("generic", "sqlite")]


# --- DuckDuckGo (ddgs stand-ins only: no network) --------------------------------------------------
class FakeDDGS:
    def __init__(self, behaviour: Any) -> None:
        self.behaviour = behaviour
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        self.calls.append((query, kwargs))
        if isinstance(self.behaviour, BaseException):
            raise self.behaviour
        if callable(self.behaviour):
            return self.behaviour()
        return self.behaviour


async def test_duckduckgo_converts_hits() -> None:
    fake = FakeDDGS(
        [
            {"title": "A", "href": "https://a.test/1", "body": "first"},
            {"title": "No link", "href": "", "body": "dropped"},
            {"title": "B", "href": "https://b.test/2", "body": "second"},
        ]
    )
    provider = DuckDuckGoProvider(timeout=TIMEOUT, ddgs_factory=lambda: fake)
    results = await provider.search("wal", 5)
    assert [(r.title, r.url, r.snippet, r.provider) for r in results] == [
        ("A", "https://a.test/1", "first", "duckduckgo"),
        ("B", "https://b.test/2", "second", "duckduckgo"),
    ]
    assert fake.calls == [("wal", {"max_results": 5, "backend": "auto"})]


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        (DDGSException("https://html.duckduckgo.com 202 Ratelimit"), "duckduckgo: DDGSException: "),
        (ConnectionError("network unreachable"), "duckduckgo: ConnectionError: network unreachable"),
        ("not a list", "duckduckgo: malformed response: results is str, expected a list"),
    ],
)
async def test_duckduckgo_errors_are_wrapped(behaviour: Any, expected: str) -> None:
    provider = DuckDuckGoProvider(timeout=TIMEOUT, ddgs_factory=lambda: FakeDDGS(behaviour))
    with pytest.raises(ProviderError) as caught:
        await provider.search("wal", 5)
    assert str(caught.value).startswith(expected)


async def test_duckduckgo_no_results_is_empty_not_failure() -> None:
    provider = DuckDuckGoProvider(ddgs_factory=lambda: FakeDDGS(DDGSException("No results found.")))
    assert await provider.search("wal", 5) == []


async def test_duckduckgo_overall_timeout() -> None:
    release = threading.Event()

    def hang() -> list[dict[str, Any]]:
        release.wait(5)
        return []

    provider = DuckDuckGoProvider(timeout=0.1, ddgs_factory=lambda: FakeDDGS(hang))
    try:
        with pytest.raises(ProviderError, match=r"^duckduckgo: timed out after 0\.1s"):
            await provider.search("wal", 5)
    finally:
        release.set()  # let the abandoned worker thread finish


def test_scripted_catalogue_points_at_static_site_pages() -> None:
    from peers.search_server import CATALOGUE
    from peers.static_site import ARTICLES

    assert set(CATALOGUE) <= set(ARTICLES)
