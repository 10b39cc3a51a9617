"""Which sources a report quotes: a source that yields one weak quote while another carries the answer is a
digression (focused); the pages that explain the question in their own answering sections (explaining)."""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["SOURCE_FOCUS", "STRONG_ANSWERS", "STRONG_QUOTE", "explaining", "focused", "top_best"]

SOURCE_FOCUS = 0.3
STRONG_QUOTE = 0.85
"""A source is quoted only if its findings' total score is at least SOURCE_FOCUS of the strongest source's,
or its best finding scores at least STRONG_QUOTE of the best finding..."""
STRONG_ANSWERS = 2
"""... or at least STRONG_ANSWERS of its quotes read in the question's answering sections score that much
(see _focused: the Logging HOWTO's "Advanced Logging Tutorial", the fifth and sixth answering sections
for loggers, handlers and formatters, is the answer; bench/quality/JOURNAL.md, session 25)."""


def focused(
    groups: list[list[dict[str, Any]]],
    best_page: set[int],
    first_page: set[int],
) -> set[int]:
    """The sources worth quoting: a source that yields one weak quote while another carries the answer is
    a digression. A source weighs all its quotes, those read in an answering section (``answering``)
    too: the page that answers is mostly quoted from there, and a digression must be measured against
    that, not against the rest (dev citation precision 0.682 -> 0.690; bench/quality/JOURNAL.md, session 16).
    A source quoted only in answering sections is there by its place, not by a score, and one strong
    sentence there is not worth quoting it for (a page about something else can hold one); several are
    (STRONG_ANSWERS): a second page that explains the question in its own answering sections. The page of
    the first answering section (``first_page``) is worth quoting whatever it weighs, once it is quoted in
    any answering section; so is the page that alone holds the question's answering sections
    (``best_page``). Its first may give no sentence: a manual page's opening is its NAME line."""
    findings = [f for group in groups for f in group]
    # a source's best quote outside the answering sections (the candidates: a source quoted only there is not)
    best: dict[int, float] = {}
    for finding in findings:
        if not finding.get("answering"):
            for n in finding["citations"]:
                best[n] = max(best.get(n, 0.0), finding.get("score", 0.0))
    # all of a source's findings, answering ones too; a quote two reviewers chose counts twice (counted
    # once: dev citation precision 0.698 -> 0.671 and two gold pages lost, session 16)
    whole: Counter[int] = Counter()
    for finding in findings:
        for n in finding["citations"]:
            whole[n] += finding.get("score", 0.0)
    top_mass = max(whole.values(), default=0.0)
    strongest = top_best(findings)
    kept = {n for n in best if whole[n] >= SOURCE_FOCUS * top_mass or best[n] >= STRONG_QUOTE * strongest}
    kept |= explaining(findings)
    # ... and the page that answers best (its opening is the first answering section) always is: a short
    # page read whole is all answering sections, and would weigh nothing
    quoted = {n for f in findings if f.get("answer") for n in f["citations"]}
    first_page = first_page | {n for f in findings if f.get("answer") == 1 for n in f["citations"]}
    chosen = kept | ((first_page | best_page) & quoted)
    # a report is never left without the quotes it has: when no rule keeps a page, the strongest ones stay
    chosen = chosen or {
        n for f in findings if f.get("score", 0.0) >= STRONG_QUOTE * strongest for n in f["citations"]
    }
    return chosen


def top_best(findings: list[dict[str, Any]]) -> float:
    """What a strong quote is measured against: the best quote outside the answering sections (or of all)."""
    scored = [f.get("score", 0.0) for f in findings if not f.get("answering")]
    return max(scored, default=0.0) or max((f.get("score", 0.0) for f in findings), default=0.0)


def explaining(findings: list[dict[str, Any]]) -> set[int]:
    """The pages quoted in the question's answering sections in at least STRONG_ANSWERS different sentences
    as strong as STRONG_QUOTE of the best (a sentence two reviewers chose is one sentence)."""
    floor = STRONG_QUOTE * top_best(findings)
    strong = {
        (n, f["statement"])
        for f in findings
        if f.get("answering") and f.get("score", 0.0) >= floor
        for n in f["citations"]
    }
    return {n for n, count in Counter(n for n, _ in strong).items() if count >= STRONG_ANSWERS}
