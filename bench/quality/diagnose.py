"""python -m bench.quality.diagnose --home DIR --corpus-set NAME [--show-facts]

Where each development question loses what it misses, read from the artifacts of the last
`python -m bench.quality --home DIR` run over the set: for each gold page, its place in the merged search
results, its place among the fetched pages and how many evidence passages it gave; for each gold fact, the
last stage that still holds it - the report, the evidence table, a fetched page, the gold page's text, or
nowhere the run saw. Development questions only: a held-out or outside question is refused, because its
reports are never read while the engine is tuned (docs/quality.md)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quality import corpora
from bench.quality.scoring import fact_found, page_of, report_body
from deepresearch.search.documents import extract_text

STAGES = ("report", "evidence", "fetched page", "gold page", "elsewhere")
"""Where a fact is found last, from the report back to the corpus."""


@dataclass(frozen=True)
class Run:
    """One finished research of a question: its artifacts folder."""

    folder: Path

    def json(self, name: str) -> Any:
        return json.loads((self.folder / name).read_text(encoding="utf-8"))


def latest_runs(workspace: Path) -> dict[str, Run]:
    """The newest finished run of each question under a workspace (the runner keeps every run)."""
    found: dict[str, tuple[float, Run]] = {}
    for plan in workspace.glob("research/*/plan.json"):
        report = plan.parent / "deepresearch-report.md"
        if not report.is_file():
            continue
        question = json.loads(plan.read_text(encoding="utf-8")).get("question", "")
        mtime = report.stat().st_mtime
        if question not in found or found[question][0] < mtime:
            found[question] = (mtime, Run(plan.parent))
    return {question: run for question, (_, run) in found.items()}


def _flat(text: str) -> str:
    return " ".join(text.split())


def page_text(root: Path, page: str) -> str:
    """A corpus page's plain text, as the index reads it ("" when it is not there)."""
    path = root / page
    if not path.is_file():
        return ""
    return _flat(extract_text(path, path.read_bytes()).text)


def diagnose(spec: dict[str, Any], run: Run, root: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Lines on the question's gold pages, and (stage, fact) for each of its facts."""
    results = [page_of(r["url"], root) for r in run.json("search-results.json").get("results", [])]
    fetched = run.json("sources-fetched.json").get("sources", [])
    pages = {s["n"]: page_of(s["url"], root) for s in fetched}
    evidence = run.json("evidence-table.json").get("evidence", [])
    given = Counter(pages.get(e["n"], "") for e in evidence)
    order = [pages[s["n"]] for s in fetched]
    lines = []
    for gold in spec["gold"]:
        searched = results.index(gold) + 1 if gold in results else None
        read = order.index(gold) + 1 if gold in order else None
        lines.append(
            f"  gold {gold}: search #{searched or '-'} of {len(results)}, fetched #{read or '-'} of "
            f"{len(order)}, evidence {given[gold]} of {len(evidence)} (most: "
            + ", ".join(f"{page} {count}" for page, count in given.most_common(2))
            + ")"
        )
    texts = {
        "report": _flat(report_body((run.folder / "deepresearch-report.md").read_text(encoding="utf-8"))),
        "evidence": _flat(" ".join(e["passage"] for e in evidence)),
        "fetched page": " ".join(page_text(root, page) for page in dict.fromkeys(order)),
        "gold page": " ".join(page_text(root, page) for page in spec["gold"]),
    }
    facts = [
        (next((stage for stage in STAGES[:-1] if fact_found(fact, texts[stage])), STAGES[-1]), fact["fact"])
        for fact in spec["facts"]
    ]
    return lines, facts


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.quality.diagnose", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--home", type=Path, required=True, help="the --home of the bench.quality run")
    parser.add_argument("--corpus-set", required=True, help=f"a set name ({', '.join(corpora.names())})")
    parser.add_argument("--corpus", type=Path, help="the corpus folder, if not the set's own")
    parser.add_argument("--show-facts", action="store_true", help="print each fact with its stage")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.corpus_set not in corpora.names():
        print(
            f"error: no question set {args.corpus_set!r} (known: {', '.join(corpora.names())})",
            file=sys.stderr,
        )
        return 2
    qset = corpora.load(args.corpus_set)
    root = args.corpus or qset.corpus_dir
    workspace = args.home / qset.name / "workspace"
    if not workspace.is_dir():
        hint = f"python -m bench.quality --home {args.home} --corpus-set {qset.name} --split dev"
        print(f"error: no runs in {workspace}: run `{hint}` first", file=sys.stderr)
        return 2
    # some sqlite3-doc pages are XHTML, parsed as HTML (fine): BeautifulSoup's warning per page is noise
    warnings.filterwarnings("ignore", message="It looks like you're using an HTML parser to parse an XML")
    runs = latest_runs(workspace)
    totals: Counter[str] = Counter()
    for spec in qset.questions:
        if spec.get("split", "dev") != "dev":
            continue  # a held-out or outside question: its reports are not read while tuning
        run = runs.get(spec["question"])
        if run is None:
            print(f"{spec['id']}: no finished run")
            continue
        lines, facts = diagnose(spec, run, root)
        stages = Counter(stage for stage, _ in facts)
        totals.update(stages)
        print(f"{spec['id']}: " + ", ".join(f"{stages[s]} {s}" for s in STAGES if stages[s]))
        print("\n".join(lines))
        if args.show_facts:
            print("\n".join(f"    {stage:12} {fact}" for stage, fact in facts if stage != "report"))
    print("facts, by the last stage that holds them: " + ", ".join(f"{totals[s]} {s}" for s in STAGES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
