"""The committed baseline (bench/quality/baseline.json): the held-out and outside figures per engine and
corpus, and the check that fails the bench when a corpus falls below them by more than the tolerance.

Only splits that are never tuned on are pinned: a gain on dev questions that costs held-out ones is the
over-fitting this harness is there to catch. Rewrite the file with ``--write-baseline`` after a change
that is meant to move the figures, and say why in the commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BASELINE = Path(__file__).resolve().parent / "baseline.json"
PINNED_SPLITS = ("heldout", "outside")
TOLERANCE = 0.02
# figure -> +1 when higher is better, -1 when lower is better
Figures = dict[str, dict[str, dict[str, float]]]  # corpus -> split -> figure -> value
FIGURES = {
    "fact_recall": 1,
    "citation_precision": 1,
    "gold_source_recall": 1,
    "repeated_sentence_rate": -1,
}


def load(path: Path = BASELINE) -> dict[str, Any]:
    if not path.is_file():
        return {"tolerance": TOLERANCE, "engines": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def pinned(figures: dict[str, float]) -> dict[str, float]:
    return {"questions": figures["questions"], "not_completed": figures["not_completed"]} | {
        name: round(figures[name], 4) for name in FIGURES
    }


def regressions(baseline: dict[str, Any], engine: str, results: Figures, tolerance: float) -> list[str]:
    """Why the results fall below the baseline (empty: they do not). ``results`` is corpus -> split ->
    figures; a corpus or split without a baseline is not checked (it is reported as new)."""
    found: list[str] = []
    pins = baseline.get("engines", {}).get(engine, {})
    for corpus, splits in sorted(results.items()):
        for split in PINNED_SPLITS:
            if split not in splits:
                continue
            base = pins.get(corpus, {}).get(split)
            now = splits[split]
            if base is None:
                continue
            where = f"{corpus}/{split}"
            if now["questions"] != base["questions"]:
                found.append(
                    f"{where}: {now['questions']} questions, the baseline has {base['questions']} "
                    "(the set changed: measure the engine before the change and --write-baseline)"
                )
                continue
            if now["not_completed"] > base["not_completed"]:
                found.append(f"{where}: {now['not_completed']} runs not completed ({base['not_completed']})")
            for name, sign in FIGURES.items():
                if sign * (now[name] - base[name]) < -tolerance:
                    found.append(f"{where}: {name} {now[name]:.3f}, baseline {base[name]:.3f}")
    return found


def unpinned(baseline: dict[str, Any], engine: str, results: Figures) -> list[str]:
    """corpus/split pairs measured here that the baseline does not pin yet."""
    pins = baseline.get("engines", {}).get(engine, {})
    return [
        f"{corpus}/{split}"
        for corpus, splits in sorted(results.items())
        for split in PINNED_SPLITS
        if split in splits and split not in pins.get(corpus, {})
    ]


def updated(baseline: dict[str, Any], engine: str, results: Figures) -> dict[str, Any]:
    """The baseline with these corpora's pinned splits replaced (other corpora and engines kept)."""
    engines = dict(baseline.get("engines", {}))
    pins = dict(engines.get(engine, {}))
    for corpus, splits in results.items():
        kept = {split: pinned(figures) for split, figures in splits.items() if split in PINNED_SPLITS}
        if kept:
            pins[corpus] = kept
    engines[engine] = dict(sorted(pins.items()))
    return {"tolerance": baseline.get("tolerance", TOLERANCE), "engines": engines}


def write(data: dict[str, Any], path: Path = BASELINE) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
