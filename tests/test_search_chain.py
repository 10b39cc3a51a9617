"""The search fallback chain (deepresearch/search/chain.py): which providers it builds, in what order it
asks them, what it does with failures, empty answers and duplicates; every provider talks real HTTP to
the scripted search server on 127.0.0.1 (peers/search_server.py)."""

from __future__ import annotations

import pytest

from deepresearch.search import (
    AllProvidersFailed,
    BraveProvider,
    SearchChain,
    TavilyProvider,
    build_search_chain,
)
from tests._search_helpers import SITE, TIMEOUT, Backend, web_settings


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
