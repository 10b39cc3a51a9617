"""Search providers, the fallback chain and the local corpus.

Web providers talk real HTTP to the scripted search server on 127.0.0.1
(peers/search_server.py); DuckDuckGo is exercised only through an injected ``ddgs`` stand-in,
so no test ever leaves the machine. The corpus is a temp folder indexed with SQLite FTS5.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ddgs.exceptions import DDGSException

from config import Settings
from deepresearch.search import (
    AllProvidersFailed,
    BraveProvider,
    CorpusError,
    CorpusIndex,
    DuckDuckGoProvider,
    GenericProvider,
    IndexStats,
    ProviderError,
    SearchChain,
    SearchResult,
    SearxngProvider,
    TavilyProvider,
    build_search_chain,
    canonical_url,
)
from deepresearch.search.documents import PASSAGE_CHARS, chunk_text
from peers import serve_app
from peers.search_server import ScriptedSearch, make_search_server

SITE = "http://site.test"
TIMEOUT = 5.0


# --- fixtures --------------------------------------------------------------------------------------
@dataclass
class Backend:
    server: ScriptedSearch
    base: str


@pytest.fixture(scope="module")
def served() -> Iterator[Backend]:
    server = make_search_server(SITE)
    with serve_app(server.app) as base:
        yield Backend(server, base)


@pytest.fixture
def backend(served: Backend) -> Backend:
    served.server.reset()
    return served


def web_settings(backend: Backend, **overrides: Any) -> Settings:
    """Settings with every provider explicitly set, so the environment cannot leak in."""
    values: dict[str, Any] = {
        "search_providers": ["searxng", "generic"],
        "searxng_url": f"{backend.base}/searxng",
        "tavily_api_key": "",
        "brave_api_key": "",
        "web_search_url": f"{backend.base}/search",
        "duckduckgo_enabled": False,
        "search_timeout_seconds": TIMEOUT,
    }
    values.update(overrides)
    return Settings(**values)


def tiny_pdf(lines: tuple[str, ...]) -> bytes:
    """A minimal valid one-page PDF with real text that pypdf can extract."""
    ops = " ".join(f"BT /F1 12 Tf 72 {720 - 20 * i} Td ({line}) Tj ET" for i, line in enumerate(lines))
    stream = ops.encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


LONG_FILLER = "\n\n".join(
    f"Paragraph {i} talks about gardening, soil moisture and the patience of growing tomatoes. " * 3
    for i in range(40)
)


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "sqlite.md").write_text(
        "# SQLite WAL notes\n\nWrite-ahead logging lets readers keep reading while a single writer "
        "appends frames to the log. Checkpoints copy frames back into the database file.\n"
    )
    (root / "heat.txt").write_text(
        "Heat pump field trials\n\nAir-source heat pumps in cold climates keep a useful coefficient "
        "of performance well below freezing, according to measurements from Canada.\n"
    )
    (root / "page.html").write_text(
        "<html><head><title>Durable checkpoints</title><script>var secret = 'zebracorn';</script>"
        "<style>.x{color:red}</style></head><body><h1>Resuming work</h1><p>A workflow that records "
        "<b>checkpoints</b> after every step can resume after a crash without repeating side "
        "effects.</p></body></html>"
    )
    (root / "paper.pdf").write_bytes(tiny_pdf(("Photosynthesis efficiency in algae", "Measured in 2021")))
    (root / "long.md").write_text(
        f"# Garden journal\n\n{LONG_FILLER}\n\nA quasar appeared in the night sky.\n\n{LONG_FILLER}\n\n"
        "Another quasar sighting, much later.\n"
    )
    # never indexed: hidden files, hidden folders, unsupported types
    (root / ".hidden.md").write_text("zebracorn hidden")
    (root / ".git").mkdir()
    (root / ".git" / "config.md").write_text("zebracorn in git")
    (root / "image.png").write_bytes(b"\x89PNG zebracorn")
    return root


@pytest.fixture
async def corpus(tmp_path: Path, corpus_dir: Path) -> CorpusIndex:
    index = CorpusIndex(tmp_path / "index" / "corpus.db", corpus_dir)
    stats = await index.reindex()
    assert stats == IndexStats(added=5)
    return index


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


# --- the chain -------------------------------------------------------------------------------------
async def test_build_only_configured_providers_in_order(backend: Backend) -> None:
    chain = build_search_chain(web_settings(backend, search_providers=["generic", "tavily", "searxng"]))
    assert [p.name for p in chain.providers] == ["generic", "searxng"]  # no tavily key
    await chain.aclose()
    everything = web_settings(
        backend,
        search_providers=["duckduckgo", "brave", "tavily", "searxng", "generic"],
        tavily_api_key="t",
        brave_api_key="b",
        duckduckgo_enabled=True,
    )
    chain = build_search_chain(everything)  # constructing DuckDuckGo sends nothing
    assert [p.name for p in chain.providers] == ["duckduckgo", "brave", "tavily", "searxng", "generic"]
    await chain.aclose()
    assert backend.server.calls == []


def test_bad_provider_url_is_a_configuration_error(backend: Backend) -> None:
    with pytest.raises(ValueError, match="searxng: URL must be absolute http"):
        build_search_chain(web_settings(backend, searxng_url="localhost:8080"))


async def test_nothing_configured_raises(backend: Backend) -> None:
    chain = build_search_chain(web_settings(backend, searxng_url="", web_search_url=""))
    with pytest.raises(AllProvidersFailed, match="no search provider is configured"):
        await chain.search("sqlite", 3)
    await chain.aclose()


async def test_first_provider_with_results_wins(backend: Backend) -> None:
    chain = build_search_chain(web_settings(backend))
    outcome = await chain.search("sqlite wal", 3)
    await chain.aclose()
    assert outcome.providers_used == ["searxng"]
    assert outcome.failures == {}
    assert [r.url for r in outcome.results] == [f"{SITE}/articles/sqlite-wal"]
    assert backend.server.calls == [("searxng", "sqlite wal")]


async def test_fallback_calls_each_provider_once_per_query(backend: Backend) -> None:
    backend.server.fail_next(503, times=100, style="searxng")
    chain = build_search_chain(web_settings(backend))
    queries = ["sqlite wal", "heat pumps", "durable workflow"]
    outcomes = [await chain.search(query, 3) for query in queries]
    await chain.aclose()
    assert backend.server.calls == [(style, q) for q in queries for style in ("searxng", "generic")]
    for outcome in outcomes:
        assert outcome.providers_used == ["generic"]
        assert outcome.failures["searxng"].startswith("HTTP 503 from")
        assert len(outcome.results) == 1


async def test_order_follows_settings(backend: Backend) -> None:
    chain = build_search_chain(web_settings(backend, search_providers=["generic", "searxng"]))
    outcome = await chain.search("heat pumps", 3)
    await chain.aclose()
    assert outcome.providers_used == ["generic"]
    assert backend.server.calls == [("generic", "heat pumps")]


async def test_empty_answer_falls_through_without_failure(backend: Backend) -> None:
    backend.server.respond_next({"results": []}, style="searxng")
    chain = build_search_chain(web_settings(backend))
    outcome = await chain.search("sqlite", 3)
    await chain.aclose()
    assert outcome.providers_used == ["generic"]
    assert outcome.failures == {}
    assert backend.server.calls == [("searxng", "sqlite"), ("generic", "sqlite")]


async def test_all_providers_fail_names_each(backend: Backend) -> None:
    backend.server.fail_next(500, times=2)
    chain = build_search_chain(web_settings(backend))
    with pytest.raises(AllProvidersFailed) as caught:
        await chain.search("sqlite", 3)
    await chain.aclose()
    assert set(caught.value.failures) == {"searxng", "generic"}
    assert "searxng: HTTP 500" in str(caught.value)
    assert "generic: HTTP 500" in str(caught.value)
    assert len(backend.server.calls) == 2


async def test_all_empty_is_an_empty_outcome(backend: Backend) -> None:
    chain = build_search_chain(web_settings(backend))
    outcome = await chain.search("nothing matches this", 3)
    await chain.aclose()
    assert (outcome.results, outcome.providers_used, outcome.failures) == ([], [], {})
    assert len(backend.server.calls) == 2


async def test_tavily_then_brave_share_one_client(backend: Backend) -> None:
    from deepresearch.search.providers import make_http_client

    client = make_http_client(TIMEOUT)
    chain = SearchChain(
        [
            TavilyProvider("bad", base_url=f"{backend.base}/tavily", client=client),
            BraveProvider(backend.server.api_key, base_url=f"{backend.base}/brave", client=client),
        ],
        http_client=client,
    )
    outcome = await chain.search("cold climate heat pump", 2)
    await chain.aclose()
    assert client.is_closed
    assert outcome.providers_used == ["brave"]
    assert "HTTP 401" in outcome.failures["tavily"]
    assert backend.server.calls == [("tavily", "cold climate heat pump"), ("brave", "cold climate heat pump")]


async def test_results_are_deduplicated_by_canonical_url(backend: Backend) -> None:
    backend.server.results_for = lambda query, n: [
        {"title": "One", "url": "https://Dup.test/page/?utm_source=feed", "snippet": "a"},
        {"title": "One again", "url": "https://dup.test:443/page#top", "snippet": "b"},
        {"title": "Two", "url": "https://dup.test/other", "snippet": "c"},
    ]
    chain = build_search_chain(web_settings(backend))
    outcome = await chain.search("dups", 5)
    await chain.aclose()
    assert [r.title for r in outcome.results] == ["One", "Two"]


# --- corpus ----------------------------------------------------------------------------------------
def test_chunking_bounds_passages() -> None:
    chunks = chunk_text(LONG_FILLER + "\n\n" + "x" * 3000)
    assert len(chunks) > 5
    assert all(len(chunk) <= PASSAGE_CHARS for chunk in chunks)
    assert "".join(chunks).count("tomatoes") == LONG_FILLER.count("tomatoes")


@pytest.mark.parametrize(
    ("query", "expected_url"),
    [
        ("write-ahead log readers", "corpus://notes/sqlite.md"),
        ("heat pumps in cold climates", "corpus://heat.txt"),
        ("resume workflow checkpoints after a crash", "corpus://page.html"),
        ("photosynthesis efficiency", "corpus://paper.pdf"),
    ],
)
async def test_corpus_ranks_the_right_document_first(
    corpus: CorpusIndex, query: str, expected_url: str
) -> None:
    results = await corpus.search(query, 5)
    assert results[0].url == expected_url
    assert results[0].provider == "corpus"
    assert results[0].snippet


async def test_corpus_titles_snippets_and_exclusions(corpus: CorpusIndex) -> None:
    (html_hit,) = await corpus.search("resuming side effects", 1)
    assert html_hit.title == "Durable checkpoints"
    assert "side effects" in html_hit.snippet
    (md_hit,) = await corpus.search("readers writer", 1)
    assert md_hit.title == "SQLite WAL notes"
    # script text, hidden files/folders and unsupported types are not indexed
    assert await corpus.search("zebracorn", 5) == []


async def test_long_document_collapses_to_best_passage(corpus: CorpusIndex) -> None:
    results = await corpus.search("quasar", 5)
    assert [r.url for r in results] == ["corpus://long.md"]
    assert "quasar" in results[0].snippet.lower()
    assert len(results[0].snippet) < PASSAGE_CHARS


async def test_incremental_reindex(corpus: CorpusIndex, corpus_dir: Path) -> None:
    assert await corpus.reindex() == IndexStats(unchanged=5)
    sqlite_md = corpus_dir / "notes" / "sqlite.md"
    stat = sqlite_md.stat()
    os.utime(sqlite_md, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touch only
    assert await corpus.reindex() == IndexStats(unchanged=5)

    sqlite_md.write_text("# SQLite notes\n\nBusy timeouts and the lighthouse keeper.\n")
    os.utime(sqlite_md, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
    (corpus_dir / "heat.txt").unlink()
    (corpus_dir / "notes" / "new.txt").write_text("Fresh notes about volcanoes.\n")
    assert await corpus.reindex() == IndexStats(added=1, updated=1, removed=1, unchanged=3)

    assert [r.url for r in await corpus.search("lighthouse", 5)] == ["corpus://notes/sqlite.md"]
    assert await corpus.search("frames appended", 5) == []  # old passages are gone
    assert await corpus.search("coefficient of performance", 5) == []
    assert [r.url for r in await corpus.search("volcanoes", 5)] == ["corpus://notes/new.txt"]
    assert await corpus.reindex() == IndexStats(unchanged=5)


async def test_unreadable_file_is_counted_once(tmp_path: Path, corpus_dir: Path) -> None:
    (corpus_dir / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    index = CorpusIndex(tmp_path / "other.db", corpus_dir)
    assert await index.reindex() == IndexStats(added=5, failed=1)
    assert await index.reindex() == IndexStats(unchanged=6)


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "AND OR NOT",
        "NEAR(write readers, 2)",
        "title:secret",
        "wal*",
        "^wal -readers +x",
        "c++ && rust || go!",
        "()",
        "{}[]",
        "'",
        "",
        "   ",
        "über résumé naïve",
        'sqlite" OR "x',
        "a" * 5000,
    ],
)
async def test_punctuation_queries_never_raise(corpus: CorpusIndex, query: str) -> None:
    assert isinstance(await corpus.search(query, 5), list)


async def test_operator_words_are_searched_as_words(corpus: CorpusIndex) -> None:
    results = await corpus.search('NEAR("write-ahead" readers) AND title:', 5)
    assert results[0].url == "corpus://notes/sqlite.md"


async def test_read_returns_document_text(corpus: CorpusIndex, corpus_dir: Path) -> None:
    doc = await corpus.read("corpus://page.html")
    assert doc.title == "Durable checkpoints"
    assert "resume after a crash" in doc.text
    assert "zebracorn" not in doc.text
    assert doc.path == (corpus_dir / "page.html").resolve()
    assert doc.modified.endswith("+00:00")
    pdf = await corpus.read("corpus://paper.pdf")
    assert "Photosynthesis efficiency in algae" in pdf.text
    md = await corpus.read("corpus://notes/sqlite.md")
    assert md.text.startswith("# SQLite WAL notes")


@pytest.mark.parametrize(
    "url",
    [
        "corpus://../outside.md",
        "corpus://notes/../../outside.md",
        "corpus:///etc/passwd",
        "corpus://",
        "corpus://missing.md",
        "corpus://image.png",
        "https://example.com/page.md",
        "notes/sqlite.md",
    ],
)
async def test_read_rejects_bad_urls(corpus: CorpusIndex, url: str) -> None:
    with pytest.raises(CorpusError):
        await corpus.read(url)


async def test_symlink_out_of_corpus_is_neither_indexed_nor_read(
    tmp_path: Path, corpus_dir: Path, corpus: CorpusIndex
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Private\n\nplatypus secrets\n")
    (corpus_dir / "link.md").symlink_to(outside)
    assert await corpus.reindex() == IndexStats(unchanged=5)
    assert await corpus.search("platypus", 5) == []
    with pytest.raises(CorpusError, match="escapes the corpus folder"):
        await corpus.read("corpus://link.md")


async def test_corpus_only_never_calls_the_web(backend: Backend, corpus: CorpusIndex) -> None:
    chain = build_search_chain(web_settings(backend), corpus=corpus, corpus_only=True)
    outcome = await chain.search("sqlite wal readers", 5)
    nothing = await chain.search("nothing at all matches", 5)
    await chain.aclose()
    assert outcome.providers_used == ["corpus"]
    assert outcome.results[0].url == "corpus://notes/sqlite.md"
    assert (nothing.results, nothing.failures) == ([], {})
    assert backend.server.calls == []


async def test_corpus_results_come_first_then_web(backend: Backend, corpus: CorpusIndex) -> None:
    chain = build_search_chain(web_settings(backend), corpus=corpus)
    outcome = await chain.search("sqlite wal heat pumps checkpoints", 2)
    await chain.aclose()
    assert outcome.providers_used == ["corpus", "searxng"]
    urls = [r.url for r in outcome.results]
    assert len(urls) == 4  # max_results from the corpus plus max_results from the web
    assert all(u.startswith("corpus://") for u in urls[:2])
    assert all(u.startswith(SITE) for u in urls[2:])
    assert backend.server.calls == [("searxng", "sqlite wal heat pumps checkpoints")]


async def test_broken_corpus_is_a_recorded_failure(
    backend: Backend, tmp_path: Path, corpus_dir: Path
) -> None:
    # the index path is a directory: SQLite cannot open it
    broken = CorpusIndex(tmp_path, corpus_dir)
    chain = build_search_chain(web_settings(backend), corpus=broken)
    outcome = await chain.search("sqlite", 3)
    await chain.aclose()
    assert outcome.providers_used == ["searxng"]
    assert "corpus" in outcome.failures
    only = build_search_chain(web_settings(backend), corpus=broken, corpus_only=True)
    with pytest.raises(AllProvidersFailed, match="corpus: "):
        await only.search("sqlite", 3)
    await only.aclose()


def test_scripted_catalogue_points_at_static_site_pages() -> None:
    from peers.search_server import CATALOGUE
    from peers.static_site import ARTICLES

    assert set(CATALOGUE) <= set(ARTICLES)
