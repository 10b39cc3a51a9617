"""Running a question set through the real engine, corpus only (no web), through its public entry."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bench.quality.corpora import QuestionSet
from bench.quality.scoring import Score, failed, row, score
from config import Settings
from deepresearch.engine.core import open_engine


def build_settings(args: argparse.Namespace, corpus: Path, home: Path) -> Settings:
    values: dict[str, Any] = {
        "home": home / "home",
        "workspace_dir": home / "workspace",
        "corpus_dir": corpus,
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


class RunNotCompleted(RuntimeError):
    """The engine ended a run in another state than completed (failed, cancelled, paused)."""


async def research(settings: Settings, question: str) -> tuple[float, str, dict[str, Any], dict[str, Any]]:
    async with open_engine(settings) as engine:
        run = await engine.create_run(question)
        started = time.perf_counter()
        final = await engine.execute(run.run_id)
        elapsed = time.perf_counter() - started
    if final.status != "completed":
        raise RunNotCompleted(f"{final.status}: {final.error}")
    folder = settings.workspace_dir / (final.artifact_dir or "")
    markdown = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    plan = json.loads((folder / "plan.json").read_text(encoding="utf-8"))
    return elapsed, markdown, sources, plan


async def run_set(
    args: argparse.Namespace, qset: QuestionSet, specs: list[dict[str, Any]], corpus: Path, home: Path
) -> list[Score]:
    """Research each question once and score it; a first, untimed run builds (or refreshes) the index."""
    settings = build_settings(args, corpus, home)
    started = time.perf_counter()
    await research(settings, specs[0]["question"])
    print(f"[{qset.name}] first run (indexes the corpus): {time.perf_counter() - started:.1f} s", flush=True)
    scores = []
    reports = home / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        try:
            elapsed, markdown, sources, plan = await research(settings, spec["question"])
        except RunNotCompleted as exc:
            result = failed(spec, str(exc))
        else:
            result = score(spec, markdown, sources["sources"], plan, corpus)
            result.seconds = elapsed
            # kept for reading the failures: each report next to the index, named by question id
            (reports / f"{spec['id']}.md").write_text(markdown, encoding="utf-8")
            if args.show:
                print(markdown, flush=True)
        scores.append(result)
        print(row(result), flush=True)
    return scores
