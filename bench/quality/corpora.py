"""The question sets (bench/quality/sets/NAME.json), the corpus each one is written for, and their splits.

A set file names its corpus: the Debian package that ships it (``package``), the folder it installs
(``corpus_dir``) and a file or folder that only that corpus has (``marker``), so a missing corpus is met by
the command that installs it rather than by a run over the wrong folder. Each question has a fixed
``split``: ``dev`` (the engine may be tuned on it), ``heldout`` (reported, never tuned on) or ``outside``
(a whole set kept as an outside check, never tuned on). The dev/heldout labels come from a seeded shuffle
recorded in the file (``split_rule``), chosen before any measurement; ``split_of`` recomputes them, and
tests/test_quality_harness.py checks that every file still agrees with its seed. A set without a seed names
its ``kind`` instead, and every question must carry that kind's split: ``tuned`` (the legacy set, all dev),
``outside`` (all outside) or ``dev`` (extra development material beside a seeded set's dev half, e.g.
git-dev.json: tuning material only, so a held-out question in it is an error)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETS = Path(__file__).resolve().parent / "sets"
SPLITS = ("dev", "heldout", "outside")
# split_rule kind (a set with no seed) -> the split every one of its questions must have
KIND_SPLIT = {"tuned": "dev", "dev": "dev", "outside": "outside"}
STYLES = ("how", "why", "what-goes-wrong", "compare", "mechanism", "what")


@dataclass(frozen=True)
class QuestionSet:
    name: str
    path: Path
    corpus: str
    package: str
    corpus_dir: Path
    marker: str
    split_rule: dict[str, Any]
    questions: list[dict[str, Any]]

    def install_hint(self) -> str:
        return (
            f"the {self.name!r} question set is written for {self.corpus}: install it with "
            f"`sudo apt-get install {self.package}` (Debian/Ubuntu; it lands in {self.corpus_dir}), "
            "or pass --corpus DIR"
        )

    def is_corpus(self, folder: Path) -> bool:
        return (folder / self.marker).exists()


def names() -> list[str]:
    return sorted(path.stem for path in SETS.glob("*.json"))


def load(name_or_path: str | Path) -> QuestionSet:
    """A set by its name (a file in bench/quality/sets) or by the path of a set file."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SETS / f"{name_or_path}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return QuestionSet(
        name=data.get("name", path.stem),
        path=path,
        corpus=data["corpus"],
        package=data["package"],
        corpus_dir=Path(data["corpus_dir"]),
        marker=data["marker"],
        split_rule=data.get("split_rule", {}),
        questions=data["questions"],
    )


def split_of(ids: list[str], seed: int) -> dict[str, str]:
    """dev/heldout per question id: the ids sorted, shuffled by random.Random(seed), the first half (rounded
    up) dev and the rest heldout."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    cut = (len(order) + 1) // 2
    return {qid: ("dev" if i < cut else "heldout") for i, qid in enumerate(order)}


def problems(qset: QuestionSet) -> list[str]:
    """What is wrong with a set file's shape (empty: nothing): every question has gold pages among its
    relevant ones, facts whose patterns compile, a known split and style, and the recorded split rule
    gives the recorded labels (a seed) or every question has its kind's split."""
    found: list[str] = []
    ids = [q["id"] for q in qset.questions]
    if len(set(ids)) != len(ids):
        found.append("duplicate question ids")
    for q in qset.questions:
        where = f"{qset.name}/{q['id']}"
        if q.get("split") not in SPLITS:
            found.append(f"{where}: split {q.get('split')!r} is not one of {SPLITS}")
        if q.get("style", "what") not in STYLES:
            found.append(f"{where}: style {q.get('style')!r} is not one of {STYLES}")
        if not q["gold"] or not set(q["gold"]) <= set(q["relevant"]):
            found.append(f"{where}: gold pages must be listed and also be relevant")
        if not q["facts"]:
            found.append(f"{where}: no facts")
        for fact in q["facts"]:
            for pattern in fact["any"]:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    found.append(f"{where}: pattern {pattern!r}: {exc}")
    if qset.split_rule.get("seed") is not None:
        shuffled = {q["id"]: q["split"] for q in qset.questions if q.get("split") in ("dev", "heldout")}
        if split_of(list(shuffled), int(qset.split_rule["seed"])) != shuffled:
            found.append(f"{qset.name}: splits do not follow split_rule seed {qset.split_rule['seed']}")
    elif (kind := qset.split_rule.get("kind")) is not None:
        split = KIND_SPLIT.get(kind)
        if split is None:
            found.append(f"{qset.name}: split_rule kind {kind!r} is not one of {tuple(KIND_SPLIT)}")
        for q in qset.questions:
            if split is not None and q.get("split") != split:
                where = f"{qset.name}/{q['id']}"
                found.append(f"{where}: split {q.get('split')!r} in a {kind!r} set (only {split!r})")
    return found


def missing_pages(qset: QuestionSet, root: Path) -> list[str]:
    """Gold and relevant pages that the installed corpus does not have (a typo, or another version)."""
    pages = {page for q in qset.questions for page in q["gold"] + q["relevant"]}
    return sorted(page for page in pages if not (root / page).is_file())
