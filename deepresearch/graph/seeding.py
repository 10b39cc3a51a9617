"""What a follow-up run need not search for: the sources it starts with (the original run's) cover a
query when the query ran before, or when one of those pages already holds every content word of it (the
page a search for it would most likely find again)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from deepresearch.extractive.reading.text import content_tokens


def uncovered_queries(
    queries: Iterable[str], sources: Iterable[Mapping[str, Any]], searched: Iterable[str]
) -> list[str]:
    """The queries still worth searching, in their order."""
    done = {q.casefold() for q in searched}
    vocabularies = [set(content_tokens(f"{s.get('title', '')} {s.get('text', '')}")) for s in sources]
    left = []
    for query in queries:
        words = set(content_tokens(query))
        if query.casefold() in done or (words and any(words <= v for v in vocabularies)):
            continue
        left.append(query)
    return left
