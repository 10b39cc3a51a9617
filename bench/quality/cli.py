"""python -m bench.quality [--corpus-set NAME|all] [--split dev|heldout|outside] [--check] ...

Research each question set over its corpus with the real engine (corpus only, no web) and score the
reports; print the figures per corpus and split, write them as JSON, and with --check fail (exit 1) when a
corpus's held-out or outside figures fall below the committed baseline. See docs/quality.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from bench.quality import baseline, corpora
from bench.quality.runner import run_set
from bench.quality.scoring import Score, summary

RESULTS = Path(__file__).resolve().parent.parent / "results"
SHOWN = (
    ("fact_recall", "facts", "{:.2f}"),
    ("summary_fact_recall", "summary", "{:.2f}"),
    ("citation_precision", "precision", "{:.2f}"),
    ("gold_source_recall", "gold recall", "{:.2f}"),
    ("repeated_sentence_rate", "repeated", "{:.2f}"),
    ("sub_question_readability", "readable", "{:.2f}"),
    ("seconds_per_run_warm_mean", "s/run", "{:.1f}"),
)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n\n")[1])
    add = parser.add_argument
    add("--corpus-set", default="all", help=f"a set name ({', '.join(corpora.names())}) or all (default)")
    add("--questions", type=Path, help="a question set file outside bench/quality/sets (one set)")
    add("--corpus", type=Path, help="the corpus folder, instead of the set's default (one set)")
    add("--split", choices=[*corpora.SPLITS, "all"], default="all", help="run only this split")
    add("--only", nargs="+", metavar="ID", help="run only these question ids")
    add("--home", type=Path, help="keep each corpus's index and reports in DIR/<set> (default: a temp dir)")
    add("--show", action="store_true", help="print each report")
    add("--json", type=Path, help="results file (default: bench/results/quality-<engine>-<time>.json)")
    add("--check", action="store_true", help="exit 1 when a held-out/outside figure regresses")
    add("--write-baseline", action="store_true", help="pin these held-out/outside figures as the baseline")
    add("--pin-from", type=Path, metavar="RESULTS", help="pin a results file's figures, no run")
    add("--tolerance", type=float, help="allowed drop per figure (default: the baseline file's)")
    add("--llm", action="store_true", help="LLM engine (an OpenAI-compatible endpoint)")
    add("--base-url", help="endpoint, e.g. http://127.0.0.1:11434/v1 (or OPENAI_BASE_URL)")
    add("--model", help="model name (or OPENAI_MODEL_NAME)")
    add("--api-key", help="key (or OPENAI_API_KEY; local servers accept any)")
    return parser.parse_args(argv)


def unknown_sets(args: argparse.Namespace) -> str | None:
    """Why the question sets asked for (--questions FILE or --corpus-set NAME) do not exist (None: they do);
    shared by the bench and its replay."""
    if args.questions:
        if args.questions.is_file():
            return None
        return f"no question set file {args.questions}: pass the path of a set's .json file"
    if args.corpus_set == "all" or args.corpus_set in corpora.names():
        return None
    return f"no question set {args.corpus_set!r} (known: {', '.join(corpora.names())}, or all)"


def selected_sets(args: argparse.Namespace) -> list[corpora.QuestionSet]:
    """The question sets asked for, once unknown_sets found them all."""
    if args.questions:
        return [corpora.load(args.questions)]
    if args.corpus_set == "all":
        return [corpora.load(name) for name in corpora.names()]
    return [corpora.load(args.corpus_set)]


def usage_error(args: argparse.Namespace, sets: list[corpora.QuestionSet]) -> str | None:
    """Why these arguments cannot run (None: they can)."""
    if args.corpus and len(sets) != 1:
        return "--corpus names the folder of one set: give --corpus-set NAME too"
    if (args.check or args.write_baseline) and (args.only or args.split != "all"):
        return "--check and --write-baseline compare whole sets: drop --only and --split"
    if args.llm and not (
        (args.base_url or os.environ.get("OPENAI_BASE_URL"))
        and (args.model or os.environ.get("OPENAI_MODEL_NAME"))
    ):
        return "--llm needs --base-url and --model (or OPENAI_BASE_URL, OPENAI_MODEL_NAME)"
    problems = [problem for qset in sets for problem in corpora.problems(qset)]
    if problems:
        return "question sets are malformed:\n  " + "\n  ".join(problems)
    missing = [qset.install_hint() for qset in sets if not qset.is_corpus(args.corpus or qset.corpus_dir)]
    if missing:
        return "corpus not found:\n  " + "\n  ".join(missing)
    return None


def chosen(args: argparse.Namespace, qset: corpora.QuestionSet) -> list[dict[str, Any]]:
    specs = qset.questions
    if args.split != "all":
        specs = [s for s in specs if s["split"] == args.split]
    if args.only:
        specs = [s for s in specs if s["id"] in args.only]
    return specs


def measure(args: argparse.Namespace, sets: list[corpora.QuestionSet]) -> dict[str, list[Score]]:
    scores: dict[str, list[Score]] = {}
    with tempfile.TemporaryDirectory(prefix="dr-quality-") as tmp:
        for qset in sets:
            specs = chosen(args, qset)
            if not specs:
                continue
            home = (args.home or Path(tmp)) / qset.name
            corpus = args.corpus or qset.corpus_dir
            scores[qset.name] = asyncio.run(run_set(args, qset, specs, corpus, home))
    return scores


def by_split(scores: dict[str, list[Score]]) -> baseline.Figures:
    figures: baseline.Figures = {}
    for name, items in scores.items():
        for split in corpora.SPLITS:
            part = [s for s in items if s.split == split]
            if part:
                figures.setdefault(name, {})[split] = summary(part)
    return figures


def print_table(figures: baseline.Figures) -> None:
    print(f"\n{'corpus':<10} {'split':<8} {'n':>3} " + " ".join(f"{label:>11}" for _, label, _ in SHOWN)
          + f" {'gold cited':>11} {'rep. count':>10}")  # fmt: skip
    for name, splits in figures.items():
        for split, f in splits.items():
            cells = " ".join(f"{form.format(f[key]):>11}" for key, _, form in SHOWN)
            gold = f"{f['gold_cited']}/{f['gold_total']}"
            repeated = f["repeated_sentences"]
            print(f"{name:<10} {split:<8} {f['questions']:>3} {cells} {gold:>11} {repeated:>10}")


def print_details(scores: dict[str, list[Score]]) -> None:
    """What each dev question missed. Held-out and outside questions print their figures only: reading
    which of their facts were missed is how one ends up tuning on them (the results file keeps it all)."""
    for name, items in scores.items():
        for s in items:
            if s.split != "dev":
                continue
            for fact in s.missing_facts:
                print(f"  missing fact [{name}/{s.qid}]: {fact}")
            for sq in s.unreadable:
                print(f"  unreadable [{name}/{s.qid}]: {sq}")
            print(f"  cited [{name}/{s.qid}]: {', '.join(s.cited) or '-'}")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.pin_from:
        results = json.loads(args.pin_from.read_text(encoding="utf-8"))
        baseline.write(baseline.updated(baseline.load(), results["engine"], results["figures"]))
        print(f"baseline written from {args.pin_from}: {baseline.BASELINE}")
        return 0
    if unknown := unknown_sets(args):
        print(f"error: {unknown}", file=sys.stderr)
        return 2
    sets = selected_sets(args)
    if error := usage_error(args, sets):
        print(f"error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.ERROR)
    # some sqlite3-doc pages are XHTML: the engine's extractor parses them as HTML (fine) and BeautifulSoup
    # warns once per page, burying the harness's own output
    warnings.filterwarnings("ignore", message="It looks like you're using an HTML parser to parse an XML")
    engine = "llm" if args.llm else "extractive"
    scores = measure(args, sets)
    if not scores:
        print("error: no question matched --split/--only", file=sys.stderr)
        return 2
    figures = by_split(scores)
    print_details(scores)
    print(f"\nengine: {engine}")
    print_table(figures)
    out = args.json or RESULTS / f"quality-{engine}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "engine": engine,
        "figures": figures,
        "questions": {name: [s.__dict__ for s in items] for name, items in scores.items()},
    }
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(f"results: {out}")
    return pin_or_check(args, engine, figures)


def pin_or_check(args: argparse.Namespace, engine: str, figures: baseline.Figures) -> int:
    pins = baseline.load()
    if args.write_baseline:
        baseline.write(baseline.updated(pins, engine, figures))
        print(f"baseline written: {baseline.BASELINE}")
        return 0
    if not args.check:
        return 0
    tolerance = args.tolerance if args.tolerance is not None else pins.get("tolerance", baseline.TOLERANCE)
    for where in baseline.unpinned(pins, engine, figures):
        print(f"  baseline: {where} is not pinned yet (--write-baseline pins it)")
    failures = baseline.regressions(pins, engine, figures, tolerance)
    for failure in failures:
        print(f"REGRESSION {failure}")
    verdict = "FAILED" if failures else "passed"
    print(f"check against {baseline.BASELINE.name} (tolerance {tolerance}): {verdict}")
    return 1 if failures else 0
