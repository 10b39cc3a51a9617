"""The benchmark's own arithmetic, and the graph factory that langgraph.json hands to LangGraph's server.

The benchmarks themselves do not run here (bench/, `python -m bench`): these check that what they build on
is right. The factory test runs the platform graph for real against the scripted servers on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from bench.measure import percentile, union_seconds
from deepresearch.store import open_persistence
from tests.conftest import Servers

ROOT = Path(__file__).resolve().parent.parent


def test_union_counts_overlaps_once() -> None:
    assert union_seconds([]) == 0
    assert union_seconds([(0, 1), (2, 3)]) == pytest.approx(2)  # disjoint
    assert union_seconds([(0, 2), (1, 3)]) == pytest.approx(3)  # overlapping
    assert union_seconds([(0, 10), (2, 3), (4, 5)]) == pytest.approx(10)  # nested
    assert union_seconds([(0, 1), (1, 2)]) == pytest.approx(2)  # touching
    assert union_seconds([(5, 6), (0, 1), (0.5, 2)]) == pytest.approx(3)  # unsorted
    assert union_seconds([(1, 1), (3, 2), (0, 0.5)]) == pytest.approx(0.5)  # empty and reversed ignored
    # four parallel 150 ms searches are 150 ms of busy time, not 600
    assert union_seconds([(0, 0.15)] * 4) == pytest.approx(0.15)


def test_percentile_interpolates() -> None:
    assert percentile([], 95) is None
    assert percentile([7.0], 50) == 7.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile(list(map(float, range(101))), 95) == pytest.approx(95)


def _factory() -> object:
    """The graph factory exactly as langgraph.json names it (a file path and an attribute)."""
    spec = json.loads((ROOT / "langgraph.json").read_text())["graphs"]["deepresearch"]
    path, _, attribute = spec.rpartition(":")
    module_spec = importlib.util.spec_from_file_location("langgraph_json_graph", ROOT / path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module  # as the server loads it: type hints resolve in its globals
    module_spec.loader.exec_module(module)
    return getattr(module, attribute)


async def test_langgraph_json_factory_builds_a_compiled_graph() -> None:
    async with _factory()({"configurable": {}}) as graph:  # type: ignore[operator]
        assert isinstance(graph, CompiledStateGraph)
        assert "research" in graph.get_graph().nodes


async def test_factory_runs_the_research_with_receipts_in_our_store(
    servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepresearch.platform_graph import aclose_stores, run_id_for

    database = f"sqlite:///{tmp_path / 'runs.db'}"
    for name, value in servers.env(tmp_path, llm=True).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DEEPRESEARCH_DATABASE_URL", database)
    saver = InMemorySaver()  # what the LangGraph server brings: its checkpointer, its thread
    question = {"question": "How do durable workflow checkpoints avoid repeating work?"}
    try:
        outputs = []
        for _attempt in range(2):  # the same thread twice: the second is all receipts
            config = {"configurable": {"thread_id": "thread-1"}}
            async with _factory()(config) as graph:  # type: ignore[operator]
                graph = graph.copy(update={"checkpointer": saver})
                outputs.append(await graph.ainvoke(question, config))
            if _attempt == 0:
                calls = (len(servers.llm.calls), len(servers.search.calls), servers.site.total_hits)
    finally:
        await aclose_stores()
    first, second = outputs
    assert first["status"] == "completed" and first["report"]["report_path"]
    assert first["sources"] and all(s["url"].startswith(servers.site_url) for s in first["sources"])
    assert (tmp_path / "workspace" / first["report"]["report_path"]).is_file()
    assert calls[0] > 0 and calls[1] > 0 and calls[2] > 0
    # no model, search or page request was made again: the receipts are in our store
    assert (len(servers.llm.calls), len(servers.search.calls), servers.site.total_hits) == calls
    assert second["report"]["report_path"] == first["report"]["report_path"]
    async with open_persistence(database) as persistence:
        run = await persistence.store.get_run(run_id_for("thread-1"))
        receipts = await persistence.store.list_receipts(run.run_id)
    assert run.status == "cancelled"  # never queued/running: `deepresearch serve` must not take it over
    assert {r.tool_name for r in receipts} >= {"web.search", "web.fetch", "llm.structured"}
    assert all(r.status == "succeeded" for r in receipts)


def test_bench_imports_neither_pytest_nor_the_tests() -> None:
    """bench runs its peers from peers/ (no test machinery): importing every bench module in a fresh
    interpreter loads no pytest and nothing of tests/."""
    names = sorted(f"bench.{p.stem}" for p in (ROOT / "bench").glob("*.py") if p.stem != "__init__")
    probe = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'tests')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
