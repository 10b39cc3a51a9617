"""The extractive reviewers: each quotes sentences of the evidence table for every sub-question.

A sentence's score weighs how much of the sub-question it names and how well its section answers the
sub-question (the passage's BM25 rank): documentation answers a question in a section, and the sentences
that explain it rarely repeat the question's words. The first sentences of the best sections are findings
even when they share few words with the question; elsewhere a sentence must name enough of it.

On the question itself, the first sentences of its answering sections (screening's ``answer`` passages)
are findings whatever words they use, in reading order: a section explains over consecutive sentences.

An aspect word of a sub-question ("limitations", "work", "configured") is not a term to match: "What are the
limitations of X?" is answered by a sentence about X that states a limit, not by one that says "limit".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from deepresearch.extractive.asking.asked import asks_about_limits, without_aspects
from deepresearch.extractive.asking.planning import question_topic
from deepresearch.extractive.bm25 import QueryWeights, Scorer, term_weights
from deepresearch.extractive.reading.sentences import NEAR_DUPLICATE, Quote, quotes
from deepresearch.extractive.reading.text import content_tokens

# words that mark a stated limit or risk, and a consequence: what the risk and implication reviewers quote
RISK_CUES = (
    "risk",
    "however",
    "but ",
    "limitation",
    "drawback",
    "concern",
    "fail",
    "cannot",
    "danger",
    "trade-off",
    "tradeoff",
    "downside",
    "caveat",
    "unless",
    "problem",
    "cost",
    # hedges and stated limits
    "may not",
    "might not",
    "not guaranteed",
    "not supported",
    "should not",
    "must not",
    "beware",
    "warning",
    "caution",
    "insecure",
    "vulnerable",
    "deprecated",
    "at the expense",
    "no effect",
    "not thread-safe",
    "will not",
    "won't",
    "is not possible",
    "at most",
    "only one",
    "without bound",
    "must be",
)
IMPLICATION_CUES = (
    "therefore",
    "means",
    "so that",
    "as a result",
    "leads to",
    "implies",
    "which allows",
    "enables",
    "consequently",
    "thus",
    "because",
    "result in",
    "allows",
)


def has_cue(sentence: str, cues: Sequence[str]) -> bool:
    lowered = f" {sentence.lower()} "
    return any(cue in lowered for cue in cues)


REVIEW_LIMITS = {"fact_reviewer": 12, "implication_reviewer": 2, "risk_reviewer": 3}
"""Findings per sub-question for each extractive reviewer."""
LIMIT_BONUS = 0.2
RELATIVE_FLOOR = 0.5
FLOOR_REFERENCE = 3
"""A finding must score at least RELATIVE_FLOOR of the FLOOR_REFERENCE-th best quote on its sub-question."""
ELABORATION_BONUS = 0.1
"""Added to a quote from a section whose heading names a term of the best quote that the question lacks."""
MIN_COVERAGE = {"fact_reviewer": 0.15, "implication_reviewer": 0.25, "risk_reviewer": 0.25}
"""Share of the sub-question's (idf-weighted) terms a quote must contain to be a finding on it..."""
ANSWERING_SECTION = 0.75
LEAD_SENTENCES = 5
"""... unless it is among the first LEAD_SENTENCES of a passage ranked ANSWERING_SECTION of the best or up."""
CONTINUATION = 0.85
CONTINUED = 6
CONTINUED_SENTENCES = 2
"""... or it is one of the CONTINUED_SENTENCES after one of the sub-question's CONTINUED best quotes in the
same passage, or in the next passage of the same section when the quote ends its own (a section is cut into
passages of about a thousand characters, and bind9-doc's "The solution to this is to add 2147483647 ..."
opens the second of its section): an explanation runs over consecutive sentences that rarely repeat the
question's words. It scores CONTINUATION of that quote's score per sentence between them."""


ANSWER_SENTENCES = 12
"""The first ANSWER_SENTENCES quotable sentences of each answering section are findings on the question: in
practice all of its first passages (screening.ANSWER_PASSAGES). 12, not 8 (session 16 went from 4 to 8): the
explanation goes on past the eighth sentence - git-config's "Includes" section states what a pattern ending
in "/" matches in its eleventh (bench/quality/JOURNAL.md, sessions 16 and 23)."""


def extractive_review(
    reviewer: str,
    sub_questions: list[str],
    evidence: list[dict[str, Any]],
    question: str = "",
    topic: str = "",
    rarity: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Quote sentences from the evidence table according to the reviewer's role: the facts that answer each
    sub-question best (fact_reviewer), consequences (implication_reviewer) or hedges and stated limits
    (risk_reviewer); picked by MMR, so they differ from each other and come from more than one source."""
    topic_phrase = topic or (question_topic(question) if question else "")
    topic_terms = set(content_tokens(topic_phrase))
    generic = term_weights(rarity)  # a word on every page of the corpus counts little
    # (sub-question, passage rank, page titled with the topic, quote, where it stands: for printing a
    # sub-question's findings in reading order - its passage's place in the evidence, its place there)
    units: list[tuple[int, float, bool, Quote, list[int]]] = []
    answer_of: dict[int, int] = {}  # id of a unit of an answering section: that section's rank
    for index in range(len(sub_questions)):
        items = [e for e in evidence if e["sub_question_index"] == index]
        top = max((e["bm25"] for e in items), default=0.0) or 1.0
        for place, item in enumerate(items):
            about = bool(topic_terms & set(content_tokens(item.get("title") or "")))
            term = item.get("term") or ""  # the term that ended the passage before (Passage.term)
            for unit in quotes(item["passage"], item["n"], item.get("headings") or (), term):
                # a section opening of the best page counts as an answering section for its first sentences
                rank = max(item["bm25"] / top, ANSWERING_SECTION if item.get("lead") else 0.0)
                units.append((index, rank, about, unit, [place, unit.position]))
                if item.get("answer") and index == 0:
                    answer_of[id(unit)] = item["answer"]
    scorer = Scorer(unit for _, _, _, unit, _ in units)
    wanted = {"implication_reviewer": IMPLICATION_CUES, "risk_reviewer": RISK_CUES}.get(reviewer)
    findings: list[dict[str, Any]] = []
    taken: list[Quote] = []
    for index, sub_question in enumerate(sub_questions):
        candidates = [unit for i, _, _, unit, _ in units if i == index]
        weights = scorer.weights(without_aspects(sub_question), question, topic_phrase, candidates, generic)
        # on "What are the limitations of X?" a stated limit answers, whatever words it uses
        limits = asks_about_limits(sub_question)
        scored: list[tuple[float, Quote]] = []
        orders: dict[int, list[int]] = {}
        # the answering sections' first sentences are findings whatever the rest picks; they join what
        # is taken after it, so that the choice among the other quotes is the same as without them
        wider = _wider(units, index)  # each quote's longest form on its page, for the answers and the rest
        answers = (
            _answers(units, answer_of, scorer, weights, taken, wider)
            if reviewer == "fact_reviewer" and index == 0
            else []
        )
        answered = {id(unit) for _, unit, _ in answers}
        for i, rank, about, unit, order in units:
            # a finding on a sub-question about limits states one (a hedge, a cost, a "cannot")
            cues = wanted or (RISK_CUES if limits else None)
            if i != index or (cues is not None and not has_cue(unit.text, cues)) or id(unit) in answered:
                continue
            coverage = scorer.coverage(unit, weights)
            # ... but it must still be about the sub-question, not any hedge on the page
            bonus = LIMIT_BONUS if limits and has_cue(unit.text, RISK_CUES) and coverage >= 0.1 else 0.0
            leading = (
                reviewer == "fact_reviewer" and rank >= ANSWERING_SECTION and unit.position < LEAD_SENTENCES
            )
            if coverage + bonus >= MIN_COVERAGE[reviewer] or leading:
                scored.append((scorer.score(unit, weights, rank, about) + bonus, unit))
                orders[id(unit)] = order
        if reviewer == "fact_reviewer" and not limits:
            mine = [(unit, order) for i, _, _, unit, order in units if i == index]
            scored = _continued(scored, mine, orders, _next_passages(evidence, index))
        # by text: two passages of a page cut alike give two quotes of one text, and an answer is one of them
        answered_texts = {unit.text for _, unit, _ in answers}
        widened = _widened(scored, wider, orders)
        scored = [pair for pair in widened if pair[1].text not in answered_texts]
        scored = _elaborations(
            sorted(scored, key=lambda pair: -pair[0]), weights.own.keys() | weights.context.keys()
        )
        # far below the sub-question's best quotes is off the point, however diverse it would make the list;
        # measured against the FLOOR_REFERENCE-th best, not the best: a source's sentence restating the
        # question outscores every sentence that explains the answer, and must not silence them
        reference = scored[min(FLOOR_REFERENCE, len(scored)) - 1][0] if scored else 0.0
        scored = [pair for pair in scored if pair[0] >= RELATIVE_FLOOR * reference]
        for score, unit in mmr(scored, REVIEW_LIMITS[reviewer], taken):
            taken.append(unit)
            finding = _finding(sub_question, unit, score, orders[id(unit)])
            # read in an answering section: quoted, but no measure of which sources carry the answer
            findings.append(finding | {"answering": True} if id(unit) in answer_of else finding)
        for score, unit, order in answers:
            taken.append(unit)
            findings.append(
                _finding(sub_question, unit, score, order)
                | {"answer": answer_of[id(unit)], "answering": True}
            )
    return {"engine": "extractive", "findings": findings, "disagreements": [], "open_questions": []}


def _finding(sub_question: str, unit: Quote, score: float, order: list[int]) -> dict[str, Any]:
    return {
        "sub_question": sub_question,
        "statement": unit.text,
        "citations": [unit.n],
        "section": unit.section,
        "score": round(score, 3),
        "order": order,
        "confidence": "medium" if score >= 0.5 else "low",
    }


def _answers(
    units: list[tuple[int, float, bool, Quote, list[int]]],
    answer_of: dict[int, int],
    scorer: Scorer,
    weights: QueryWeights,
    taken: list[Quote],
    wider: dict[int, Quote],
) -> list[tuple[float, Quote, list[int]]]:
    """The first ANSWER_SENTENCES quotes of each answering section, in reading order, scored as findings,
    each in its longest form (see ``_wider``)."""
    found: list[tuple[float, Quote, list[int]]] = []
    per_section: dict[tuple[int, int], int] = {}
    for _, rank, about, unit, order in sorted(
        (u for u in units if id(u[3]) in answer_of), key=lambda u: (answer_of[id(u[3])], u[4])
    ):
        section = (answer_of[id(unit)], unit.n)
        whole = wider.get(id(unit), unit)
        if (
            per_section.get(section, 0) >= ANSWER_SENTENCES
            or any(whole.text == t.text for t in taken)
            or any(whole.text == q.text for _, q, _ in found)
        ):
            continue
        per_section[section] = per_section.get(section, 0) + 1
        answer_of[id(whole)] = answer_of[id(unit)]
        found.append((scorer.score(whole, weights, rank, about), whole, order))
    return found


def _wider(units: list[tuple[int, float, bool, Quote, list[int]]], index: int) -> dict[int, Quote]:
    """For each quote of a sub-question's evidence, the longest quote of the same page that contains it: a
    passage cut elsewhere reads the sentence with what completes it ("it aborts in the middle. You can
    recover from this in one of two ways: ..."), and a sentence quoted alone would keep that longer quote
    out of the report (no sentence is quoted twice)."""
    mine = [unit for i, _, _, unit, _ in units if i == index]
    by_page: dict[int, list[Quote]] = {}
    for unit in mine:
        by_page.setdefault(unit.n, []).append(unit)
    wider: dict[int, Quote] = {}
    for unit in mine:
        longer = [q for q in by_page[unit.n] if len(q.text) > len(unit.text) and _holds(q.text, unit.text)]
        if longer:
            wider[id(unit)] = max(longer, key=lambda q: len(q.text))
    return wider


def _continued(
    scored: list[tuple[float, Quote]],
    candidates: list[tuple[Quote, list[int]]],
    orders: dict[int, list[int]],
    next_passage: dict[int, int],
) -> list[tuple[float, Quote]]:
    """Add the sentences right after each of the best quotes (see CONTINUATION); ``next_passage``: the place
    of the passage that goes on from the one at a place, in the same section."""
    best = sorted(scored, key=lambda pair: -pair[0])[:CONTINUED]
    following = {tuple(order): unit for unit, order in candidates}
    # a sentence that goes on from a best quote scores at least as a continuation, whether or not it also
    # names the question's words ("Generally, files have implicit handlers" after "A handler is ...")
    scores = {id(unit): (score, unit) for score, unit in scored}
    for score, unit in best:
        place, position = orders[id(unit)]
        for step in range(1, CONTINUED_SENTENCES + 1):
            position += 1
            if (place, position) not in following and place in next_passage:
                place, position = next_passage[place], 0
            after = following.get((place, position))
            if after is None or after.n != unit.n:
                break
            orders.setdefault(id(after), [place, position])
            if scores.get(id(after), (0.0, after))[0] < score * CONTINUATION**step:
                scores[id(after)] = (score * CONTINUATION**step, after)
    return list(scores.values())


def _next_passages(evidence: list[dict[str, Any]], index: int) -> dict[int, int]:
    """For each of a sub-question's passages (by its place among them), the place of the passage that comes
    right after it in the same section of the same page, when that one is evidence too."""
    items = [e for e in evidence if e["sub_question_index"] == index]
    at: dict[tuple[int, tuple[str, ...], int], int] = {}
    for place, item in enumerate(items):
        source, _, number = str(item.get("passage_id", "")).rpartition(".")
        if source and number.isdigit():
            at[(item["n"], tuple(item.get("headings") or ()), int(number))] = place
    return {
        place: at[(n, headings, number + 1)]
        for (n, headings, number), place in at.items()
        if (n, headings, number + 1) in at
    }


def _holds(longer: str, shorter: str) -> bool:
    """The longer quote holds the shorter one as whole sentences: from one of its sentence starts, not
    the end of a sentence that only ends alike ("In version one, Keepbase stores ..." does not hold
    "Keepbase stores ...")."""
    return longer.startswith(shorter) or re.search(r"[.!?:;] " + re.escape(shorter), longer) is not None


def _widened(
    scored: list[tuple[float, Quote]], wider: dict[int, Quote], orders: dict[int, list[int]]
) -> list[tuple[float, Quote]]:
    """Each scored quote in its longest form (see ``_wider``), scored as the best of the quotes it holds."""
    best: dict[int, tuple[float, Quote]] = {}
    for score, unit in scored:
        whole = wider.get(id(unit), unit)
        orders.setdefault(id(whole), orders[id(unit)])
        if id(whole) not in best or best[id(whole)][0] < score:
            best[id(whole)] = (score, whole)
    return list(best.values())


def _elaborations(scored: list[tuple[float, Quote]], asked: set[str]) -> list[tuple[float, Quote]]:
    """The best quote names the answer's terms ("a checkpoint after every stage, and a receipt for every
    call"): a section titled with one of them explains that part of the answer, and gets a small bonus."""
    if not scored:
        return scored
    answer_terms = scored[0][1].terms - asked
    return sorted(
        (
            (score + ELABORATION_BONUS, unit)
            if unit is not scored[0][1] and answer_terms & set(content_tokens(unit.section))
            else (score, unit)
            for score, unit in scored
        ),
        key=lambda pair: -pair[0],
    )


NEW_SOURCE = 0.05
"""What choosing a quote from a source the report does not cite yet costs (see mmr)."""


_NAMED_TERM = re.compile(r"[\"“‘`]([\w.<>+-]{1,40})[\"”’`]")


def named_terms(text: str) -> frozenset[str]:
    """The single names a sentence puts in quotes or code: "rise", `fall`."""
    return frozenset(name.lower() for name in _NAMED_TERM.findall(text))


def parallel(names: frozenset[str], others: frozenset[str]) -> bool:
    """Two sentences that name different things in quotes say their words of each ("The "rise" parameter
    states that a server will be considered as operational after ...", then "fall" and "dead"): no copies,
    however many words they share (HAProxy's fall was dropped as a near-copy of rise)."""
    return bool(names and others and names != others)


def similarity(a: Quote, b: Quote) -> float:
    return len(a.terms & b.terms) / len(a.terms | b.terms) if a.terms and b.terms else 0.0


def mmr(
    scored: Sequence[tuple[float, Quote]],
    limit: int,
    taken: Sequence[Quote] = (),
    lam: float = 0.75,
    new_source: float = NEW_SOURCE,
) -> list[tuple[float, Quote]]:
    """Pick up to ``limit`` quotes: relevance minus similarity to what is already picked (or ``taken``
    elsewhere), minus ``new_source`` for a source nothing picked or taken comes from yet: a report that
    rests on fewer, stronger sources cites fewer that do not answer. Near-duplicates are never picked."""
    chosen: list[tuple[float, Quote]] = []
    pool = list(scored)
    while pool and len(chosen) < limit:
        picked = [q for _, q in chosen] + list(taken)
        sources = {q.n for q in picked}

        def value(
            item: tuple[float, Quote], picked: list[Quote] = picked, sources: set[int] = sources
        ) -> float:
            score, unit = item
            redundancy = max((similarity(unit, other) for other in picked), default=0.0)
            return lam * score - (1 - lam) * redundancy - (new_source if unit.n not in sources else 0.0)

        best = max(pool, key=value)
        pool.remove(best)
        names = named_terms(best[1].text)
        if any(
            (similarity(best[1], other) >= NEAR_DUPLICATE and not parallel(names, named_terms(other.text)))
            or best[1].text == other.text
            for other in picked
        ):
            continue
        chosen.append(best)
    return chosen
