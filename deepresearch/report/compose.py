"""Composing reviews, critiques and the report from state. Extractive pieces only quote fetched text."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from deepresearch.extractive.planning import asks_about_limits, question_topic
from deepresearch.extractive.sentences import NEAR_DUPLICATE, Quote, Scorer, mmr, quotes
from deepresearch.extractive.text import (
    IMPLICATION_CUES,
    RISK_CUES,
    chunk_passages,
    content_tokens,
    has_cue,
    split_sentences,
)
from deepresearch.report import model_quality
from deepresearch.report.render import CITATION, check_citations, render_html, sources_markdown

EXTRACTIVE_LABEL = (
    "Engine: **extractive** — no language model was configured. Every finding below is quoted from a "
    "fetched source and cited; open questions and recommendations come from fixed rules, not a model."
)


def evidence_listing(evidence: list[dict[str, Any]], with_titles: list[dict[str, Any]] | None = None) -> str:
    titles = {s["n"]: s.get("title", "") for s in with_titles or []}
    lines = []
    for item in evidence:
        title = f" ({titles[item['n']]})" if item["n"] in titles else ""
        lines.append(f"[{item['n']}]{title} — sub-question: {item['sub_question']}\n{item['passage']}")
    return "\n\n".join(lines) or "(no evidence)"


def findings_listing(findings: dict[str, Any]) -> str:
    return json.dumps(
        {name: {k: v for k, v in review.items() if k != "engine"} for name, review in findings.items()},
        ensure_ascii=False,
        indent=1,
    )


# --- extractive reviewers and critic --------------------------------------------------------------
REVIEW_LIMITS = {"fact_reviewer": 7, "implication_reviewer": 2, "risk_reviewer": 2}
"""Findings per sub-question for each extractive reviewer."""
LIMIT_BONUS = 0.2
RELATIVE_FLOOR = 0.6
FLOOR_REFERENCE = 3
"""A finding must score at least RELATIVE_FLOOR of the FLOOR_REFERENCE-th best quote on its sub-question."""
ELABORATION_BONUS = 0.1
"""Added to a quote from a section whose heading names a term of the best quote that the question lacks."""
MIN_COVERAGE = {"fact_reviewer": 0.15, "implication_reviewer": 0.25, "risk_reviewer": 0.25}
"""Share of the sub-question's (idf-weighted) terms a quote must contain to be a finding on it."""


def extractive_review(
    reviewer: str,
    sub_questions: list[str],
    evidence: list[dict[str, Any]],
    question: str = "",
    topic: str = "",
) -> dict[str, Any]:
    """Quote sentences from the evidence table according to the reviewer's role: the facts that answer each
    sub-question best (fact_reviewer), consequences (implication_reviewer) or hedges and stated limits
    (risk_reviewer); picked by MMR, so they differ from each other and come from more than one source."""
    units: list[tuple[int, float, bool, Quote]] = []
    topic_phrase = topic or (question_topic(question) if question else "")
    topic = set(content_tokens(topic_phrase))
    for index in range(len(sub_questions)):
        items = [e for e in evidence if e["sub_question_index"] == index]
        top = max((e["bm25"] for e in items), default=0.0) or 1.0
        for item in items:
            about = bool(topic & set(content_tokens(item.get("title") or "")))
            for unit in quotes(item["passage"], item["n"], item.get("headings") or ()):
                units.append((index, item["bm25"] / top, about, unit))
    scorer = Scorer(unit for *_, unit in units)
    wanted = {"implication_reviewer": IMPLICATION_CUES, "risk_reviewer": RISK_CUES}.get(reviewer)
    findings: list[dict[str, Any]] = []
    taken: list[Quote] = []
    for index, sub_question in enumerate(sub_questions):
        weights = scorer.weights(sub_question, question, topic_phrase)
        # on "What are the limitations of X?" a stated limit answers, whatever words it uses
        limits = asks_about_limits(sub_question)
        scored = []
        for i, rank, about, unit in units:
            if i != index or (wanted is not None and not has_cue(unit.text, wanted)):
                continue
            coverage = scorer.coverage(unit, weights)
            # ... but it must still be about the sub-question, not any hedge on the page
            bonus = LIMIT_BONUS if limits and has_cue(unit.text, RISK_CUES) and coverage >= 0.1 else 0.0
            if coverage + bonus >= MIN_COVERAGE[reviewer]:
                scored.append((scorer.score(unit, weights, rank, about) + bonus, unit))
        scored.sort(key=lambda pair: -pair[0])
        if scored:
            # the best quote names the answer's terms ("a checkpoint after every stage, and a receipt for
            # every call"): a section titled with one of them explains that part of the answer
            answer_terms = scored[0][1].terms - weights.own.keys() - weights.context.keys()
            scored = sorted(
                (
                    (score + ELABORATION_BONUS, unit)
                    if unit is not scored[0][1] and answer_terms & set(content_tokens(unit.section))
                    else (score, unit)
                    for score, unit in scored
                ),
                key=lambda pair: -pair[0],
            )
        # far below the sub-question's best quotes is off the point, however diverse it would make the list;
        # measured against the FLOOR_REFERENCE-th best, not the best: a source's sentence restating the
        # question outscores every sentence that explains the answer, and must not silence them
        reference = scored[min(FLOOR_REFERENCE, len(scored)) - 1][0] if scored else 0.0
        floor = RELATIVE_FLOOR * reference
        scored = [pair for pair in scored if pair[0] >= floor]
        for score, unit in mmr(scored, REVIEW_LIMITS[reviewer], taken):
            taken.append(unit)
            findings.append(
                {
                    "sub_question": sub_question,
                    "statement": unit.text,
                    "citations": [unit.n],
                    "section": unit.section,
                    "score": round(score, 3),
                    "confidence": "medium" if score >= 0.5 else "low",
                }
            )
    return {"engine": "extractive", "findings": findings, "disagreements": [], "open_questions": []}


def extractive_critique(state: dict[str, Any]) -> dict[str, Any]:
    evidence, sources = state.get("evidence", []), state.get("sources", [])
    issues, missing, suggestions = [], [], []
    for index, sub_question in enumerate(state["plan"]["sub_questions"]):
        ids = {e["source_id"] for e in evidence if e["sub_question_index"] == index}
        if not ids:
            missing.append(f"No evidence was found for: {sub_question}")
            suggestions.append(f"Search again or add documents covering: {sub_question}")
        elif len(ids) == 1:
            issues.append(f"Only one source supports the findings on: {sub_question}")
            suggestions.append(f"Corroborate '{sub_question}' with a second independent source.")
    # one publisher dominating is a web concern: a corpus's documents all share the domain "local"
    domains = Counter(s.get("domain", "") for s in sources if s.get("domain") != "local")
    if domains and domains.most_common(1)[0][1] > len(sources) / 2 and len(sources) > 2:
        domain, count = domains.most_common(1)[0]
        issues.append(f"{count} of {len(sources)} sources come from one domain ({domain}).")
        suggestions.append("Add sources from other publishers to balance the picture.")
    failures = state.get("fetch_failures", [])
    if failures:
        issues.append(f"{len(failures)} sources could not be fetched and were left out.")
    return {
        "engine": "extractive",
        "issues": issues,
        "unsupported_claims": [],
        "missing_perspectives": missing,
        "suggestions": suggestions,
    }


# --- the report ----------------------------------------------------------------------------------
SUMMARY_CLAIMS = 5
SUMMARY_PER_ASPECT = 2  # claims the summary takes from each sub-question other than the first
SUMMARY_FROM_MAIN = 2  # ... and from the first: the rest of its findings explain the answer under Findings
SOURCE_FOCUS = 0.3
STRONG_QUOTE = 0.85
"""A source is quoted only if its findings' total score is at least SOURCE_FOCUS of the strongest source's,
or its best finding scores at least STRONG_QUOTE of the best finding."""
FINDINGS_PER_SUB_QUESTION = 4
RISKS_LISTED = 4
NO_RISKS = (
    "- None found: no fetched passage on these sub-questions states a limit, a hedge or a conflicting claim."
)


class _Ledger:
    """The sentences the report has used: each is quoted once in the whole report, and a near-copy of one
    (the same sentence in a page's HTML and in its source file) counts as the same sentence."""

    def __init__(self) -> None:
        self._used: list[set[str]] = []

    def take(self, statement: str) -> bool:
        """Record the statement's sentences; False (and nothing recorded) if any of them is used already."""
        sentences = [set(content_tokens(s)) for s in split_sentences(statement)] or [
            set(content_tokens(statement))
        ]
        if any(self._seen(terms) for terms in sentences):
            return False
        self._used += sentences
        return True

    def _seen(self, terms: set[str]) -> bool:
        return any(
            terms == used or (terms and used and len(terms & used) / len(terms | used) >= NEAR_DUPLICATE)
            for used in self._used
        )


def cite(finding: dict[str, Any]) -> str:
    """A finding as a report line: its section (when it names the subject), then the quote with the citation
    before each sentence's closing punctuation, so every quoted sentence is checked on its own."""
    marks = "".join(f"[{n}]" for n in finding["citations"])
    parts = []
    for sentence in split_sentences(finding["statement"].strip()) or [finding["statement"].strip()]:
        parts.append(
            f"{sentence[:-1]} {marks}{sentence[-1]}" if sentence[-1:] in ".!?" else f"{sentence} {marks}"
        )
    section = finding.get("section") or ""
    return (f"*{section}*: " if section else "") + " ".join(parts)


def extractive_report_body(state: dict[str, Any]) -> str:
    """The labelled extractive report: a summary of the top distinct claims, findings per sub-question,
    disagreements and risks (hedges and limits only, or a plain "none found"), open questions from the
    critic, and recommendations that follow from what was found. No sentence is quoted twice."""
    findings = state.get("findings", {})
    by_score = lambda items: sorted(items, key=lambda f: -f.get("score", 0.0))  # noqa: E731
    facts = by_score(findings.get("fact_reviewer", {}).get("findings", []))
    implications = by_score(findings.get("implication_reviewer", {}).get("findings", []))
    risks = by_score(findings.get("risk_reviewer", {}).get("findings", []))
    critique = state.get("critique") or {}
    sub_questions = state["plan"]["sub_questions"]
    # a source that yields one weak quote while another carries the answer is a digression: leave it out
    mass: Counter[int] = Counter()
    best: dict[int, float] = {}
    for finding in [*facts, *implications, *risks]:
        for n in finding["citations"]:
            mass[n] += finding.get("score", 0.0)
            best[n] = max(best.get(n, 0.0), finding.get("score", 0.0))
    top_mass, top_best = max(mass.values(), default=0.0), max(best.values(), default=0.0)
    focused = {n for n in mass if mass[n] >= SOURCE_FOCUS * top_mass or best[n] >= STRONG_QUOTE * top_best}
    facts, implications, risks = (
        [f for f in group if set(f["citations"]) & focused] for group in (facts, implications, risks)
    )
    ledger = _Ledger()
    used: list[dict[str, Any]] = []

    def pick(candidates: list[dict[str, Any]], limit: int) -> list[str]:
        lines = []
        for finding in candidates:
            if len(lines) >= limit:
                break
            if ledger.take(finding["statement"]):
                used.append(finding)
                lines.append(f"- {cite(finding)}")
        return lines

    # the summary: the best claim on each sub-question first (the question's own first), then the next best
    # the question's own sub-question leads; each other sub-question lends at most its best claims
    main = sub_questions[0] if sub_questions else ""
    ordered = sorted(facts, key=lambda f: -f.get("score", 0.0) * (1.0 if f["sub_question"] == main else 0.85))
    lent: Counter[str] = Counter()
    for finding in list(ordered):
        lent[finding["sub_question"]] += 1
        share = SUMMARY_FROM_MAIN if finding["sub_question"] == main else SUMMARY_PER_ASPECT
        if lent[finding["sub_question"]] > share:
            ordered.remove(finding)
    # a stated limit belongs under Disagreements and risks; the summary takes it only if nothing else answers
    limits = {f["statement"] for f in risks}
    answers = [f for f in ordered if f["statement"] not in limits] or ordered
    lines = ["## Summary", ""]
    lines += pick(answers, SUMMARY_CLAIMS) or ["- The fetched sources did not answer the question directly."]
    lines += ["", "## Findings", ""]
    for sub_question in sub_questions:
        lines += [f"### {sub_question}", ""]
        mine = by_score(
            f
            for f in [*facts, *implications]
            if f["sub_question"] == sub_question and f["statement"] not in limits
        )
        # a note, not a finding: it is not a bullet, so the report's bullets stay distinct claims
        lines += pick(mine, FINDINGS_PER_SUB_QUESTION) or [
            "Nothing beyond the summary above."
            if any(e["sub_question"] == sub_question for e in state.get("evidence", []))
            else "No fetched source addressed this sub-question."
        ]
        lines.append("")
    lines += ["## Disagreements and risks", ""]
    risk_lines = pick(risks, RISKS_LISTED)
    lines += risk_lines or [NO_RISKS]
    lines += ["", "## Open questions", ""]
    open_items = [
        *critique.get("missing_perspectives", []),
        *critique.get("issues", []),
        *state.get("reflection", {}).get("knowledge_gaps", []),
    ]
    lines += [f"- {item}" for item in dict.fromkeys(open_items)] or [
        "- None identified by the extractive checks."
    ]
    lines += ["", "## Recommendations", ""]
    lines += _recommendations(state, used, critique, limits_listed=bool(risk_lines))
    return "\n".join(lines) + "\n"


def _recommendations(
    state: dict[str, Any], used: list[dict[str, Any]], critique: dict[str, Any], *, limits_listed: bool
) -> list[str]:
    """Rules that follow from the findings: read first the sources the strongest findings rest on (by
    relevance, not by count), heed the stated limits, fill the gaps the critic found."""
    lines = []
    weight: Counter[int] = Counter()
    sections: dict[int, str] = {}
    for finding in used:
        for n in finding["citations"]:
            weight[n] += finding.get("score", 0.0) or 0.1
            if finding.get("section"):
                sections.setdefault(n, finding["section"])
    if weight:
        titles = {s["n"]: s.get("title") or s["url"] for s in state.get("sources", [])}
        best = [n for n, _ in weight.most_common(2)]
        named = [
            f"no. {n}, {titles.get(n, '')}" + (f" (section {sections[n]})" if n in sections else "")
            for n in best
        ]
        lines.append("- Read first the sources the strongest findings rest on: " + "; ".join(named) + ".")
    if limits_listed:
        lines.append(
            "- Check the limits listed under Disagreements and risks before relying on the findings."
        )
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


@dataclass(slots=True)
class ReportBundle:
    files: dict[str, str]
    citation_check: dict[str, Any]
    cited: list[int]


def build_report_bundle(state: dict[str, Any], body: str) -> ReportBundle:
    """Check citations, add header and sources, render HTML; return the five final artifacts' contents."""
    sources = state.get("sources", [])
    passages = {s["n"]: chunk_passages(s["text"]) or [s["text"]] for s in sources}
    # links may point only to what the run fetched (not to URLs it merely saw in search results)
    seen_urls = {u for s in sources for u in (s["url"], s.get("final_url")) if u}
    checked_body, check = check_citations(body.strip(), passages, seen_urls)
    cited = sorted({int(n) for n in CITATION.findall(checked_body)})
    engine = state["engine"]
    # deterministic header (no wall clock): a re-run of this stage must produce byte-identical files
    fetched_until = max((s.get("fetched_at", "")[:10] for s in sources), default="") or "n/a"
    quality = model_quality.summarize(state.get("model_answers"))
    label = EXTRACTIVE_LABEL if engine == "extractive" else model_quality.engine_label(quality)
    header = [
        f"# {state['question'].strip()}",
        "",
        f"> {label}",
        ">",
        f"> Run `{state['run_id']}` · sources fetched up to {fetched_until} · "
        f"{len(sources)} source{'' if len(sources) == 1 else 's'} · "
        f"{state.get('round', 1)} search round(s) · "
        f"citations checked: {check.supported}/{check.checked} supported",
        *(model_quality.header_lines(quality) if engine == "llm" else []),
        "",
    ]
    markdown = "\n".join(header) + "\n" + checked_body + "\n\n" + sources_markdown(sources)
    public_sources = [
        {k: v for k, v in s.items() if k != "text"} | {"cited": s["n"] in cited} for s in sources
    ]
    state_summary = {
        "run_id": state["run_id"],
        "question": state["question"],
        "engine": engine,
        "options": state["options"],
        "plan": state["plan"],
        "rounds": state.get("round", 1),
        "queries": state.get("queries_done", []),
        "reflection": state.get("reflection", {}),
        "counts": {
            "search_results": len(state.get("search_results", [])),
            "sources": len(sources),
            "fetch_failures": len(state.get("fetch_failures", [])),
            "evidence": len(state.get("evidence", [])),
        },
        "stage_notes": state.get("stage_notes", {}),
        "citation_check": check.to_dict(),
        "artifact_dir": state["artifact_dir"],
        "model_answers": quality.to_dict() if engine == "llm" else None,
    }
    files = {
        "deepresearch-report.md": markdown,
        "deepresearch-report.html": render_html(markdown, state["question"], seen_urls),
        "sources.json": json.dumps({"sources": public_sources}, ensure_ascii=False, indent=2) + "\n",
        "evidence.json": json.dumps(
            {"evidence": state.get("evidence", []), "citation_check": check.to_dict()},
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
        "research-state.json": json.dumps(state_summary, ensure_ascii=False, indent=2) + "\n",
    }
    return ReportBundle(files=files, citation_check=check.to_dict(), cited=cited)
