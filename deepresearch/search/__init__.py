"""Search: web providers behind a fallback chain, plus a local full-text corpus.

``build_search_chain(settings, corpus=...)`` is the entry point; see :class:`SearchChain` for the
merge/fallback rules and :class:`CorpusIndex` for the corpus.
"""

from __future__ import annotations

from deepresearch.search.base import (
    AllProvidersFailed,
    ProviderError,
    SearchOutcome,
    SearchProvider,
    SearchResult,
    canonical_url,
)
from deepresearch.search.chain import SearchChain, build_search_chain
from deepresearch.search.corpus import CorpusDocument, CorpusError, CorpusIndex, IndexStats
from deepresearch.search.providers import (
    BraveProvider,
    DuckDuckGoProvider,
    GenericProvider,
    SearxngProvider,
    TavilyProvider,
)

__all__ = [
    "AllProvidersFailed",
    "BraveProvider",
    "CorpusDocument",
    "CorpusError",
    "CorpusIndex",
    "DuckDuckGoProvider",
    "GenericProvider",
    "IndexStats",
    "ProviderError",
    "SearchChain",
    "SearchOutcome",
    "SearchProvider",
    "SearchResult",
    "SearxngProvider",
    "TavilyProvider",
    "build_search_chain",
    "canonical_url",
]
