"""The figures against issue 13's targets: a printed table, the JSON file and the PNG plots."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("bench")

PLOTS_HINT = "pip install matplotlib (or: pip install -e '.[bench]')"


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    path: tuple[str, ...]
    """Where the figure is in the results."""
    target: str
    met: Callable[[Any, dict[str, Any]], bool]
    unit: str = ""


def _get(results: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = results
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


TARGETS: tuple[Target, ...] = (
    Target(
        "overhead of a default run, SQLite",
        ("single", "sqlite", "overhead"),
        "≤ 1.05",
        lambda v, r: v <= 1.05,
    ),
    Target(
        "overhead of a default run, PostgreSQL",
        ("single", "postgres", "overhead"),
        "≤ 1.05",
        lambda v, r: v <= 1.05,
    ),
    Target(
        "10 concurrent runs ÷ one run", ("concurrency", "10", "ratio"), "≤ 1.3", lambda v, r: v <= 1.3, "×"
    ),
    Target("10 concurrent: SSE p95", ("concurrency", "10", "sse_p95_ms"), "(none)", lambda v, r: True, " ms"),
    Target("50 concurrent runs ÷ one run", ("concurrency", "50", "ratio"), "≤ 2", lambda v, r: v <= 2.0, "×"),
    Target(
        "50 concurrent: SSE p95", ("concurrency", "50", "sse_p95_ms"), "< 100 ms", lambda v, r: v < 100, " ms"
    ),
    Target(
        "200 concurrent: completed",
        ("concurrency", "200", "completed"),
        "all 200",
        lambda v, r: v == _get(r, ("concurrency", "200", "runs")) == 200,
    ),
    Target(
        "database bytes per default run",
        ("database", "bytes_per_default_run"),
        "≤ 300 KB",
        lambda v, r: v <= 300_000,
        " B",
    ),
    Target(
        "extraction CPU per page", ("extraction", "cpu_ms_median"), "≤ 30 ms", lambda v, r: v <= 30, " ms"
    ),
    Target(
        "resume → first new event", ("resume", "first_new_event_ms"), "< 100 ms", lambda v, r: v < 100, " ms"
    ),
    Target(
        "cancel with a call in flight → cancelled, after that call",
        ("cancel", "cancelled_after_call_ms"),
        "< 1000 ms",
        lambda v, r: v < 1000,
        " ms",
    ),
    Target(
        "fan-out: 16 queries ÷ 1 query",
        ("fanout", "ratio_16_to_1"),
        "≈ 1 (≤ 1.25)",
        lambda v, r: v <= 1.25,
        "×",
    ),
    Target(
        "peer: single-run overhead, ours ÷ LangGraph server",
        ("peer", "overhead_ratio"),
        "(report)",
        lambda v, r: True,
        "×",
    ),
    Target(
        "peer: 10 concurrent wall, ours ÷ LangGraph server",
        ("peer", "wall_ratio_10"),
        "(report)",
        lambda v, r: True,
        "×",
    ),
    Target(
        "peer: 50 concurrent wall, ours ÷ LangGraph server",
        ("peer", "wall_ratio_50"),
        "(report)",
        lambda v, r: True,
        "×",
    ),
)


def verdicts(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for target in TARGETS:
        value = _get(results, target.path)
        if value is None:
            verdict = "not measured"
        elif target.target.startswith("("):
            verdict = "-"
        else:
            verdict = "met" if target.met(value, results) else "missed"
        rows.append(
            {
                "figure": target.name,
                "value": value,
                "unit": target.unit,
                "target": target.target,
                "verdict": verdict,
            }
        )
    return rows


def table(results: dict[str, Any]) -> str:
    """The Markdown table of every figure against its target (printed, and pasted into the docs)."""
    lines = ["| figure | measured | target | verdict |", "|---|---|---|---|"]
    for row in verdicts(results):
        value = "—" if row["value"] is None else f"{_fmt(row['value'])}{row['unit']}"
        lines.append(f"| {row['figure']} | {value} | {row['target']} | {row['verdict']} |")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if value < 10 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def write_json(results: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    results = results | {"verdicts": verdicts(results)}
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def plots(results: dict[str, Any], folder: Path) -> list[Path]:
    """PNG plots, when matplotlib is installed (it is an optional extra, never a product dependency)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("plots skipped: matplotlib is not installed (%s)", PLOTS_HINT)
        return []
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    concurrency = results.get("concurrency") or {}
    if concurrency:
        ns = sorted(int(n) for n in concurrency)
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        left.plot(ns, [concurrency[str(n)]["ratio"] for n in ns], "o-", label="wall ÷ one run")
        left.plot(ns, [1.3 if n <= 10 else 2.0 for n in ns], "k--", lw=0.8, label="target")
        left.set(xlabel="runs started at once", ylabel="wall time ÷ one run", xscale="log")
        left.legend()
        right.plot(ns, [concurrency[str(n)]["sse_p50_ms"] for n in ns], "o-", label="SSE p50")
        right.plot(ns, [concurrency[str(n)]["sse_p95_ms"] for n in ns], "s-", label="SSE p95")
        right.axhline(100, color="k", ls="--", lw=0.8, label="p95 target")
        right.set(xlabel="runs started at once", ylabel="delivery latency (ms)", xscale="log")
        right.legend()
        fig.suptitle("Latency vs concurrency (one deepresearch serve process)")
        fig.tight_layout()
        written.append(_save(fig, folder / "latency-vs-concurrency.png", plt))
    sizes = results.get("sizes") or []
    if sizes:
        fig, ax = plt.subplots(figsize=(5, 4))
        ax.plot([s["external_calls"] for s in sizes], [s["overhead"] for s in sizes], "o-")
        ax.axhline(1.05, color="k", ls="--", lw=0.8, label="target 1.05")
        ax.set(
            xlabel="external calls in the run",
            ylabel="wall ÷ external-call union",
            title="Overhead vs run size",
        )
        ax.legend()
        fig.tight_layout()
        written.append(_save(fig, folder / "overhead-vs-run-size.png", plt))
        fig, ax = plt.subplots(figsize=(5, 4))
        ax.plot([s["sources_fetched"] for s in sizes], [s["db_bytes"] / 1000 for s in sizes], "o-")
        ax.axhline(300, color="k", ls="--", lw=0.8, label="target 300 KB (default run)")
        ax.set(xlabel="sources fetched in the run", ylabel="database growth (KB)", title="Bytes vs sources")
        ax.legend()
        fig.tight_layout()
        written.append(_save(fig, folder / "bytes-vs-sources.png", plt))
    return written


def _save(fig: Any, path: Path, plt: Any) -> Path:
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
