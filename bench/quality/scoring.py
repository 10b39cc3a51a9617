"""Scoring one report against its question's gold pages and gold facts, and the figures of a split.

The harness reads only the run's artifacts (report, sources.json, plan.json), never the engine's internals,
so the figures mean the same for both engines."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.quality.grammar import grammar_problems
from deepresearch.search.markdown import unescaped

_MARKERS = re.compile(r"\s*\[\d{1,3}\]|\s*\*\(unverified\)\*")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


def page_of(url: str, root: Path | None = None) -> str:
    """The page a cited URL names, so that two copies of one page count once.

    corpus://library/x.html#frag and Sphinx's source copy corpus://_sources/library/x.rst.txt are both
    library/x.html; with the corpus folder given, an AsciiDoc source x.txt shipped next to its x.html (as
    git-doc does) is x.html too."""
    path = url.removeprefix("corpus://").split("#", 1)[0]
    if path.startswith("_sources/") and path.endswith(".rst.txt"):
        return path.removeprefix("_sources/").removesuffix(".rst.txt") + ".html"
    html = path.removesuffix(".txt") + ".html"
    if root is not None and path.endswith(".txt") and (root / html).is_file():
        return html
    return path


def report_body(markdown: str) -> str:
    """The report between its header block and the source list."""
    start = markdown.find("\n## ")
    end = markdown.find("\n## Sources")
    return markdown[start : end if end > start else None]


# a sentence ends at . ! or ? (a closing quote or bracket may follow) before a capital, digit, code or quote
_SENTENCE_END = re.compile(r"[.!?][\"”’)]?\s+(?=[A-Z0-9`\"(])")
# ... not after an abbreviation ("E.g. ...", "See Fig. 3"), nor inside inline code ("git log v2.5.. Makefile")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|no|fig|approx)\.)$", re.IGNORECASE)
# a bullet's section name in italics (Markdown's own characters escaped within) or as code; alone on its
# line over the quotes of that section (report/lines.py paragraphs)
_LABEL = re.compile(r"^(?:\*(?:[^*\\]|\\.)+\*|`[^`]+`):(?:\s+|$)")


def _sentences(text: str) -> list[str]:
    """The sentences of a bullet's text (see _SENTENCE_END)."""
    parts, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        head = text[start : match.end()].rstrip()
        if text[: match.start()].count("`") % 2 or _ABBREVIATION.search(head.rstrip('"”’)')):
            continue
        parts.append(head)
        start = match.end()
    return [*parts, text[start:]]


def bullets(body: str) -> list[str]:
    """The sentences of the report's bullets, each without its citations and without the section name a
    bullet opens with: a bullet may quote several consecutive sentences of one section, and a sentence
    quoted twice is a repeat wherever it stands."""
    found = []
    for line in body.splitlines():
        if _BULLET.match(line):
            text = _MARKERS.sub("", _LABEL.sub("", _BULLET.sub("", line)))
            found += [" ".join(part.lower().split()) for part in _sentences(text)]
    return [b for b in found if b]


@dataclass
class Score:
    qid: str
    split: str
    seconds: float
    gold_recall: float
    gold_cited: int
    gold_total: int
    fact_recall: float
    citation_precision: float
    repeated_rate: float
    repeated: int
    readable: float
    cited: list[str] = field(default_factory=list)
    missing_facts: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    status: str = "completed"
    summary_recall: float = 0.0  # the share of the gold facts its Summary section holds


def failed(spec: dict[str, Any], status: str) -> Score:
    """A run that did not complete scores nothing (it is still counted, so a crash is a regression)."""
    return Score(
        qid=spec["id"],
        split=spec.get("split", "dev"),
        seconds=0.0,
        gold_recall=0.0,
        gold_cited=0,
        gold_total=len(spec["gold"]),
        fact_recall=0.0,
        citation_precision=0.0,
        repeated_rate=0.0,
        repeated=0,
        readable=0.0,
        missing_facts=[fact["fact"] for fact in spec["facts"]],
        status=status,
    )


def shown(markdown: str) -> str:
    """The text as a reader of the rendered report sees it: without Markdown's backslash escapes (a quote's
    "__enter__" is written "\\_\\_enter\\_\\_" so that it is not bold; report/render.py markdown_text)."""
    return "\n".join(unescaped(line) for line in markdown.split("\n"))


def fact_found(fact: dict[str, Any], text: str) -> bool:
    """A gold fact is in a text when one of its patterns matches it (case-insensitive)."""
    return any(re.search(pattern, text, re.IGNORECASE) for pattern in fact["any"])


def summary_section(markdown: str) -> str:
    """The text of the report's Summary section ("" when it has none)."""
    match = _SUMMARY.search(markdown)
    return match.group(1) if match else ""


_SUMMARY = re.compile(r"^## Summary\s*$(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)


def score(
    spec: dict[str, Any],
    markdown: str,
    sources: list[dict[str, Any]],
    plan: dict[str, Any],
    root: Path | None = None,
) -> Score:
    body = report_body(markdown)
    flat = " ".join(shown(body).split())
    missing = [fact["fact"] for fact in spec["facts"] if not fact_found(fact, flat)]
    summarised = " ".join(shown(summary_section(markdown)).split())
    in_summary = sum(fact_found(fact, summarised) for fact in spec["facts"]) / len(spec["facts"])
    cited = sorted({page_of(s["url"], root) for s in sources if s.get("cited")})
    gold, relevant = set(spec["gold"]), set(spec["relevant"]) | set(spec["gold"])
    items = bullets(body)
    repeated = len(items) - len(set(items))
    subs = plan.get("sub_questions", [])
    unreadable = [f"{sq} ({'; '.join(p)})" for sq in subs if (p := grammar_problems(sq, spec["question"]))]
    return Score(
        qid=spec["id"],
        split=spec.get("split", "dev"),
        seconds=0.0,
        gold_recall=len(gold & set(cited)) / len(gold),
        gold_cited=len(gold & set(cited)),
        gold_total=len(gold),
        fact_recall=1 - len(missing) / len(spec["facts"]),
        citation_precision=(len(relevant & set(cited)) / len(cited)) if cited else 0.0,
        repeated_rate=repeated / len(items) if items else 0.0,
        repeated=repeated,
        readable=1 - len(unreadable) / len(subs) if subs else 0.0,
        cited=cited,
        missing_facts=missing,
        unreadable=unreadable,
        summary_recall=in_summary,
    )


def summary(scores: list[Score]) -> dict[str, float]:
    """The figures of a set of questions (a split of one corpus): means over questions, and the gold pages
    and repeated bullets as counts."""
    return {
        "questions": len(scores),
        "not_completed": sum(s.status != "completed" for s in scores),
        "fact_recall": statistics.mean(s.fact_recall for s in scores),
        "summary_fact_recall": statistics.mean(s.summary_recall for s in scores),
        "citation_precision": statistics.mean(s.citation_precision for s in scores),
        "gold_source_recall": statistics.mean(s.gold_recall for s in scores),
        "gold_cited": sum(s.gold_cited for s in scores),
        "gold_total": sum(s.gold_total for s in scores),
        "repeated_sentence_rate": statistics.mean(s.repeated_rate for s in scores),
        "repeated_sentences": sum(s.repeated for s in scores),
        "sub_question_readability": statistics.mean(s.readable for s in scores),
        "seconds_per_run_warm_mean": statistics.mean(s.seconds for s in scores),
        "seconds_per_run_warm_max": max(s.seconds for s in scores),
    }


def row(s: Score) -> str:
    return (
        f"{s.qid:<26} {s.split:<8} gold {s.gold_cited}/{s.gold_total}  facts {s.fact_recall:4.2f}  "
        f"summary {s.summary_recall:4.2f}  precision "
        f"{s.citation_precision:4.2f}  repeated {s.repeated}  readable {s.readable:4.2f}  {s.seconds:5.1f} s"
        + ("" if s.status == "completed" else f"  [{s.status}]")
    )
