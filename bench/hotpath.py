"""Hot-path measurements behind docs/profile.md: a batch of concurrent LLM-mode runs against the scripted
peers on 127.0.0.1 (wall time, CPU time, database bytes by table), and the extraction CPU per page.

    nice -n 10 .venv/bin/python bench/hotpath.py batch --runs 10        # wall, CPU, bytes per run
    nice -n 10 .venv/bin/python bench/hotpath.py extract --pages 40     # CPU ms per page
    nice -n 10 .venv/bin/python bench/hotpath.py resume                 # resume -> first new event

Profile the batch with py-spy from a separate venv (never a product dependency):
    /work/.cache/profvenv/bin/py-spy record --rate 200 -f raw -o /tmp/batch.txt -- \
        .venv/bin/python bench/hotpath.py batch --runs 30 --peers-process
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deepresearch.engine.core import open_engine
from deepresearch.store import EventRecord
from peers import serve_app
from peers.openai_server import make_openai_server
from peers.research_llm import ResearchResponder
from peers.search_server import make_search_server
from peers.servers import Servers
from peers.static_site import ARTICLES, article_html, make_static_site

DEFAULT_SHAPE = {
    "max_research_loops": 2,
    "queries_per_round": 4,
    "results_per_query": 5,
    "sources_to_fetch": 8,
}


def table_bytes(db: Path) -> dict[str, int]:
    """Bytes per table (and its indexes) from SQLite's dbstat view."""
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:  # dbstat not compiled in: whole file only
            return {"(file)": db.stat().st_size}
        return {name: int(size) for name, size in rows}


async def batch(servers: Servers, runs: int, llm_latency: float, search_latency: float) -> dict[str, Any]:
    servers.llm.latency, servers.search.latency = llm_latency, search_latency
    with tempfile.TemporaryDirectory() as tmp:
        settings = servers.settings(Path(tmp), llm=True, **DEFAULT_SHAPE)
        async with open_engine(settings) as engine:
            created = [
                await engine.create_run(f"How do durable checkpoints work? ({i})") for i in range(runs)
            ]
            lags: list[float] = []
            probe = asyncio.create_task(_loop_lag(lags))
            wall0, cpu0 = time.perf_counter(), time.process_time()
            finals = await asyncio.gather(*(engine.execute(r.run_id) for r in created))
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            probe.cancel()
        for final in finals:
            assert final.status == "completed", final.error
        db = settings.home / "deepresearch.db"
        per_table = table_bytes(db) if db.exists() else {}
        file_bytes = db.stat().st_size if db.exists() else 0
        if keep := os.environ.get("HOTPATH_KEEP_DB"):  # for looking inside afterwards
            shutil.copy(db, keep)
    return {
        "runs": runs,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "loop_lag_ms": _percentiles(lags),
        "db_bytes_per_run": file_bytes // runs,
        "table_bytes_per_run": {k: v // runs for k, v in sorted(per_table.items(), key=lambda kv: -kv[1])},
    }


async def _loop_lag(lags: list[float], every: float = 0.01) -> None:
    """How late the event loop wakes a 10 ms sleeper: what CPU work on (or GIL contention with) the loop
    costs every other task, SSE delivery included."""
    loop = asyncio.get_running_loop()
    while True:
        start = loop.time()
        await asyncio.sleep(every)
        lags.append(loop.time() - start - every)


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "max": round(ordered[-1] * 1000, 1)}


async def resume_latency(servers: Servers) -> dict[str, Any]:
    """Cancel a run in fetch_sources, then time resume() → its first new event."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = servers.settings(Path(tmp), llm=True, **DEFAULT_SHAPE)
        async with open_engine(settings) as engine:
            run = await engine.create_run("How do durable checkpoints work?")
            stop = asyncio.Event()

            def watch(event: EventRecord) -> None:
                if event.type == "checkpoint" and event.stage == "screen_evidence":
                    stop.set()

            task = asyncio.create_task(engine.execute(run.run_id, on_event=watch))
            await asyncio.wait_for(stop.wait(), 60)
            await engine.store.request_cancel(run.run_id)
            await asyncio.wait_for(task, 60)
            first: list[float] = []

            def mark(_: EventRecord) -> None:
                if not first:
                    first.append(time.perf_counter())

            t0 = time.perf_counter()
            final = await engine.execute(run.run_id, on_event=mark)
            assert final.status == "completed", final.error
    return {"resume_to_first_event_ms": round((first[0] - t0) * 1000, 1)}


def extract_cpu(pages: int) -> dict[str, Any]:
    from deepresearch.web.extract import extract_document

    padded = _big_page()
    out: dict[str, Any] = {}
    for label, html in (("test article", article_html(next(iter(ARTICLES)))), ("80 KB article", padded)):
        body = html.encode()
        extract_document(body, "text/html", "utf-8", "https://example.org/a", 20_000)  # warm imports
        t0 = time.process_time()
        for _ in range(pages):
            extract_document(body, "text/html", "utf-8", "https://example.org/a", 20_000)
        out[label] = {
            "bytes": len(body),
            "cpu_ms_per_page": round((time.process_time() - t0) / pages * 1000, 2),
        }
    return out


def _big_page() -> str:
    """A news-like page: the test article with many more paragraphs, menus and related links."""
    slug = next(iter(ARTICLES))
    html = article_html(slug)
    _, paragraphs = ARTICLES[slug]
    more = "".join(f"<p>{p} ({i})</p>" for i in range(40) for p in paragraphs[:2])
    menu = "".join(f'<li><a href="/t/{i}">Topic {i}</a></li>' for i in range(300))
    return html.replace("</article>", f"{more}</article>").replace("<nav><ul>", f"<nav><ul>{menu}")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (Linux /proc), to see whether the peers were the bottleneck."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["batch", "extract", "resume", "peers"])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--llm-latency", type=float, default=0.4)
    parser.add_argument("--search-latency", type=float, default=0.15)
    parser.add_argument("--peers-process", action="store_true", help="scripted peers in a child process")
    parser.add_argument("--bench-peers", action="store_true", help="python -m bench's peers (80 KB pages)")
    args = parser.parse_args()
    if args.what == "extract":
        print(json.dumps(extract_cpu(args.pages), indent=2))
        return
    if args.what in ("batch", "resume") and args.bench_peers:
        # python -m bench's peers: 400 distinct ~80 KB pages, fetch latency too (its own process)
        from bench.peers import peers_process

        with peers_process() as bench_peers:
            bench_peers.set_latencies(llm=args.llm_latency, search=args.search_latency, fetch=0.1)
            urls = bench_peers.urls
            site, llm, search = make_static_site(), make_openai_server(), make_search_server()
            servers = Servers(
                site, urls["site"], search, urls["search"], llm, urls["llm"], ResearchResponder()
            )
            peers_cpu = _cpu_seconds(bench_peers.process.pid)
            if args.what == "batch":
                result = asyncio.run(batch(servers, args.runs, args.llm_latency, args.search_latency))
            else:
                result = asyncio.run(resume_latency(servers))
            result["peers_cpu_s"] = round(_cpu_seconds(bench_peers.process.pid) - peers_cpu, 3)
        print(json.dumps(result, indent=2))
        return
    if args.what == "batch" and args.peers_process:
        # The peers in a process of their own: the profile of this one shows only the engine.
        with subprocess.Popen(
            [
                sys.executable,
                __file__,
                "peers",
                "--llm-latency",
                str(args.llm_latency),
                "--search-latency",
                str(args.search_latency),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as peers:
            assert peers.stdout is not None and peers.stdin is not None
            urls = json.loads(peers.stdout.readline())
            site, llm, search = make_static_site(), make_openai_server(), make_search_server()
            servers = Servers(
                site, urls["site"], search, urls["search"], llm, urls["llm"], ResearchResponder()
            )
            result = asyncio.run(batch(servers, args.runs, args.llm_latency, args.search_latency))
            peers.stdin.close()
            peers.wait(10)
        print(json.dumps(result, indent=2))
        return
    site, llm, responder = make_static_site(), make_openai_server(), ResearchResponder()
    llm.responder = responder
    with serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            servers = Servers(site, site_url, search, search_url, llm, llm_url, responder)
            if args.what == "peers":
                llm.latency, search.latency = args.llm_latency, args.search_latency
                print(json.dumps({"site": site_url, "search": search_url, "llm": llm_url}), flush=True)
                sys.stdin.read()  # until the parent closes our stdin
                return
            if args.what == "batch":
                result = asyncio.run(batch(servers, args.runs, args.llm_latency, args.search_latency))
            else:
                result = asyncio.run(resume_latency(servers))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
