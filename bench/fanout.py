"""Benchmark: is the search fan-out really parallel? Wall time of the search_web stage for N queries of
latency L against the scripted search server on 127.0.0.1 (ideal: about L, whatever N).

    .venv/bin/python bench/fanout.py [--latency 0.5] [--queries 1 2 4 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deepresearch.engine.core import open_engine
from deepresearch.store import EventRecord
from peers import serve_app
from peers.openai_server import make_openai_server
from peers.research_llm import ResearchResponder
from peers.search_server import make_search_server
from peers.servers import Servers
from peers.static_site import make_static_site


async def measure(servers: Servers, queries: int, latency: float) -> dict[str, float]:
    servers.responder.queries = [f"sqlite durable checkpoints {i}" for i in range(queries)]
    servers.search.latency = latency
    marks: dict[str, float] = {}

    def clock(event: EventRecord) -> None:
        stage_level = "parent_call_id" not in event.data  # not one of the stage's sub-tool events
        if event.stage == "search_web" and stage_level and event.type in ("tool_call", "tool_result"):
            marks.setdefault(event.type, time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        settings = servers.settings(
            Path(tmp), llm=True, queries_per_round=queries, search_concurrency=queries
        )
        async with open_engine(settings) as engine:
            run = await engine.create_run("How do durable checkpoints work?")
            final = await engine.execute(run.run_id, on_event=clock)
    assert final.status == "completed", final.error
    stage = marks["tool_result"] - marks["tool_call"]
    return {
        "queries": queries,
        "latency_s": latency,
        "search_stage_s": round(stage, 3),
        "sequential_would_be_s": round(queries * latency, 3),
        "overhead_s": round(stage - latency, 3),
    }


def measure_all(queries: list[int], latency: float) -> list[dict[str, float]]:
    """The search stage's wall time for each query count, against scripted servers on 127.0.0.1."""
    site, llm, responder = make_static_site(), make_openai_server(), ResearchResponder()
    llm.responder = responder
    rows = []
    with serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            servers = Servers(site, site_url, search, search_url, llm, llm_url, responder)
            for n in queries:
                rows.append(asyncio.run(measure(servers, n, latency)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--queries", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    rows = measure_all(args.queries, args.latency)
    for row in rows:
        print(
            f"{row['queries']:>3} queries × {row['latency_s']}s: search stage {row['search_stage_s']:.3f}s "
            f"(sequential {row['sequential_would_be_s']:.1f}s, overhead {row['overhead_s']:.3f}s)"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
