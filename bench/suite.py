"""The benchmark's scenarios, in order. Quick mode: SQLite, one run, 10 at once, the database, extraction,
resume, cancel and fan-out (under 2 minutes on 2 cores). Full mode adds PostgreSQL, 50 and 200 at once and
the run-size series behind the plots."""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.measure import (
    Server,
    batch,
    cancel_latency,
    cpu_seconds,
    database_bytes,
    extraction_cpu_ms,
    idle_by_stage,
    interval_stats,
    live_server,
    resume_latency,
    server_env,
    summarise_batch,
)
from bench.peers import DEFAULT_LATENCIES, Peers, peers_process

logger = logging.getLogger("bench")

DEFAULT_RUN = {"max_research_loops": 2, "queries_per_round": 4, "results_per_query": 5, "sources_to_fetch": 8}
RUN_SIZES = (
    {"max_research_loops": 1, "queries_per_round": 2, "results_per_query": 5, "sources_to_fetch": 2},
    {"max_research_loops": 1, "queries_per_round": 4, "results_per_query": 5, "sources_to_fetch": 4},
    DEFAULT_RUN,
    {"max_research_loops": 2, "queries_per_round": 8, "results_per_query": 5, "sources_to_fetch": 16},
)


@dataclass(frozen=True, slots=True)
class Plan:
    quick: bool
    postgres: bool
    concurrency: tuple[int, ...]
    single_runs: int
    sizes: bool


QUICK = Plan(quick=True, postgres=False, concurrency=(10,), single_runs=1, sizes=False)
FULL = Plan(quick=False, postgres=True, concurrency=(10, 50, 200), single_runs=3, sizes=True)


def machine() -> dict[str, Any]:
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    memory = None
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        first = meminfo.read_text().splitlines()[0].split()
        memory = round(int(first[1]) / 1024 / 1024, 1)
    return {
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "versions": {
            name: version(name)
            for name in (
                "deepresearch",
                "langgraph",
                "langgraph-checkpoint-sqlite",
                "langgraph-checkpoint-postgres",
                "fastapi",
                "uvicorn",
                "trafilatura",
                "httpx",
                "psycopg",
            )
        },
        "peer_latencies_s": DEFAULT_LATENCIES,
    }


def timed_batch(
    server: Server, peers: Peers, n: int, options: dict[str, Any] | None, tag: str
) -> dict[str, Any]:
    """One batch of ``n`` runs at once, with the server process's CPU seconds per run (is it CPU-bound?)."""
    cpu_before = cpu_seconds(server.pid)
    traces = asyncio.run(batch(server.url, n, options, tag=tag, keep=n == 1))
    row = summarise_batch(traces, peers)
    row["server_cpu_s_per_run"] = round((cpu_seconds(server.pid) - cpu_before) / n, 3)
    row["server_cpu_share"] = round((cpu_seconds(server.pid) - cpu_before) / row["wall_s"], 2)
    if n == 1:
        trace = traces[0]
        intervals = [x for x in peers.intervals(trace.posted_at) if x.start <= trace.ended_at]
        row["calls"] = interval_stats(intervals)
        row["idle_by_stage_s"] = idle_by_stage(trace, intervals)
    return row


def one_run_series(
    server: Server, peers: Peers, database_url: str, runs: int, options: dict[str, Any] | None
) -> dict[str, Any]:
    """``runs`` runs one after another: overhead per run (median) and database growth per run."""
    before = database_bytes(database_url)
    rows = [timed_batch(server, peers, 1, options, f"single {i}") for i in range(runs)]
    grown = database_bytes(database_url) - before
    median = statistics.median(r["overhead"] for r in rows)
    best = min(rows, key=lambda r: abs(r["overhead"] - median))
    keys = ("wall_s", "external_union_s", "calls", "idle_by_stage_s", "server_cpu_s_per_run")
    return {
        "overhead": median,
        **{key: best[key] for key in keys},
        "runs": rows,
        "db_bytes_per_run": grown // runs,
        "completed": sum(r["completed"] for r in rows),
    }


def backend(
    plan: Plan, peers: Peers, database_url: str, home: Path, results: dict[str, Any], name: str
) -> None:
    """Everything measured against one `deepresearch serve` on one database."""
    env = server_env(peers, home, database_url)
    with live_server(env, home / f"serve-{name}.log") as server:
        logger.info("%s: warm-up run", name)
        asyncio.run(batch(server.url, 1, None, tag="warm-up"))  # imports, model negotiation, connections
        logger.info("%s: %d default run(s), one after another", name, plan.single_runs)
        single = one_run_series(server, peers, database_url, plan.single_runs, None)
        results.setdefault("single", {})[name] = single
        if name != "sqlite":
            return
        results["database"] = {"bytes_per_default_run": single["db_bytes_per_run"], "database": name}
        one = single["wall_s"]
        for n in plan.concurrency:
            logger.info("%s: %d runs at once", name, n)
            row = timed_batch(server, peers, n, None, f"x{n}")
            row["ratio"] = round(row["wall_s"] / one, 2)
            results.setdefault("concurrency", {})[str(n)] = row
        logger.info("%s: resume and cancel", name)
        results["resume"] = asyncio.run(resume_latency(server.url))
        results["cancel"] = asyncio.run(cancel_latency(server.url, peers))
        if plan.sizes:
            sizes = []
            for options in RUN_SIZES:
                logger.info("%s: run size %s", name, options)
                series = one_run_series(server, peers, database_url, 1, options)
                calls = series["calls"]
                sizes.append(
                    {
                        "options": options,
                        "overhead": series["overhead"],
                        "wall_s": series["wall_s"],
                        "external_union_s": series["external_union_s"],
                        "external_calls": sum(calls.values()),
                        "sources_fetched": calls.get("fetch", 0),
                        "db_bytes": series["db_bytes_per_run"],
                    }
                )
            results["sizes"] = sizes


def fanout() -> dict[str, Any]:
    """Search fan-out: the search stage's wall for 16 queries against one query, 150 ms per search."""
    from bench.fanout import measure_all

    rows = measure_all([1, 16, 1, 16, 1, 16], DEFAULT_LATENCIES["search"])  # medians of three
    one = statistics.median(r["search_stage_s"] for r in rows if r["queries"] == 1)
    sixteen = statistics.median(r["search_stage_s"] for r in rows if r["queries"] == 16)
    return {"rows": rows, "one_s": one, "sixteen_s": sixteen, "ratio_16_to_1": round(sixteen / one, 2)}


def postgres_database() -> tuple[str | None, Any, str]:
    """A throwaway PostgreSQL cluster (peers/pg.py: as the `postgres` user when root), or why not."""
    from peers.pg import PostgresNotInstalled, start_cluster

    try:
        cluster = start_cluster()
    except (PostgresNotInstalled, RuntimeError, subprocess.SubprocessError) as exc:
        return None, None, str(exc)
    return cluster.dsn(cluster.create_database("deepresearch_bench")), cluster, ""


def run(plan: Plan) -> dict[str, Any]:
    results: dict[str, Any] = {"mode": "quick" if plan.quick else "full", "machine": machine(), "skipped": []}
    started = time.monotonic()
    with peers_process() as peers, tempfile.TemporaryDirectory(prefix="deepresearch-bench-") as tmp:
        home = Path(tmp)
        (home / "sqlite").mkdir()
        backend(plan, peers, f"sqlite:///{home / 'sqlite' / 'bench.db'}", home / "sqlite", results, "sqlite")
        if plan.postgres:
            dsn, cluster, why = postgres_database()
            if dsn is None:
                logger.warning("PostgreSQL skipped: %s", why)
                results["skipped"].append(f"PostgreSQL: {why}")
            else:
                try:
                    backend(plan, peers, dsn, home / "postgres", results, "postgres")
                finally:
                    cluster.stop()
    logger.info("extraction CPU and search fan-out (in this process)")
    results["extraction"] = extraction_cpu_ms()
    results["fanout"] = fanout()
    results["bench_seconds"] = round(time.monotonic() - started, 1)
    results["command"] = " ".join([Path(sys.executable).name, "-m", "bench", *sys.argv[1:]])
    return results
