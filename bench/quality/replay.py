"""python -m bench.quality.replay --home DIR [--corpus-set NAME|all] [--questions FILE] [--corpus DIR]

The last `python -m bench.quality --home DIR` run of each development question, its extractive reviewers'
findings and its report body composed again from the run's saved plan, evidence table and fetched sources
with the code as it is now, and scored as the bench scores a report: a change to the reviewers
(deepresearch/report/findings.py) or to the report body (deepresearch/report/digest.py) measured in seconds
instead of a bench run. Planning, search and screening are the run's own; a change to them needs the bench.
On unchanged code it gives the bench's figures, and with --exact each report body to the character
(tests/test_quality_harness.py); it reuses the run's critique and reflection as they were, and reads the
newest finished run of each question under the home.
Development questions only, as diagnose: a held-out or outside question's run is not read."""

from __future__ import annotations

import argparse
import functools
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from bench.quality import corpora
from bench.quality.cli import selected_sets, unknown_sets
from bench.quality.diagnose import Run, latest_runs
from bench.quality.scoring import Score, failed, row, score, summary
from deepresearch.extractive.reading.text import chunk_passages
from deepresearch.options import DEFAULT_REVIEWERS
from deepresearch.report.digest import extractive_report_body
from deepresearch.report.findings import extractive_review
from deepresearch.report.links import sanitize_links
from deepresearch.report.render import check_citations, cited_numbers
from deepresearch.search.documents import extract_text


@functools.lru_cache(maxsize=512)
def _passages(path: Path) -> tuple[str, ...]:
    text = extract_text(path, path.read_bytes()).text
    return tuple(chunk_passages(text) or [text])


def _texts(sources: list[dict[str, Any]], root: Path) -> dict[int, list[str]]:
    """The fetched corpus pages' passages as the citation check reads them: a corpus:// page is the corpus
    file's text, as the corpus search serves it."""
    texts = {}
    for source in sources:
        path = root / source["url"].removeprefix("corpus://").split("#", 1)[0]
        if source["url"].startswith("corpus://") and path.is_file():
            texts[source["n"]] = list(_passages(path))
    return texts


def _saved(run: Run, name: str) -> dict[str, Any]:
    """One of the run's artifacts, or {} when the run did not write it (no critique without the critic)."""
    return run.json(name) if (run.folder / name).is_file() else {}


def recomposed(run: Run, root: Path, exact: bool = False) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """The run's report (its body as the code composes it now) and its sources, each marked ``cited``
    when the body cites it, and its plan. ``exact``: the cited sentences checked against the corpus pages
    too, as the report writer does (minutes over a whole dev set: every page is read again; a source that
    is not a corpus page then counts as unknown and loses its citations); without it the body lacks the
    check's "unverified" marks and keeps any citation the check would drop - the figures were the same on
    every dev set in session 25."""
    plan = run.json("plan.json")
    evidence = run.json("evidence-table.json").get("evidence", [])
    sources = run.json("sources-fetched.json").get("sources", [])
    findings = {
        reviewer: extractive_review(
            reviewer,
            plan["sub_questions"],
            evidence,
            plan["question"],
            plan.get("topic", ""),
            plan.get("rarity"),
        )
        for reviewer in DEFAULT_REVIEWERS
    }
    state = {
        "question": plan["question"],
        "engine": "extractive",
        "plan": plan,
        "findings": findings,
        "evidence": evidence,
        "sources": sources,
        # the run's critique and reflection as they were (their open questions end the report body)
        "critique": _saved(run, "critique.json"),
        "reflection": _saved(run, "research-state.json").get("reflection") or {},
    }
    # checked and written as the report writes it (compose.build_report_bundle): each cited sentence
    # against its source's passages, then the link rule, which escapes what would read as markup
    fetched = {u for s in sources for u in (s["url"], s.get("final_url")) if u}
    body = extractive_report_body(state).strip()
    if exact:
        body, _ = check_citations(body, _texts(sources, root), fetched, quoted=True)
    cited = cited_numbers(body)
    marked = [source | {"cited": source["n"] in cited} for source in sources]
    markdown, _ = sanitize_links(f"# {plan['question']}\n\n{body}\n\n## Sources\n", fetched)
    return markdown, marked, plan


def replay(
    qset: corpora.QuestionSet, home: Path, root: Path, exact: bool = False
) -> tuple[list[Score], list[str]]:
    """The scores of the set's development questions recomposed, and the ids without a finished
    extractive run (scored as the bench scores a run that did not complete: nothing found)."""
    runs = latest_runs(home / qset.name / "workspace")
    scores, missing = [], []
    for spec in qset.questions:
        if spec.get("split", "dev") != "dev":
            continue  # a held-out or outside question: its run is not read while tuning
        run = runs.get(spec["question"])
        if run is None or _saved(run, "research-state.json").get("engine") != "extractive":
            missing.append(spec["id"])
            scores.append(failed(spec, "no finished extractive run"))
            continue
        markdown, sources, plan = recomposed(run, root, exact)
        scores.append(score(spec, markdown, sources, plan, root))
    return scores, missing


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality.replay", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--home", type=Path, required=True, help="the --home of the bench.quality run")
    parser.add_argument(
        "--corpus-set", default="all", help=f"a set name ({', '.join(corpora.names())}) or all"
    )
    parser.add_argument("--questions", type=Path, help="a question set file outside bench/quality/sets")
    parser.add_argument("--corpus", type=Path, help="the corpus folder, if not the set's own (one set)")
    parser.add_argument("--json", type=Path, help="write the figures per set to this file")
    parser.add_argument("--quiet", action="store_true", help="print only each set's figures")
    parser.add_argument(
        "--exact",
        action="store_true",
        help="check the citations against the pages too (minutes, not seconds)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if unknown := unknown_sets(args):
        print(f"error: {unknown}", file=sys.stderr)
        return 2
    sets = selected_sets(args)
    if args.corpus is not None and len(sets) != 1:
        print("error: --corpus names the folder of one set: give --corpus-set NAME too", file=sys.stderr)
        return 2
    # some sqlite3-doc pages are XHTML, parsed as HTML (fine): BeautifulSoup's warning per page is noise
    warnings.filterwarnings("ignore", message="It looks like you're using an HTML parser to parse an XML")
    figures: dict[str, dict[str, float]] = {}
    for qset in sets:
        if not (args.home / qset.name / "workspace").is_dir():
            continue  # never run there
        scores, missing = replay(qset, args.home, args.corpus or qset.corpus_dir, args.exact)
        for qid in missing:
            print(f"{qset.name}/{qid}: no finished extractive run (scored as not completed)")
        if len(missing) == len(scores):
            continue
        if not args.quiet:
            print("\n".join(row(s) for s in scores))
        figures[qset.name] = summary(scores)
        f = figures[qset.name]
        print(
            f"{qset.name} dev {f['questions']}: fact recall {f['fact_recall']:.3f} (summary "
            f"{f['summary_fact_recall']:.3f}), citation precision {f['citation_precision']:.3f}, gold "
            f"{f['gold_cited']}/{f['gold_total']}, repeated {f['repeated_sentences']}"
        )
    if not figures:
        hint = f"python -m bench.quality --home {args.home} --split dev"
        print(f"error: no development runs under {args.home}: run `{hint}` first", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
