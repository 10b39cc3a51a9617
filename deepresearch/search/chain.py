"""The search chain: the local corpus (always, when given) plus the first web provider that answers."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

import httpx

from deepresearch.search.base import (
    AllProvidersFailed,
    ProviderError,
    SearchOutcome,
    SearchProvider,
    SearchResult,
    canonical_url,
)
from deepresearch.search.corpus import CorpusError, CorpusIndex
from deepresearch.search.providers import ALL_SETTINGS, MCP_PROVIDERS, PROVIDERS, make_http_client

if TYPE_CHECKING:
    from config import Settings

__all__ = ["SearchChain", "build_search_chain"]

logger = logging.getLogger(__name__)

CORPUS_SOURCE = "corpus"
NO_SOURCE_MESSAGE = (
    f"no search provider is configured: set {ALL_SETTINGS}, enable DEEPRESEARCH_DUCKDUCKGO_ENABLED, "
    "or give a corpus folder"
)


class SearchChain:
    """Searches the corpus (if any) and then the web providers in order until one returns hits.

    Result list: corpus hits first (at most ``max_results``), then the winning web provider's hits
    (at most ``max_results``), de-duplicated by :func:`canonical_url`; so at most ``2 * max_results``.
    ``providers_used`` names the sources whose hits are in the list; ``failures`` every source that
    raised. :class:`AllProvidersFailed` is raised only when every source tried raised.
    """

    def __init__(
        self,
        providers: Sequence[SearchProvider],
        corpus: CorpusIndex | None = None,
        corpus_only: bool = False,
        *,
        http_client: httpx.AsyncClient | None = None,
        passthrough: tuple[type[BaseException], ...] = (),
    ) -> None:
        if corpus_only and corpus is None:
            raise ValueError("corpus_only needs a corpus")
        self.providers: tuple[SearchProvider, ...] = tuple(providers)
        self.corpus = corpus
        self.corpus_only = corpus_only
        self._http_client = http_client  # owned: closed by aclose()
        self.passthrough = passthrough
        """Exceptions that are no provider's failure (a cancel, a budget: a provider that makes its calls
        through the run's receipts raises them) and must stop the search, not move on to the next."""

    async def search(self, query: str, max_results: int) -> SearchOutcome:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        outcome = SearchOutcome(query=query, results=[], providers_used=[], failures={})
        if not query.strip():
            logger.warning("search: empty query, nothing to search")
            return outcome
        attempted = 0
        found: list[SearchResult] = []
        if self.corpus is not None:
            attempted += 1
            try:
                hits = await self.corpus.search(query, max_results)
            except (CorpusError, sqlite3.Error, OSError) as exc:
                outcome.failures[CORPUS_SOURCE] = f"{type(exc).__name__}: {exc}"
                logger.warning("search: corpus failed for %r: %s", query, exc)
            else:
                if hits:
                    found.extend(hits[:max_results])
                    outcome.providers_used.append(CORPUS_SOURCE)
        if not self.corpus_only:
            for provider in self.providers:
                attempted += 1
                hits = await self._try_provider(provider, query, max_results, outcome.failures)
                if hits:
                    found.extend(hits[:max_results])
                    outcome.providers_used.append(provider.name)
                    break
        if attempted == 0:
            raise AllProvidersFailed({"configuration": NO_SOURCE_MESSAGE})
        if len(outcome.failures) == attempted:
            raise AllProvidersFailed(outcome.failures)
        outcome.results = _dedupe(found)
        return outcome

    async def _try_provider(
        self, provider: SearchProvider, query: str, max_results: int, failures: dict[str, str]
    ) -> list[SearchResult]:
        try:
            hits = await provider.search(query, max_results)
        except self.passthrough:
            raise
        except ProviderError as exc:
            failures[provider.name] = exc.message
            # expected (offline, rate limits): kept in the outcome's failures and shown in the events
            logger.info("search: %s failed for %r: %s", provider.name, query, exc.message)
            return []
        except Exception as exc:
            # a buggy or foreign provider must not sink the chain: record it, log the traceback, go on
            failures[provider.name] = f"{type(exc).__name__}: {exc}"
            logger.warning("search: %s crashed for %r", provider.name, query, exc_info=True)
            return []
        if not hits:
            logger.info("search: %s had no results for %r; trying the next provider", provider.name, query)
        return hits

    async def aclose(self) -> None:
        for provider in self.providers:
            closer = getattr(provider, "aclose", None)
            if closer is not None:
                await closer()
        if self._http_client is not None:
            await self._http_client.aclose()


def _dedupe(results: Sequence[SearchResult]) -> list[SearchResult]:
    seen: set[str] = set()
    unique: list[SearchResult] = []
    for result in results:
        key = canonical_url(result.url)
        if key not in seen:
            seen.add(key)
            unique.append(result)
    return unique


def build_search_chain(
    settings: Settings,
    *,
    corpus: CorpusIndex | None = None,
    corpus_only: bool = False,
    mcp: Sequence[SearchProvider] = (),
    passthrough: tuple[type[BaseException], ...] = (),
) -> SearchChain:
    """The chain of the configured providers, in ``settings.search_providers`` order.

    A provider is built only when configured (URL/key present, DuckDuckGo enabled); all HTTP
    providers share one client, closed by :meth:`SearchChain.aclose`. ``mcp``: the run's MCP search
    providers (deepresearch.mcpclient, built with the run's receipts), in the chain at the ``mcp`` entry.
    """
    # the run's own corpus_only decides (ResearchOptions already defaults it from settings.corpus_only)
    if corpus_only:
        return SearchChain([], corpus=corpus, corpus_only=True)
    timeout = settings.search_timeout_seconds
    client = make_http_client(timeout, settings.fetch_user_agent)
    # a malformed provider URL raises ValueError here: a configuration error, reported at build time
    # (the client has opened no connection yet, so there is nothing to release)
    providers: list[SearchProvider] = []
    for name in dict.fromkeys(settings.search_providers):
        if name == MCP_PROVIDERS:
            providers.extend(mcp)
        elif (provider := _build_provider(name, settings, client)) is not None:
            providers.append(provider)
    logger.info("search chain: %s", ", ".join(p.name for p in providers) or "(no web provider)")
    return SearchChain(
        providers, corpus=corpus, corpus_only=False, http_client=client, passthrough=passthrough
    )


def _build_provider(name: str, settings: Settings, client: httpx.AsyncClient) -> SearchProvider | None:
    provider = next((p for p in PROVIDERS if p.name == name), None)
    return provider.from_settings(settings, client) if provider is not None else None
