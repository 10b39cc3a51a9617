"""Extractive screening: rank the fetched sources' passages for each sub-question with BM25F.

Documents first: each fetched page is scored as a whole against the question (its title, headings, text);
a page far below the best one gives no evidence - sharing a few words with the question is no answer. Then
passages: each is scored over three fields - the source's title, the passage's heading path and its body -
against the sub-question and the topic (its aspect words left out, its verbs counting half), times its
page's relevance: the section titled like the question wins. Candidates far below a sub-question's best
passage are dropped, and so are near-copies of a better one (a section in a page's HTML and its source).

On the question itself, the openings of the best page's sections are evidence too: documentation answers
"why is X not Y" in a section called "Enabling X", which shares no word with "not Y". And so are its
answering sections: whole sections (all passages under one heading) ranked against the question, times their
page's relevance. A section that answers spreads the question's words over its paragraphs, where a passage
ranking sees one paragraph at a time (on the 30 extra development questions, the three best sections of
the page that answers hold 102 of the 139 facts asked about: bench/quality/JOURNAL.md, session 12).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from deepresearch.extractive import literals
from deepresearch.extractive.asking.asked import without_aspects
from deepresearch.extractive.asking.phrases import verb_terms
from deepresearch.extractive.asking.planning import question_topic
from deepresearch.extractive.bm25 import BM25F, named_share
from deepresearch.extractive.reading.pages import faq_entries, navigation, release_pages
from deepresearch.extractive.reading.text import (
    code_like,
    content_tokens,
    heading_passages,
    keywords,
    plain_words,
)

RELATIVE_FLOOR = 0.45
"""A candidate must score at least this share of the sub-question's best passage."""
NEAR_COPY = 0.8
"""Jaccard similarity of two passages' content words above which the lower-ranked one is a copy."""
SAME_SOURCE_DISCOUNT = 0.85
"""Each passage already kept from a source multiplies that source's next candidates by this."""
VERB_WEIGHT = 0.5
"""A verb of the sub-question counts this much of a noun: the pages say "selects" where it says "decides"
(not a word it also names as a thing, "the rename": extractive/asking/phrases.py verb_terms)."""
DOCUMENT_FLOOR = 0.35
"""A page whose relevance to the question is below this share of the best page's gives no evidence."""
DOCUMENT_WEIGHT = 0.6
"""A passage's score is multiplied by (1 - DOCUMENT_WEIGHT) + DOCUMENT_WEIGHT x its page's relevance."""
TITLE_PRIOR = 0.5
"""A page's relevance is multiplied by 1 + TITLE_PRIOR x the share of the topic's words its title names."""
SEARCH_WEIGHT = 0.6
"""A page's relevance mixes its BM25F score among the fetched pages with this share of its search rank."""
OPTION_PASSAGES = 0.02
"""At most this share of the fetched passages may hold a sub-question's options for them to put a passage
on its topic (see _holding_options): "-S and -G" are in 1.5 % of the passages git-dev's
find-commit-adding-string reads, "-f" in 2.2-2.9 % of other questions' (it forces everything)."""
LITERAL_PRIOR = 0.5
"""A page's relevance is multiplied by 1 + LITERAL_PRIOR x the share of the question's telling literals it
holds (extractive/literals.py: "v2.1-14-g2414721" is git-describe's example, one word among the question's
others; telling: held by at most a third of the fetched pages)."""
RELEASE_WEIGHT = 0.5  # a page of release notes is this much as relevant: it names everything in passing
CONTINUED, CONTINUATIONS = 3, 2
"""The CONTINUED best passages of a sub-question bring up to CONTINUATIONS more passages of their section."""
INTRO_SECTIONS = 4
"""... and the first INTRO_SECTIONS sections of the best page the ranking did not take, whatever words they
use: a guide sets up what it then explains ("Configuring your server to permit SSI", the third section of
Apache's SSI tutorial, is where "Options +Includes" is). Four, not two: dev fact recall 0.754 -> 0.760,
precision 0.704 -> 0.709 (three: 0.757, six: 0.743; bench/quality/JOURNAL.md, session 24)."""
MANY_SECTIONS = 40  # ... of a page of more sections, only those that share a word with the question
ANSWER_SECTIONS = 8
ANSWER_PASSAGES = 4
ANSWER_PAGES = 0.8
"""On the question itself, the ANSWER_SECTIONS best sections of the pages at least ANSWER_PAGES as relevant as
the best one are evidence, each with its first ANSWER_PASSAGES passages, marked ``answer`` (their rank, from
1); the best page's opening section comes first, whatever its score. (4 passages, not 2 or 3: the answer
goes on past the first passages - "There are two reasons ...: performance and security." is followed by a
paragraph on each; sessions 16 and 28, dev fact recall 0.827 -> 0.837. 8 sections, not 4: a guide
answers further down than its best four sections - the HTTP/2 guide's "MPM Configuration" for page loads
that stall - once a second page quoted there is not dropped for it, report/digest.py's STRONG_ANSWERS; dev
fact recall 0.760 -> 0.807; bench/quality/JOURNAL.md, session 25.) A table of contents is no answering
section: it names every section of a manual and says nothing (pages.navigation)."""
LEAD_PAGES, LEAD_SECTIONS = 0.8, 6
"""On the question itself, the openings of up to LEAD_SECTIONS sections of the pages at least LEAD_PAGES as
relevant as the best one are evidence too."""


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
    opening: NotRequired[bool]  # the first passage of its section
    lead: NotRequired[bool]  # evidence as a section opening of the best page, not by its own rank
    page: NotRequired[float]  # its page's relevance to the question (0..1 of the best page's)
    answer: NotRequired[int]  # in one of the question's answering sections: that section's rank, from 1
    term: NotRequired[str]  # the term line that ended the passage before it (Passage.term)


def passages_of(sources: Sequence[dict[str, Any]]) -> list[PassageRecord]:
    """Every fetched source's passages, cut by section, with the source's number and title."""
    records = []
    for s in sources:
        previous: tuple[str, ...] | None = None
        for i, p in enumerate(heading_passages(s["text"]), start=1):
            records.append(
                PassageRecord(
                    passage_id=f"{s['id']}.{i}",
                    source_id=s["id"],
                    n=s["n"],
                    title=s.get("title") or "",
                    headings=list(p.headings),
                    text=p.text,
                    opening=p.headings != previous,
                )
                | ({"term": p.term} if p.term else {})
            )
            previous = p.headings
    return records


def rank_sources(
    question: str,
    sub_questions: Sequence[str],
    sources: Sequence[dict[str, Any]],
    limits: Sequence[int],
    topic: str = "",
    found: Mapping[int, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[list[list[tuple[float, PassageRecord]]]]:
    """The sources cut into passages and ranked once per limit in `limits`: a stage's whole CPU work in
    one call, so it makes one trip to a CPU worker (deepresearch/cpu.py). ``found``: how well the search
    ranked each source (0..1, by its number), see document_relevance; ``weights``: how much each word
    counts (bm25.term_weights)."""
    passages = passages_of(sources)
    return [
        rank_passages(question, sub_questions, passages, limit, topic, found, weights) for limit in limits
    ]


def search_priors(
    results: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]]
) -> dict[int, float]:
    """How well the search ranked each fetched source, 0..1 of the best: the queries that found it and its
    best rank. The search saw the whole corpus (or the web); screening sees only what was fetched, where a
    word every fetched page shares tells nothing."""
    by_url = {r["url"]: r for r in results}
    raw = {}
    for source in sources:
        result = by_url.get(source["url"])
        raw[source["n"]] = (
            len(result.get("queries", [])) + 1 / max(result.get("rank", 99), 1) if result else 0.0
        )
    best = max(raw.values(), default=0.0) or 1.0
    return {n: value / best for n, value in raw.items()}


def _query(
    sub_question: str, focus: str, topic_terms: set[str], generic: Mapping[str, float] | None = None
) -> dict[str, float]:
    """The sub-question's terms (its aspect words left out), a verb counting VERB_WEIGHT, and the topic's
    when the sub-question names none of it ("Can the search be automated?" is about git bisect; "What is the
    worker module?" is about the worker module, not every module the question compares)."""
    own = content_tokens(without_aspects(sub_question))
    weights = dict.fromkeys(own if topic_terms & set(own) else [*own, *content_tokens(focus)], 1.0)
    for term in verb_terms(sub_question):
        if term in weights and term not in topic_terms:
            weights[term] = VERB_WEIGHT
    scale = {
        t: w for t, w in (generic or {}).items() if t not in topic_terms
    }  # the topic's words count fully
    return {term: weight * scale.get(term, 1.0) for term, weight in weights.items()}


def document_relevance(
    question: str,
    passages: Sequence[PassageRecord],
    focus: str,
    topic_terms: set[str],
    found: Mapping[int, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> dict[int, float]:
    """Each page's relevance to the question, 0..1 of the best page's: BM25F over the whole page (its title,
    all its headings, its prose) against the question and the topic, mixed with how well the search ranked
    it (``found``, which saw the whole corpus: among the fetched pages every one has the question's words),
    times the title prior - the share of the topic's words the title names, a word on every page of the
    corpus counting little ("git-gc(1)" names "git gc", "git-config(1)" only "git")."""
    pages: dict[int, dict[str, list[str]]] = {}
    titles: dict[int, str] = {}
    for p in passages:
        page = pages.setdefault(p["n"], {"title": list(_tokens(p["title"])), "headings": [], "body": []})
        titles.setdefault(p["n"], p["title"])
        if p.get("opening", True):
            page["headings"] += _tokens(p["headings"][-1] if p["headings"] else "")
        page["body"] += _tokens(_prose(p["text"]))
    numbers = list(pages)
    raw = BM25F([pages[n] for n in numbers]).scores(_query(question, focus, topic_terms, weights))
    best = max(raw, default=0.0) or 1.0
    local = {n: score / best for n, score in zip(numbers, raw, strict=True)}
    words = plain_words(focus)
    scores = {
        n: ((1 - SEARCH_WEIGHT) * local[n] + SEARCH_WEIGHT * found.get(n, 0.0) if found else local[n])
        * (1 + TITLE_PRIOR * named_share(words, plain_words(titles[n]), weights))
        for n in numbers
    }
    for n, share in literals.page_shares(question, passages).items():
        scores[n] *= 1 + LITERAL_PRIOR * share
    for n in release_pages(passages):
        scores[n] *= RELEASE_WEIGHT
    top = max(scores.values(), default=0.0) or 1.0
    return {n: value / top for n, value in scores.items()}


def _holding_options(sub_question: str, passages: Sequence[PassageRecord]) -> set[int]:
    """The passages that hold every option the sub-question names, when few do (OPTION_PASSAGES): they are on
    its topic whatever else they say - git-log's entry on -S and -G does not say "function call"."""
    named = literals.options(sub_question)
    if not named:
        return set()
    found = {i for i, p in enumerate(passages) if all(literals.holds_option(p["text"], o) for o in named)}
    return found if len(found) <= OPTION_PASSAGES * len(passages) else set()  # "-f" is everywhere


def rank_passages(
    question: str,
    sub_questions: Sequence[str],
    passages: Sequence[PassageRecord],
    limit: int,
    topic: str = "",
    found: Mapping[int, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[list[tuple[float, PassageRecord]]]:
    """For each sub-question, its best passages as (score, passage), best first (see the module docstring);
    on the first, the section openings of the best pages follow, marked ``lead``."""
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
    topic_terms = set(content_tokens(focus))
    # a passage must name the topic (in its title, headings or text) to be evidence on it - or be a section
    # of a page whose opening names all of it: a project's own documents rarely repeat its name in every
    # section (a page that merely mentions one of the topic's words does not lend it to all its sections)
    opening: dict[int, set[str]] = {}
    for i, p in enumerate(passages):
        opening.setdefault(p["n"], topic_terms if topic_terms and topic_terms <= bodies[i] else set())
    fields = [
        set(_tokens(f"{p['title']} {' '.join(p['headings'])}")) | bodies[i] | opening[p["n"]]
        for i, p in enumerate(passages)
    ]
    relevance = document_relevance(question, passages, focus, topic_terms, found, weights)
    for p in passages:
        p["page"] = round(relevance[p["n"]], 3)
    ranked_per_sq: list[list[tuple[float, PassageRecord]]] = []
    for number, sub_question in enumerate(sub_questions):
        raw = index.scores(_query(sub_question, focus, topic_terms, weights))
        optioned = _holding_options(sub_question, passages)
        pages = _member_relevance(sub_question, passages, topic_terms, found, weights, relevance)
        scores = [
            score * (1 - DOCUMENT_WEIGHT + DOCUMENT_WEIGHT * pages[p["n"]])
            for score, p in zip(raw, passages, strict=True)
        ]
        best = max(scores, default=0.0)
        pool = [
            i
            for i in range(len(passages))
            if scores[i] > 0
            and scores[i] >= RELATIVE_FLOOR * best
            and pages[passages[i]["n"]] >= DOCUMENT_FLOOR
            and (not topic_terms or topic_terms & fields[i] or i in optioned)
        ]
        kept = _diverse(pool, scores, passages, bodies, limit)
        ranked = [(scores[i], passages[i]) for i in kept]
        ranked += _continuations(passages, kept, scores)
        if number == 0:
            ranked += _leads(passages, scores, relevance, fields, topic_terms, set(kept))
            ranked = _with_answers(
                ranked, _answer_sections(passages, relevance, _query(question, focus, topic_terms, weights))
            )
        ranked_per_sq.append(ranked)
    return ranked_per_sq


def _member_relevance(
    sub_question: str,
    passages: Sequence[PassageRecord],
    topic_terms: set[str],
    found: Mapping[int, float] | None,
    weights: Mapping[str, float] | None,
    relevance: Mapping[int, float],
) -> Mapping[int, float]:
    """The pages' relevance for a sub-question about part of the topic - mostly one of the things the
    question compares ("What is the prefork MPM?" when it compares three): the better of each page's
    relevance to the question and to the sub-question, so the page about that one thing is read for it
    (Apache's prefork page, not only the page on all three MPMs: bench/quality/JOURNAL.md, session 26)."""
    own = set(content_tokens(without_aspects(sub_question))) & topic_terms
    if not own or own == topic_terms:
        return relevance
    narrower = document_relevance(sub_question, passages, " ".join(sorted(own)), own, found, weights)
    return {n: max(value, narrower[n]) for n, value in relevance.items()}


def _diverse(
    pool: list[int],
    scores: list[float],
    passages: Sequence[PassageRecord],
    bodies: list[set[str]],
    limit: int,
) -> list[int]:
    """The best of the pool, a source's next passage counting a little less (good passages of a second page
    get a turn), near-copies of a kept passage left out; best first."""
    kept: list[int] = []
    per_source: dict[int, int] = {}
    while pool and len(kept) < limit:
        i = max(pool, key=lambda j: scores[j] * SAME_SOURCE_DISCOUNT ** per_source.get(passages[j]["n"], 0))
        pool.remove(i)
        if any(_jaccard(bodies[i], bodies[j]) >= NEAR_COPY for j in kept):
            continue
        kept.append(i)
        per_source[passages[i]["n"]] = per_source.get(passages[i]["n"], 0) + 1
    return sorted(kept, key=lambda i: -scores[i])


def _continuations(
    passages: Sequence[PassageRecord], kept: list[int], scores: list[float]
) -> list[tuple[float, PassageRecord]]:
    """The rest of the best passages' sections: an answering section goes on after its first passage
    ("There are two reasons to prefer the main configuration file: performance and security ...") in words
    that no longer repeat the question's. Marked ``lead``: their first sentences are findings like the
    section's opening ones."""
    found: list[tuple[float, PassageRecord]] = []
    chosen = set(kept)
    for i in kept[:CONTINUED]:
        j = i + 1
        while j < len(passages) and j - i <= CONTINUATIONS and not passages[j].get("opening", True):
            if passages[j]["n"] != passages[i]["n"]:
                break
            if j not in chosen:
                chosen.add(j)
                found.append((scores[i] * 0.9, PassageRecord(**passages[j], lead=True)))
            j += 1
    return found


def _leads(
    passages: Sequence[PassageRecord],
    scores: list[float],
    relevance: dict[int, float],
    fields: list[set[str]],
    topic_terms: set[str],
    kept: set[int],
) -> list[tuple[float, PassageRecord]]:
    """The openings of the best pages' sections that name the topic, in page order, marked ``lead``; first
    the best page's INTRO_SECTIONS first sections, whether or not they name it."""
    leads = []
    # the best page's first sections state what it is about, in its own words, whatever the question's
    best = max(relevance, key=lambda n: relevance[n]) if relevance else None
    intro = [
        i
        for i, p in enumerate(passages)
        if p["n"] == best
        and p.get("opening")
        and p["headings"]
        and i not in kept
        # a table of contents names every section of a manual and says nothing (session 28)
        and not navigation(p["headings"])
    ]
    # ... unless it is a reference of many entries (Flask's api.html, Borg's FAQ): its first sections are
    # entries of their own ("aborter", "aborter_class"), not a guide setting up what it explains
    sections = sum(1 for p in passages if p["n"] == best and p.get("opening"))
    intro = [i for i in intro if scores[i] > 0 or sections <= MANY_SECTIONS][:INTRO_SECTIONS]
    for i in intro:
        leads.append((scores[i], PassageRecord(**passages[i], lead=True)))
    for i, p in enumerate(passages):
        if len(leads) >= LEAD_SECTIONS + len(intro):
            break
        if (
            i in kept
            or i in intro
            or not p.get("opening")
            or relevance[p["n"]] < LEAD_PAGES
            or not p["headings"]
            or navigation(p["headings"])
        ):
            continue
        if topic_terms and not topic_terms & fields[i]:
            continue
        leads.append((scores[i], PassageRecord(**p, lead=True)))
    return leads


def _answer_sections(
    passages: Sequence[PassageRecord], relevance: Mapping[int, float], query: Mapping[str, float]
) -> list[tuple[float, PassageRecord]]:
    """The question's answering sections (see ANSWER_SECTIONS): BM25F over whole sections - the page's
    title, the heading path, the prose of all the section's passages - times the page's relevance; a page
    below ANSWER_PAGES gives none. Their first passages, marked ``answer`` and ``lead``: the best page's
    opening section first, then the best sections."""
    sections: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for i, p in enumerate(passages):
        if relevance[p["n"]] >= ANSWER_PAGES and not navigation(p["headings"]):
            sections.setdefault((p["n"], tuple(p["headings"])), []).append(i)
    keys = list(sections)
    index = BM25F(
        [
            {
                "title": list(_tokens(passages[sections[key][0]]["title"])),
                "headings": list(_tokens(" ".join(key[1]))),
                "body": [t for i in sections[key] for t in _tokens(_prose(passages[i]["text"]))],
            }
            for key in keys
        ]
    )
    scores = [score * relevance[key[0]] for score, key in zip(index.scores(query), keys, strict=True)]
    ranked = sorted((i for i in range(len(keys)) if scores[i] > 0), key=lambda i: -scores[i])
    # a section headed by a question answers that question: on a page of them (an FAQ) the best one is the
    # answer, the next ones answer other questions ("What's the expected backup performance?" for "How can
    # a cron job give borg the password?") - where a guide's next sections go on with the same answer
    # (not a guide's one section titled by a question: BIND's one-page DNSSEC guide, faq_entries)
    entries, asked, best = faq_entries(keys), set(), []
    for i in ranked:
        if i in entries:
            if keys[i][0] in asked:
                continue
            asked.add(keys[i][0])
        best.append(i)
    best = best[:ANSWER_SECTIONS]
    # the page that answers best says what it is about in its opening section, in its own words ("They
    # are stored in an internal httpd structure" answers "are they real OS environment variables?")
    top = max(relevance, key=lambda n: relevance[n], default=None)
    opening = next((i for i, key in enumerate(keys) if key[0] == top and key[1]), None)
    # ... not a reference of many entries, whose opening says what the manual holds ("This part of the
    # documentation covers all the interfaces of Flask"), unless it shares a word with the question
    if opening is not None and scores[opening] <= 0 and sum(key[0] == top for key in keys) > MANY_SECTIONS:
        opening = None
    best = [opening, *(i for i in best if i != opening)] if opening is not None else best
    return [
        (scores[i], PassageRecord(**passages[j], lead=True, answer=rank))
        for rank, i in enumerate(best, start=1)
        for j in sections[keys[i]][:ANSWER_PASSAGES]
    ]


def _with_answers(
    ranked: list[tuple[float, PassageRecord]], answers: list[tuple[float, PassageRecord]]
) -> list[tuple[float, PassageRecord]]:
    """The ranked passages with the answering sections' marked: one already ranked keeps its place and
    score and takes the mark, the others follow."""
    marks = {p["passage_id"]: p["answer"] for _, p in answers}
    present = {p["passage_id"] for _, p in ranked}
    marked = [
        (score, PassageRecord(**p, answer=marks[p["passage_id"]]) if p["passage_id"] in marks else p)
        for score, p in ranked
    ]
    return marked + [(score, p) for score, p in answers if p["passage_id"] not in present]


def _prose(text: str) -> str:
    """The passage without its code samples: a page's examples repeat the API's names dozens of times and
    would outrank the paragraph that explains them."""
    return "\n".join(line for line in text.splitlines() if not code_like(line))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
