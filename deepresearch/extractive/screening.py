"""Extractive screening: rank the fetched sources' passages for each sub-question with BM25F.

Each passage is scored over three fields - the source's title, the passage's heading path and its body - so
the section titled like the question wins. Candidates far below a sub-question's best passage are dropped
(they are what made reports cite pages that do not answer the question), and so are near-copies of a
better candidate (the same section in a page's HTML and in its reStructuredText source).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, TypedDict

from deepresearch.extractive.planning import question_topic
from deepresearch.extractive.sentences import code_like
from deepresearch.extractive.text import BM25F, content_tokens, heading_passages, keywords

RELATIVE_FLOOR = 0.45
"""A candidate must score at least this share of the sub-question's best passage."""
NEAR_COPY = 0.8
"""Jaccard similarity of two passages' content words above which the lower-ranked one is a copy."""


SAME_SOURCE_DISCOUNT = 0.85
"""Each passage already kept from a source multiplies that source's next candidates by this."""


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    # a passage is ranked again in every later round and for the wider extractive pool: tokenised once per
    # process (the CPU pool's worker keeps the cache between calls); bounded, and thread-safe
    return tuple(content_tokens(text))


class PassageRecord(TypedDict):
    passage_id: str
    source_id: str
    n: int
    title: str
    headings: list[str]
    text: str


def passages_of(sources: Sequence[dict[str, Any]]) -> list[PassageRecord]:
    """Every fetched source's passages, cut by section, with the source's number and title."""
    return [
        PassageRecord(
            passage_id=f"{s['id']}.{i}",
            source_id=s["id"],
            n=s["n"],
            title=s.get("title") or "",
            headings=list(p.headings),
            text=p.text,
        )
        for s in sources
        for i, p in enumerate(heading_passages(s["text"]), start=1)
    ]


def rank_sources(
    question: str,
    sub_questions: Sequence[str],
    sources: Sequence[dict[str, Any]],
    limits: Sequence[int],
    topic: str = "",
) -> list[list[list[tuple[float, PassageRecord]]]]:
    """The sources cut into passages and ranked once per limit in `limits`: a stage's whole CPU work in
    one call, so it makes one trip to a CPU worker (deepresearch/cpu.py)."""
    passages = passages_of(sources)
    return [rank_passages(question, sub_questions, passages, limit, topic) for limit in limits]


def rank_passages(
    question: str,
    sub_questions: Sequence[str],
    passages: Sequence[PassageRecord],
    limit: int,
    topic: str = "",
) -> list[list[tuple[float, PassageRecord]]]:
    """For each sub-question, its best passages as (score, passage), best first: BM25F over title,
    headings and body against the sub-question plus the question's topic."""
    index = BM25F(
        [
            {
                "title": list(_tokens(p["title"])),
                "headings": list(_tokens(" ".join(p["headings"]))),
                "body": list(_tokens(_prose(p["text"]))),
            }
            for p in passages
        ]
    )
    bodies = [set(_tokens(p["text"])) for p in passages]
    # the topic, not every word of the question: "its limitations" must not pull every sub-question
    # to the one section on limitations
    focus = " ".join(keywords(topic or question_topic(question), 6))
    # a passage must name the topic (in its title, headings or text) to be evidence on it - or be a section
    # of a page whose opening names all of it: a project's own documents rarely repeat its name in every
    # section (a page that merely mentions one of the topic's words does not lend it to all its sections)
    topic_terms = set(content_tokens(focus))
    opening: dict[int, set[str]] = {}
    for i, p in enumerate(passages):
        opening.setdefault(p["n"], topic_terms if topic_terms and topic_terms <= bodies[i] else set())
    fields = [
        set(_tokens(f"{p['title']} {' '.join(p['headings'])}")) | bodies[i] | opening[p["n"]]
        for i, p in enumerate(passages)
    ]
    ranked_per_sq: list[list[tuple[float, PassageRecord]]] = []
    for sub_question in sub_questions:
        scores = index.scores(f"{sub_question} {focus}")
        best = max(scores, default=0.0)
        pool = [
            i
            for i in range(len(passages))
            if scores[i] > 0
            and scores[i] >= RELATIVE_FLOOR * best
            and (not topic_terms or topic_terms & fields[i])
        ]
        kept: list[int] = []
        per_source: dict[int, int] = {}
        while pool and len(kept) < limit:
            # a source's next passage counts a little less: good passages of a second page get a turn
            i = max(
                pool, key=lambda j: scores[j] * SAME_SOURCE_DISCOUNT ** per_source.get(passages[j]["n"], 0)
            )
            pool.remove(i)
            if any(_jaccard(bodies[i], bodies[j]) >= NEAR_COPY for j in kept):
                continue
            kept.append(i)
            per_source[passages[i]["n"]] = per_source.get(passages[i]["n"], 0) + 1
        kept.sort(key=lambda i: -scores[i])
        ranked_per_sq.append([(scores[i], passages[i]) for i in kept])
    return ranked_per_sq


def _prose(text: str) -> str:
    """The passage without its code samples: a page's examples repeat the API's names dozens of times and
    would outrank the paragraph that explains them."""
    return "\n".join(line for line in text.splitlines() if not code_like(line))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
