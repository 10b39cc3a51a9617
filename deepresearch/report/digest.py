"""The extractive report body: every line a quote of a fetched source, or a fixed rule.

- **Summary**: the quotes that answer the question most directly, in a few hundred characters (_summary).
- **Findings**: per sub-question, its other quotes in reading order (the order of the sections they come
  from, then of the sentences in a section); a stated limit goes under the sub-question that asks for limits.
  The question's answering sections (findings.ANSWER_SENTENCES of each) are listed there whatever the budget.
  A sub-question whose only quotes went to the summary is left out rather than answered with a note.
- **Side questions keep to the answer's sources**: an aspect the extractive planner added ("What is X?", "What
  are the limitations of X?") quotes only the sources quoted on the question's own clauses, or a page whose
  title names what it asks about - a page found only through "What is X?" explains X, not the question.
- **Disagreements and risks**: warnings and stated dangers only (data loss, corruption, security, "must
  not"), or a plain "none found" - a hedge like "but" or "only one" is not a risk.

No sentence is quoted twice, and a source whose one weak quote is a digression is left out; so is one the
report would quote once or twice beside a source it quotes three times as often (composed again without it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from deepresearch.extractive.asking.asked import asks_about_limits, without_aspects
from deepresearch.extractive.asking.comparison import WEIGHS
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.asking.wordclasses import tokens
from deepresearch.extractive.bm25 import GENERIC_SHARE, term_weights
from deepresearch.extractive.inflection import listed
from deepresearch.extractive.reading.text import content_tokens, split_sentences
from deepresearch.options import DEFAULT_REVIEWERS
from deepresearch.report.focus import explaining, focused
from deepresearch.report.lines import Ledger, cite, paragraphs, passages_by_place, reading_order

SUMMARY_CLAIMS = 5
SUMMARY_CHARS = 400
SUMMARY_FLOOR = 0.5
"""The summary quotes at most SUMMARY_CLAIMS sentences, stops once they hold SUMMARY_CHARS characters, and
takes none scoring under SUMMARY_FLOOR of the best one's (the question's words it names count twice)."""
NARRATION = 0.5
"""A tutorial's narration ("In this section, we'll ...", "Let's try calling panic! ...") is worth this much
less to the summary: it says what the page does next, not the answer (the Rust book's Summaries led with it)
- "In this section" alone is no narration: "In this section, ServerName is inherited ..." answers."""
CONTEXT_WORD = 0.5
"""A word of the question's context ("I run BIND as a caching resolver for a small office ...") counts this
much of one in a sentence that asks ("How do I configure forwarding ...?") to the summary: the context had
picked "Support for Large Packets" and "synth-from-dnssec" over the forward option's entry (session 44)."""
_NARRATES = re.compile(
    r"(?:(?:in|for) this (?:section|chapter|tutorial|part|example),? )?(?:let[’']s|let us|we[’']ll|we will|"
    r"we[’']re going to|we are going to|now,? we|next,? we|first,? we|here,? we)\b"
    r"(?! (?:recap|review|summari[sz]e|sum up)\b)",  # "Let's recap what we've discussed ...:" answers
    re.IGNORECASE,
)
FINDINGS_BUDGET = 32
FINDINGS_PER_SUB_QUESTION = (4, 10)
"""Quotes under Findings: FINDINGS_BUDGET shared among the sub-questions, each between these bounds."""
STRAY_BESIDE = 3
"""A source quoted once or twice where another is quoted this many times as often is left out (_stray)..."""
RARE_WORD = 0.05
"""... unless its title names a word of the question on at most this share of the corpus's pages."""
RISKS_LISTED = 4
QUOTED_ABOVE = "Its answers are quoted above."
NOT_ANSWERED = "The passages read for it quote no answer to it."
READ_ABOVE = "No quote was taken as its own answer; some of the passages read for it are quoted above."
"""It said "What the passages read for it say is quoted above.", read as "its answer is above" where no quote
above answers it (Celery's "How many times does it retry by default?": the default is quoted nowhere)."""
NO_RISKS = (
    "- None listed: no quote on these sub-questions holds one of the warning words the extractive checks "
    "look for (warning, danger, must not, should not, never, insecure, lost, corrupt ...); a limit "
    "stated in other words may still be quoted above."
)
NOTHING_QUOTED = "- None listed: the report quotes no passage, so there is no warning of theirs to list."
NO_OTHER_RISKS = (
    "- None listed beyond what is quoted under {} above: no other quote holds one of the warning words the "
    "extractive checks look for; a limit stated in other words may still be quoted above."
)
ONE_SOURCE = "Only one source holds evidence on: {}"
CORROBORATE = "Corroborate '{}' with a second independent source."
SEARCH_AGAIN = "Search again or add documents covering: {}"
NO_ANSWER_QUOTED = "No passage read quotes an answer to: {}"
"""The extractive critic's open questions and suggestions (report/compose.py). The critic counts sources
with evidence; when none of it answered (the section says NOT_ANSWERED), "only one source holds evidence"
and "corroborate it" would contradict the section above: the report says no answer was quoted instead."""
"""Said instead of NO_RISKS when a limits sub-question quoted stated limits, or a quote above states a risk
(RISK): "none found" alone would read as if the findings held no limit or warning at all."""
RISK = re.compile(
    r"\b(?:warning|caution|danger\w*|must not|should not|not recommended|never|insecure|unsafe|not safe|"
    r"vulnerab\w*|security|attack\w*|"
    r"lose|loses|lost|loss|corrupt\w*|deadlock\w*|irreversibl\w*|cannot be undone|risk\w*|conflict\w*|"
    r"contradict\w*|deprecated|denial of service|faulty|damag\w*|crash\w*|exploit\w*|leak\w*)\b",
    re.IGNORECASE,
)
"""What makes a quote a risk worth its own section (not a hedge such as "however" or "at most")."""
_POINTS_BACK_INSIDE = re.compile(
    r"(?<=[a-z,] )(?:these|those)\s+(?:[a-z]+\s+)?[a-z]+s\b"
    r"(?!\s+(?:that|which|who|whose|where|when|whom|of|listed|named|described|given|shown|mentioned|below|"
    r"following|above)\b|\s*:|.*\b(?:referred to as|called|known as)\b)"
)
"""Inside a sentence, "these"/"those" before a plural noun that no relative clause, "listed below" or "are
called ..." tells: the things a sentence before it named ("Varnish and Drupal doesn't need to see those
cookies ...", not "Although these variables are referred to as environment variables, ..."). A
summary bullet stands alone: it quotes no such sentence (its Findings paragraph shows it after its
antecedent)."""
# "Thanks to ... Vicky Risk": a warning word in a name (not after a sentence's first word: "Data Loss")
_NAMED = re.compile(r"[^\s.:;!?]\s+[A-Z][a-z]+\s+$")


def warns(statement: str) -> bool:
    """The statement holds a warning word (RISK) that is not part of a name ("Vicky Risk")."""
    return any(
        not (match.group()[0].isupper() and _NAMED.search(statement[: match.start()]))
        for match in RISK.finditer(statement)
    )


def _aspects(state: dict[str, Any]) -> set[str]:
    """The sub-questions the extractive planner added to the question's own clauses ("What is X?", "What are
    the limitations of X?"), word for word; a model's are all asked."""
    plan = state["plan"]
    if state.get("engine") == "llm" or not state.get("question"):
        return set()
    rarity = plan.get("rarity") or None
    aspects = set(keyword_plan(state["question"], 1, len(plan["sub_questions"]), rarity).aspects)
    return aspects & set(plan["sub_questions"][1:])


def _on_point(state: dict[str, Any], findings: list[dict[str, Any]]) -> Callable[[dict[str, Any]], bool]:
    """Whether a finding stays: one on an aspect sub-question of the extractive plan (see the module
    docstring) cites a source quoted on the question's own clauses, or one whose title names a word of the
    aspect that is not on most of the corpus's pages (dev citation precision 0.653 -> 0.667, no fact lost;
    JOURNAL.md, session 13). Only the planner's own aspects, word for word, are side questions."""
    aspects = _aspects(state)
    answered = {n for f in findings if f["sub_question"] not in aspects for n in f["citations"]}
    if not aspects or not answered:
        return lambda finding: True
    titles = {source["n"]: source.get("title") or "" for source in state.get("sources", [])}
    generic = term_weights(state["plan"].get("rarity") or None)

    def on_point(finding: dict[str, Any]) -> bool:
        if finding["sub_question"] not in aspects or set(finding["citations"]) & answered:
            return True
        asked = {
            t for t in content_tokens(without_aspects(finding["sub_question"])) if generic.get(t, 1.0) >= 1
        }
        return any(asked & set(content_tokens(titles.get(n, ""))) for n in finding["citations"])

    return on_point


def _summary(
    facts: list[dict[str, Any]], asked: list[str], question: str, topic: str = ""
) -> list[dict[str, Any]]:
    """The quotes that answer the question most directly, best first: on the `asked` sub-questions (in an
    extractive plan the first, for which its answering sections are read; a model's are all asked), or on
    any but a limits one when those have none; valued by three shares of 0..1: its score of the best one's,
    the question's words it names, how early its passage comes in the evidence (bench/quality/JOURNAL.md)."""
    mine = [f for f in facts if f["sub_question"] in asked]
    mine = mine or [f for f in facts if not asks_about_limits(f["sub_question"])]
    best = max((f.get("score", 0.0) for f in mine), default=0.0) or 1.0
    last = max((_place(f) for f in mine), default=0) or 1
    asking, context = _asking_words(question)

    def value(finding: dict[str, Any]) -> float:
        # in its text or its label ("SHARE_HISTORY" over "This option both imports new commands ...")
        said = set(content_tokens(f"{finding['statement']} {finding.get('section') or ''}"))
        named = (len(asking & said) + CONTEXT_WORD * len(context & said)) / max(
            len(asking) + CONTEXT_WORD * len(context), 1
        )
        told = 1 - NARRATION if _NARRATES.match(finding["statement"]) else 1  # "Let's try ...": no answer
        return told * (finding.get("score", 0.0) / best + named + 1 - _place(finding) / last)

    strong = [
        f
        for f in mine
        if f.get("score", 0.0) >= SUMMARY_FLOOR * best
        and not _POINTS_BACK_INSIDE.search((split_sentences(f["statement"]) or [""])[0])
    ]
    # "the difference between purging and banning": the best quote on each side leads (Varnish's Summary
    # quoted five on purging, none of the bans its Findings quoted)
    sides = _sides(topic) if asked and WEIGHS.search(asked[0]) else []
    ranked, leading = sorted(strong, key=value, reverse=True), []
    for side in sides:
        leading += [f["statement"] for f in ranked if _names(f, side) and f["statement"] not in leading][:1]
    at = {statement: i for i, statement in enumerate(leading)} if len(leading) > 1 else {}
    return sorted(ranked, key=lambda f: at.get(f["statement"], len(at)))


def _sides(topic: str) -> list[list[str]]:
    """The words of each thing a topic compares ("purging and banning", "WAL mode or a rollback journal")."""
    items = [content_tokens(item) for item in _SIDES.split(topic)]
    return items if 2 <= len(items) <= 3 and all(items) else []


_SIDES = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


def _names(finding: dict[str, Any], side: list[str]) -> bool:
    """The quote or its label names every word of a side, in any of its forms ("bans" for "banning")."""
    said = content_tokens(f"{finding['statement']} {finding.get('section') or ''}")
    return all(
        any(
            w == t
            or (
                min(len(w), len(t)) >= 3
                and (w.startswith(t) or t.startswith(w))
                and abs(len(w) - len(t)) <= 1
            )
            for w in said
        )
        for t in side
    )


def _asking_words(question: str) -> tuple[set[str], set[str]]:
    """The question's words in the sentences that ask, and those only in the ones that tell its context."""
    said = split_sentences(question) or [question]
    asking = set(content_tokens(" ".join(s for s in said if s.rstrip().endswith("?"))))
    every = set(content_tokens(question))
    return (asking, every - asking) if asking else (every, set())


def _place(finding: dict[str, Any]) -> int:
    """Where the finding's passage comes among its sub-question's evidence (0 first; a model's: first)."""
    return int((finding.get("order") or [0])[0])


def extractive_report_body(state: dict[str, Any]) -> str:
    """The labelled extractive report (module docstring): composed, then without the sources in passing."""
    body, used = _body(state, frozenset())
    stray = _stray(state, used)
    return _body(state, stray)[0] if stray else body


def _stray(state: dict[str, Any], used: list[dict[str, Any]]) -> frozenset[int]:
    """The sources a report quotes once or twice, beside a source it quotes STRAY_BESIDE times as often: a
    strong sentence or two of a page about something else (its best quote made it worth quoting, focus.py)
    read as a digression, and cite a page that does not answer (dev citation precision 0.688 -> 0.720, no
    fact lost; bench/quality/JOURNAL.md, session 22). Kept whatever they weigh: the pages focus.py keeps for
    the answering sections, a page whose title names a word of the topic that is not on most of the
    corpus's pages ("logging — Logging facility for Python" on "the logging module"), and one whose title
    names a word of the question on at most RARE_WORD of them. Any word of the sub-question is too many:
    "The Next-Generation Query Planner" names "query" of a question on running totals. Only the extractive
    planner's sub-questions: a model's (or a person's) are all asked. On the held-out questions, precision
    rose on Apache and Git and one Git gold page, quoted in passing, was lost (the journal)."""
    quoted: Counter[int] = Counter(n for f in used for n in f["citations"])
    if not quoted or state.get("engine") == "llm":
        return frozenset()
    top = max(quoted.values())
    candidates = {n for n, count in quoted.items() if count <= 2 and top >= STRAY_BESIDE * count}
    kept = {n for f in used if f.get("answer") == 1 for n in f["citations"]}
    kept |= _first_answering_page(state) | _answering_page(state)
    kept |= explaining([f for group in _groups(state) for f in group])
    # words as the question writes them ("HTTP/2" is not named by the "2" of "Version 2.4"): the topic's,
    # and the question's rare ones ("shortlog" names "git-shortlog(1)")
    rarity = state["plan"].get("rarity") or {}
    named = [
        w for w in _as_written(state["plan"].get("topic") or "") if 0 < rarity.get(w, 1.0) <= GENERIC_SHARE
    ]
    named += [w for w in _as_written(state.get("question") or "") if 0 < rarity.get(w, 1.0) <= RARE_WORD]
    for source in state.get("sources", []):
        title = (source.get("title") or "").lower()
        if any(re.search(rf"(?<![\w/.]){re.escape(w)}(?![\w/])", title) for w in named):
            kept.add(source["n"])
    return frozenset(candidates - kept)


def _as_written(text: str) -> list[str]:
    """The words of `text`, lowercased, as the plan's rarity keys are (planning.lookup_phrases)."""
    return [w.lower() for w in tokens(text)]


def _answering_page(state: dict[str, Any]) -> set[int]:
    """The page that alone holds the question's answering sections (none when several pages do)."""
    answering = {e["n"] for e in state.get("evidence", []) if e.get("answer")}
    return answering if len(answering) == 1 else set()


def _first_answering_page(state: dict[str, Any]) -> set[int]:
    """The page of the question's first answering section (the best page's opening)."""
    return {e["n"] for e in state.get("evidence", []) if e.get("answer") == 1}


def _groups(state: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The fact, implication and risk reviewers' findings, each best first."""
    findings = state.get("findings", {})
    return [
        sorted(findings.get(name, {}).get("findings", []), key=lambda f: -f.get("score", 0.0))
        for name in DEFAULT_REVIEWERS
    ]


def _body(state: dict[str, Any], stray: frozenset[int]) -> tuple[str, list[dict[str, Any]]]:
    """The report body without the sources in `stray`, and the findings it quotes."""
    groups = _groups(state)
    by_score = lambda items: sorted(items, key=lambda f: -f.get("score", 0.0))  # noqa: E731
    sub_questions = state["plan"]["sub_questions"]
    focused_on = focused(groups, _answering_page(state), _first_answering_page(state))
    on_point = _on_point(state, [f for g in groups for f in g])
    facts, implications, risks = (
        [f for f in g if set(f["citations"]) & (focused_on - stray) and on_point(f)] for g in groups
    )
    ledger = Ledger()
    used: list[dict[str, Any]] = []
    passages = passages_by_place(state)

    def pick(candidates: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
        chosen = []
        for finding in candidates:
            if len(chosen) >= limit:
                break
            if ledger.take(finding["statement"]):
                used.append(finding)
                chosen.append(finding)
        return chosen

    lines = ["## Summary", ""]
    summary: list[dict[str, Any]] = []
    # a model's sub-questions are all asked (only the extractive planner adds side questions)
    asked = sub_questions if state.get("engine") == "llm" else sub_questions[:1]
    asked = [q for q in asked if q == sub_questions[0] or not asks_about_limits(q)]
    for finding in _summary(facts, asked, state.get("question") or "", state["plan"].get("topic") or ""):
        if len(summary) >= SUMMARY_CLAIMS or sum(len(f["statement"]) for f in summary) >= SUMMARY_CHARS:
            break
        summary += pick([finding], 1)
    # the sections above the risks that quote a limit or a stated risk, named where "none found" would mislead
    quoted_under = ["Summary"] if any(warns(f["statement"]) for f in summary) else []
    lines += [f"- {cite(f)}" for f in summary] or [
        "- The fetched sources did not answer the question directly."
    ]
    lines += ["", "## Findings", ""]
    share = FINDINGS_BUDGET // max(len(sub_questions), 1)
    per_question = max(FINDINGS_PER_SUB_QUESTION[0], min(FINDINGS_PER_SUB_QUESTION[1], share))
    evidence = {e["sub_question"] for e in state.get("evidence", [])}
    sections: list[tuple[str, list[str]]] = []  # (sub-question, what its section says)
    for sub_question in sub_questions:
        mine = [f for f in [*facts, *implications] if f["sub_question"] == sub_question]
        if asks_about_limits(sub_question):  # a stated limit answers it
            mine += [f for f in risks if f["sub_question"] == sub_question]
        answers = pick(sorted((f for f in mine if f.get("answer")), key=lambda f: f["order"]), len(mine))
        chosen = answers + pick(by_score([f for f in mine if not f.get("answer")]), per_question)
        if any(warns(f["statement"]) for f in chosen) or (
            asks_about_limits(sub_question) and any(f is r for f in chosen for r in risks)
        ):
            quoted_under.append(sub_question)
        if chosen:
            ordered = reading_order(chosen, state)
            sections.append((sub_question, paragraphs(ordered, passages)))
        elif sub_question not in evidence:
            sections.append((sub_question, ["No fetched source addressed this sub-question."]))
        else:  # read for, but its quotes went above or none answers it: the section says which
            above = {f["statement"] for f in used} & {f["statement"] for f in mine}
            if limits := asks_about_limits(sub_question):  # quoted above, it answers only if a stated limit
                above &= {f["statement"] for f in risks} | {s for s in above if warns(s)}
            read = [text for (asked, _), text in passages.items() if asked == sub_question]  # ... or above
            elsewhere = any(" ".join(f["statement"].split()) in text for f in used for text in read)
            said = QUOTED_ABOVE if above else READ_ABOVE if elsewhere and not limits else NOT_ANSWERED
            sections.append((sub_question, [said]))
    if all(said == [QUOTED_ABOVE] for _, said in sections):
        lines += ["Every finding is in the summary above.", ""]
    else:  # every sub-question the run reports as covered has its heading
        for sub_question, said in sections:
            lines += [f"### {sub_question}", "", *said, ""]
    lines += ["## Disagreements and risks", ""]
    risk_lines = pick([f for f in risks if warns(f["statement"])], RISKS_LISTED)
    lines += [f"- {cite(f)}" for f in risk_lines] or [
        NO_OTHER_RISKS.format(listed([f"\u201c{q}\u201d" for q in quoted_under]))
        if quoted_under
        else NO_RISKS
        if used
        else NOTHING_QUOTED
    ]
    lines += ["", "## Open questions", ""]
    critique = _unanswered(
        state.get("critique") or {}, [sq for sq, said in sections if said == [NOT_ANSWERED]]
    )
    open_items = [*critique.get("missing_perspectives", []), *critique.get("issues", [])]
    # the critic read the final evidence: a gap the last reflection saw on a sub-question it names is the
    # same open question twice ("Only one source holds evidence on: X", "Fewer than two ... answer “X”")
    named = [sq for sq in sub_questions if any(sq in item for item in open_items)]
    gaps = state.get("reflection", {}).get("knowledge_gaps", [])
    open_items += [gap for gap in gaps if not any(sq in gap for sq in named)]
    lines += [f"- {item}" for item in dict.fromkeys(open_items)] or [
        "- None identified by the extractive checks."
    ]
    lines += ["", "## Recommendations", ""]
    lines += _recommendations(state, used, critique, limits_listed=bool(risk_lines))
    return "\n".join(lines) + "\n", used


def _unanswered(critique: dict[str, Any], unanswered: list[str]) -> dict[str, Any]:
    """The critique with "only one source holds evidence on X" said as "no passage read quotes an answer to
    X", and "corroborate X" as "search again", for each X whose section quotes no answer."""
    issues = {ONE_SOURCE.format(sq): NO_ANSWER_QUOTED.format(sq) for sq in unanswered}
    hints = {CORROBORATE.format(sq): SEARCH_AGAIN.format(sq) for sq in unanswered}
    return critique | {
        "issues": [issues.get(item, item) for item in critique.get("issues", [])],
        "suggestions": [hints.get(item, item) for item in critique.get("suggestions", [])],
    }


def _recommendations(
    state: dict[str, Any], used: list[dict[str, Any]], critique: dict[str, Any], *, limits_listed: bool
) -> list[str]:
    """Rules that follow from the findings: read first the sources the strongest findings rest on (by
    relevance, not by count), heed the stated risks, fill the gaps the critic found."""
    lines = []
    weight: Counter[int] = Counter()
    sections: dict[int, tuple[float, str]] = {}  # each source's section of its strongest quote
    for finding in used:
        score = finding.get("score", 0.0) or 0.1
        for n in finding["citations"]:
            weight[n] += score
            if finding.get("section") and score > sections.get(n, (-1.0, ""))[0]:
                sections[n] = (score, finding["section"])
    if weight:
        titles = {s["n"]: s.get("title") or s["url"] for s in state.get("sources", [])}
        best = [n for n, _ in weight.most_common(2)]
        # a section named as its page is ("Manual Pages" of "Manual Pages — BIND 9 ...") says no more than
        # the title (not "Install" of "Installation guide")
        shown = {n: sec for n, (_, sec) in sections.items() if not _names_page(sec, titles.get(n, ""))}
        named = [
            f"no. {n}, {titles.get(n, '')}" + (f" (section {shown[n]})" if n in shown else "") for n in best
        ]
        lines.append("- Read first the sources the strongest findings rest on: " + "; ".join(named) + ".")
    if limits_listed:
        lines.append("- Check the risks listed under Disagreements and risks before relying on the findings.")
    lines += [f"- {item}" for item in critique.get("suggestions", [])]
    if state.get("engine") == "llm":
        # the report step fell back: the model is configured, its answer was unusable
        lines.append(
            "- The model's report was unusable, so this one is quoted from the sources; a larger model "
            "(or DEEPRESEARCH_LLM_STRUCTURED_OUTPUT set to what the server supports) may write it."
        )
    else:
        lines.append("- Configure a language model (see README) for a synthesised, analyst-written report.")
    return lines


def _names_page(section: str, title: str) -> bool:
    section, title = section.lower().strip(), title.lower().strip()
    return title == section or title.startswith(f"{section} ")
