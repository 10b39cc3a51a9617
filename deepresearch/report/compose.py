"""Composing the critique and the report's files from state (the extractive reviewers are in findings.py,
the extractive report body in digest.py). Extractive pieces only quote fetched text."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from deepresearch.extractive.reading.text import LINE_BREAK, chunk_passages
from deepresearch.report import model_quality
from deepresearch.report.digest import CORROBORATE, NO_RISKS, ONE_SOURCE, SEARCH_AGAIN, extractive_report_body
from deepresearch.report.findings import extractive_review
from deepresearch.report.links import sanitize_links
from deepresearch.report.render import (
    asked_text,
    check_citations,
    cited_numbers,
    render_html,
    samples_as_markdown,
    sources_markdown,
)

__all__ = [
    "EXTRACTIVE_LABEL",
    "NO_RISKS",
    "ReportBundle",
    "build_report_bundle",
    "evidence_listing",
    "extractive_critique",
    "extractive_report_body",
    "extractive_review",
    "findings_listing",
]

EXTRACTIVE_LABEL = (
    "Engine: **extractive** — no language model was configured. Every finding below is quoted from a "
    "fetched source and cited; open questions and recommendations come from fixed rules, not a model."
)


def evidence_listing(evidence: list[dict[str, Any]], with_titles: list[dict[str, Any]] | None = None) -> str:
    titles = {s["n"]: s.get("title", "") for s in with_titles or []}
    lines = []
    for item in evidence:
        title = f" ({titles[item['n']]})" if item["n"] in titles else ""
        passage = samples_as_markdown(item["passage"])  # a model reads a sample's lines, not their mark
        lines.append(f"[{item['n']}]{title} — sub-question: {item['sub_question']}\n{passage}")
    return "\n\n".join(lines) or "(no evidence)"


def readable(payload: Any) -> Any:
    """The report's JSON files as a reader sees the text: a sample's lines, apart in the engine's text by a
    mark (LINE_BREAK), as Markdown (a code block, or a code span per line) - a script reading evidence.json
    met a "\u2424" between them. The stages' own files keep the engine's text: the bench replays them."""
    if isinstance(payload, str):
        return samples_as_markdown(payload) if LINE_BREAK in payload else payload
    if isinstance(payload, dict):
        return {key: readable(value) for key, value in payload.items()}
    if isinstance(payload, list):
        return [readable(value) for value in payload]
    return payload


def findings_listing(findings: dict[str, Any]) -> str:
    return json.dumps(
        {name: {k: v for k, v in review.items() if k != "engine"} for name, review in findings.items()},
        ensure_ascii=False,
        indent=1,
    )


# --- extractive critic ------------------------------------------------------------------------
def extractive_critique(state: dict[str, Any]) -> dict[str, Any]:
    evidence, sources = state.get("evidence", []), state.get("sources", [])
    issues, missing, suggestions = [], [], []
    for index, sub_question in enumerate(state["plan"]["sub_questions"]):
        ids = {e["source_id"] for e in evidence if e["sub_question_index"] == index}
        if not ids:
            missing.append(f"No evidence was found for: {sub_question}")
            suggestions.append(SEARCH_AGAIN.format(sub_question))
        elif len(ids) == 1:
            issues.append(ONE_SOURCE.format(sub_question))
            suggestions.append(CORROBORATE.format(sub_question))
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
    engine = state["engine"]
    # the extractive engine's report is the fetched pages' words: an address in a quote is shown, not linked
    quoted = engine == "extractive"
    for asked in dict.fromkeys([state["question"], *state["plan"].get("sub_questions", [])]):
        body = body.replace(asked, asked_text(asked))  # its "[1]" is the asker's, no citation
    checked_body, check = check_citations(body.strip(), passages, seen_urls, quoted=quoted)
    cited = sorted(cited_numbers(checked_body))
    # deterministic header (no wall clock): a re-run of this stage must produce byte-identical files
    fetched_until = max((s.get("fetched_at", "")[:10] for s in sources), default="") or "n/a"
    quality = model_quality.summarize(state.get("model_answers"))
    label = EXTRACTIVE_LABEL if engine == "extractive" else model_quality.engine_label(quality)
    rounds = state.get("round", 1)
    header = [
        f"# {asked_text(state['question'].strip())}",
        "",
        f"> {label}",
        ">",
        f"> Run `{state['run_id']}` · sources fetched up to {fetched_until} · "
        f"{len(sources)} source{'' if len(sources) == 1 else 's'} · "
        f"{rounds} search round{'' if rounds == 1 else 's'} · "
        f"citations checked: {check.supported}/{check.checked} supported",
        *(model_quality.header_lines(quality) if engine == "llm" else []),
        "",
    ]
    markdown = "\n".join(header) + "\n" + checked_body + "\n\n" + sources_markdown(sources, set(cited))
    # the question and the fetched pages' titles come from outside too: the whole file keeps the link rule
    markdown, removed = sanitize_links(markdown, seen_urls, quoted=quoted)
    markdown = markdown.rstrip("\n") + "\n"
    check.unknown_urls_removed = list(dict.fromkeys([*check.unknown_urls_removed, *removed]))
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
            readable({"evidence": state.get("evidence", []), "citation_check": check.to_dict()}),
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
        "research-state.json": json.dumps(readable(state_summary), ensure_ascii=False, indent=2) + "\n",
    }
    return ReportBundle(files=files, citation_check=check.to_dict(), cited=cited)
