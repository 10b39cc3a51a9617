"""Quality regression harness: research a fixed question set over Python's HTML documentation with the real
engine (corpus only, no web) and score the reports against gold sources and gold facts.

    .venv/bin/python bench/quality.py --corpus /usr/share/doc/python3.11/html
    .venv/bin/python bench/quality.py --llm --base-url http://127.0.0.1:11434/v1 --model qwen2.5

The corpus is Debian's python3.11-doc package (`sudo apt-get install python3.11-doc`). Figures per question
and in total:

- gold-source recall: share of the question's gold pages that the report cites;
- fact recall: share of the gold facts (each a set of alternative patterns) found in the report body;
- citation precision: share of the distinct cited pages that answer the question (gold or relevant list);
- repeated sentences: share of the report's bullets that repeat another bullet word for word;
- sub-question readability: share of sub-questions passing a simple grammar check (see ``grammar_problems``);
- seconds per run, warm: the corpus index is built by a first, untimed run.

The harness reads only the run's artifacts (report, sources.json, plan.json), never the engine's internals,
so the figures mean the same for both engines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from config import Settings
from deepresearch.engine.core import open_engine

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path("/usr/share/doc/python3.11/html")
DEFAULT_QUESTIONS = HERE / "quality_questions.json"
INSTALL_HINT = (
    "the harness corpus is Python's HTML documentation: install it with "
    "`sudo apt-get install python3.11-doc` (Debian/Ubuntu), or pass --corpus DIR"
)

# --- the grammar check -----------------------------------------------------------------------------
_OPENERS = re.compile(
    r"^(what|how|which|why|when|where|who|whose|is|are|does|do|did|can|could|should|would|will|has|have)\b",
    re.IGNORECASE,
)
_AUX = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "has",
        "have",
        "may",
        "might",
        "must",
    ]
)
_FUNCTION = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "about",
        "into",
        "over",
        "under",
        "and",
        "or",
        "but",
        "nor",
        "if",
        "then",
        "than",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "what",
        "how",
        "which",
        "why",
        "when",
        "where",
        "who",
        "whose",
        "whom",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "their",
        "there",
        "i",
        "you",
        "we",
        "they",
        "my",
        "your",
        "our",
        "not",
        "no",
        "any",
        "each",
        "every",
        "some",
        "all",
        "both",
        "either",
        "neither",
        "such",
        "own",
        "same",
        "so",
        "very",
    ]
)
_WH = frozenset(["what", "how", "which", "why", "when", "where", "who", "whose"])
_DANGLING_END = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "about",
        "into",
        "and",
        "or",
        "but",
        "nor",
        "than",
        "as",
        "its",
        "their",
        "is",
        "are",
    ]
)


_TOKEN = re.compile(r"[A-Za-z0-9_][\w.'’()\-]*[\w)]|[A-Za-z0-9_]|[,;:?!]")


def _tokens(text: str) -> list[str]:
    """Lower-cased words, with each punctuation mark kept as a token of its own (it ends a phrase)."""
    return [
        t.lower().strip("'’") for t in re.findall(r"[A-Za-z0-9_][\w.'’()\-]*[\w)]|[A-Za-z0-9_]|[,;:?!]", text)
    ]


def _verb_after_wh(words: list[str]) -> bool:
    # "What happens when ...", "Who uses ...": the wh-word is the subject of a verb in -s
    return words[0] in ("what", "who", "which") and len(words) > 1 and words[1].endswith("s")


def grammar_problems(sub_question: str, question: str) -> list[str]:
    """Why a sub-question is not a plain grammatical question (empty list: it passes).

    A simple check, not a parser. The question opens with an interrogative word and, for a wh-question, an
    auxiliary verb within four words; it ends with one question mark, not on a function word, and doubles
    no word. Keyword soup is caught against the user's question: a run of two or more content words taken
    from the question must be a phrase of it, not words strung together from different places, and must
    not stop mid-phrase when it is three words or more ("... avoid repeating paid?" when the question says
    "paid calls")."""
    problems: list[str] = []
    text = " ".join(sub_question.split())
    if not text[:1].isupper():
        problems.append("does not start with a capital letter")
    if not text.endswith("?") or text.count("?") != 1:
        problems.append("does not end with exactly one question mark")
    words = [t for t in _tokens(text) if t not in ",;:?!"]
    if not words or not _OPENERS.match(text):
        problems.append("does not open with a question word")
    elif words[0] in _WH and not any(w in _AUX for w in words[1:5]) and not _verb_after_wh(words):
        problems.append("no auxiliary verb after the question word")
    if words and words[-1] in _DANGLING_END:
        problems.append(f"ends on a function word ({words[-1]!r})")
    if any(a == b for a, b in itertools.pairwise(words)):
        problems.append("doubles a word")
    source = _tokens(question)
    runs: list[list[str]] = [[]]
    for token in _tokens(text):
        # an identifier (functools.lru_cache, __enter__) is a name: it starts or ends a phrase
        if token in _FUNCTION or token in ",;:?!" or re.search(r"[._()]", token):
            runs.append([])
        else:
            runs[-1].append(token)
    for run in runs:
        if len(run) < 2 or not set(run) <= set(source):
            continue
        starts = [i for i in range(len(source) - len(run) + 1) if source[i : i + len(run)] == run]
        if not starts:
            problems.append(f"keywords strung together ({' '.join(run)!r})")
        elif len(run) >= 3 and all(
            i + len(run) < len(source) and source[i + len(run)] not in _FUNCTION | set(",;:?!")
            for i in starts
        ):
            problems.append(f"a phrase cut mid-way ({' '.join(run)!r})")
    return problems


# --- scoring ---------------------------------------------------------------------------------------
def page_of(url: str) -> str:
    """corpus://library/x.html#frag, corpus://_sources/library/x.rst.txt -> library/x.html."""
    path = url.removeprefix("corpus://").split("#", 1)[0]
    if path.startswith("_sources/") and path.endswith(".rst.txt"):
        path = path.removeprefix("_sources/").removesuffix(".rst.txt") + ".html"
    return path


_MARKERS = re.compile(r"\s*\[\d{1,3}\]|\s*\*\(unverified\)\*")


def report_body(markdown: str) -> str:
    """The report between its header block and the source list."""
    start = markdown.find("\n## ")
    end = markdown.find("\n## Sources")
    return markdown[start : end if end > start else None]


def bullets(body: str) -> list[str]:
    found = []
    for line in body.splitlines():
        if re.match(r"^\s*(?:[-*+]|\d+\.)\s+", line):
            text = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", line)
            found.append(" ".join(_MARKERS.sub("", text).lower().split()))
    return [b for b in found if b]


@dataclass
class Score:
    qid: str
    seconds: float
    gold_recall: float
    fact_recall: float
    citation_precision: float
    repeated_rate: float
    readable: float
    cited: list[str] = field(default_factory=list)
    missing_facts: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    status: str = "completed"


def score(spec: dict[str, Any], markdown: str, sources: list[dict[str, Any]], plan: dict[str, Any]) -> Score:
    body = report_body(markdown)
    flat = " ".join(body.split())
    missing = [
        fact["fact"]
        for fact in spec["facts"]
        if not any(re.search(pattern, flat, re.IGNORECASE) for pattern in fact["any"])
    ]
    cited = sorted({page_of(s["url"]) for s in sources if s.get("cited")})
    gold, relevant = set(spec["gold"]), set(spec["relevant"]) | set(spec["gold"])
    items = bullets(body)
    repeated = len(items) - len(set(items))
    subs = plan.get("sub_questions", [])
    unreadable = [f"{sq} ({'; '.join(p)})" for sq in subs if (p := grammar_problems(sq, spec["question"]))]
    return Score(
        qid=spec["id"],
        seconds=0.0,
        gold_recall=len(gold & set(cited)) / len(gold),
        fact_recall=1 - len(missing) / len(spec["facts"]),
        citation_precision=(len(relevant & set(cited)) / len(cited)) if cited else 0.0,
        repeated_rate=repeated / len(items) if items else 0.0,
        readable=1 - len(unreadable) / len(subs) if subs else 0.0,
        cited=cited,
        missing_facts=missing,
        unreadable=unreadable,
    )


# --- running ---------------------------------------------------------------------------------------
def build_settings(args: argparse.Namespace, home: Path) -> Settings:
    values: dict[str, Any] = {
        "home": home / "home",
        "workspace_dir": home / "workspace",
        "corpus_dir": args.corpus,
        "corpus_only": True,
        "duckduckgo_enabled": False,
        "search_providers": ["generic"],
        "engine": "llm" if args.llm else "extractive",
    }
    if args.llm:
        values |= {
            "openai_base_url": args.base_url or os.environ.get("OPENAI_BASE_URL", ""),
            "openai_model_name": args.model or os.environ.get("OPENAI_MODEL_NAME", ""),
            "openai_api_key": args.api_key or os.environ.get("OPENAI_API_KEY", "") or "none",
        }
    return Settings(**values)


async def research(settings: Settings, question: str) -> tuple[float, str, dict[str, Any], dict[str, Any]]:
    async with open_engine(settings) as engine:
        run = await engine.create_run(question)
        started = time.perf_counter()
        final = await engine.execute(run.run_id)
        elapsed = time.perf_counter() - started
    if final.status != "completed":
        raise RuntimeError(f"run {run.run_id} ended {final.status}: {final.error}")
    folder = settings.workspace_dir / (final.artifact_dir or "")
    markdown = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    plan = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
    return elapsed, markdown, sources, plan


async def run_all(args: argparse.Namespace, specs: list[dict[str, Any]], home: Path) -> list[Score]:
    settings = build_settings(args, home)
    started = time.perf_counter()
    await research(settings, specs[0]["question"])  # builds the corpus index: not timed as warm
    print(f"cold first run (indexes the corpus): {time.perf_counter() - started:.1f} s", flush=True)
    scores = []
    for spec in specs:
        elapsed, markdown, sources, plan = await research(settings, spec["question"])
        result = score(spec, markdown, sources["sources"], plan)
        result.seconds = elapsed
        scores.append(result)
        print(_row(result), flush=True)
        if args.show:
            print(markdown, flush=True)
    return scores


def _row(s: Score) -> str:
    return (
        f"{s.qid:<20} gold {s.gold_recall:4.2f}  facts {s.fact_recall:4.2f}  precision "
        f"{s.citation_precision:4.2f}  repeated {s.repeated_rate:4.2f}  readable {s.readable:4.2f}  "
        f"{s.seconds:5.1f} s"
    )


def summary(scores: list[Score]) -> dict[str, float]:
    return {
        "gold_source_recall": statistics.mean(s.gold_recall for s in scores),
        "fact_recall": statistics.mean(s.fact_recall for s in scores),
        "citation_precision": statistics.mean(s.citation_precision for s in scores),
        "repeated_sentence_rate": statistics.mean(s.repeated_rate for s in scores),
        "sub_question_readability": statistics.mean(s.readable for s in scores),
        "seconds_per_run_warm_mean": statistics.mean(s.seconds for s in scores),
        "seconds_per_run_warm_max": max(s.seconds for s in scores),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="Python's HTML documentation")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these question ids")
    parser.add_argument("--home", type=Path, help="keep the index and runs here (default: a temp dir)")
    parser.add_argument("--show", action="store_true", help="print each report")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON to this file")
    parser.add_argument("--llm", action="store_true", help="LLM engine (an OpenAI-compatible endpoint)")
    parser.add_argument("--base-url", help="endpoint, e.g. http://127.0.0.1:11434/v1 (or OPENAI_BASE_URL)")
    parser.add_argument("--model", help="model name (or OPENAI_MODEL_NAME)")
    parser.add_argument("--api-key", help="key (or OPENAI_API_KEY; local servers accept any)")
    args = parser.parse_args()
    if not (args.corpus / "library").is_dir():
        print(f"error: {args.corpus} is not Python's HTML documentation; {INSTALL_HINT}", file=sys.stderr)
        return 2
    if args.llm and not (
        (args.base_url or os.environ.get("OPENAI_BASE_URL"))
        and (args.model or os.environ.get("OPENAI_MODEL_NAME"))
    ):
        print(
            "error: --llm needs --base-url and --model (or OPENAI_BASE_URL, OPENAI_MODEL_NAME)",
            file=sys.stderr,
        )
        return 2
    specs = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    if args.only:
        specs = [s for s in specs if s["id"] in args.only]
        if not specs:
            print("error: --only matched no question id", file=sys.stderr)
            return 2
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="dr-quality-") as tmp:
        home = args.home or Path(tmp)
        scores = asyncio.run(run_all(args, specs, home))
    totals = summary(scores)
    print(f"engine: {'llm' if args.llm else 'extractive'}; {len(scores)} questions; corpus {args.corpus}")
    for name, value in totals.items():
        print(f"  {name:<28} {value:.2f}")
    for s in scores:
        for fact in s.missing_facts:
            print(f"  missing fact [{s.qid}]: {fact}")
        for sq in s.unreadable:
            print(f"  unreadable [{s.qid}]: {sq}")
        print(f"  cited [{s.qid}]: {', '.join(s.cited) or '-'}")
    if args.json:
        args.json.write_text(
            json.dumps({"summary": totals, "questions": [s.__dict__ for s in scores]}, indent=1) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
