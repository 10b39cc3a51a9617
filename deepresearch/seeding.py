"""What a follow-up run need not search for: the sources it starts with (the original run's) already
cover a query when the query ran before, or when at least two of them contain every content word of it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .extractive import content_tokens

COVERING_SOURCES = 2
"""Sources that must contain a query's words for it to count as covered (as reflection's thin test)."""


def uncovered_queries(
    queries: Iterable[str], sources: Iterable[Mapping[str, Any]], searched: Iterable[str]
) -> list[str]:
    """The queries still worth searching, in their order."""
    done = {q.casefold() for q in searched}
    vocabularies = [set(content_tokens(f"{s.get('title', '')} {s.get('text', '')}")) for s in sources]
    left = []
    for query in queries:
        if query.casefold() in done:
            continue
        words = set(content_tokens(query))
        covering = sum(1 for vocabulary in vocabularies if words and words <= vocabulary)
        if covering < COVERING_SOURCES:
            left.append(query)
    return left
