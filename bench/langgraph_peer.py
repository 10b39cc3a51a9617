"""The peer, side by side: the same research graph served by LangGraph's own server (`langgraph dev` from
`langgraph-cli[inmem]`, in-memory runtime) and by `deepresearch serve`, against the same scripted peers,
with the same questions. Ours is driven over our HTTP API (SSE), theirs with `langgraph-sdk`.

The LangGraph CLI lives in its own venv (never a product dependency):

    python3 -m venv /work/.cache/langgraph-peer-venv
    /work/.cache/langgraph-peer-venv/bin/python -m pip install -U pip 'langgraph-cli[inmem]' langgraph-sdk
    /work/.cache/langgraph-peer-venv/bin/python -m pip install -e .

(or set DEEPRESEARCH_LANGGRAPH_VENV to another one). LANGSMITH_TRACING=false: nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.measure import (
    RUN_TIMEOUT_S,
    batch,
    free_port,
    live_server,
    server_env,
    serving,
    summarise_batch,
    union_seconds,
)
from bench.peers import Peers, peers_process

logger = logging.getLogger("bench")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = Path("/work/.cache/langgraph-peer-venv")
LOGS = ROOT / "bench" / "results" / "logs"


def langgraph_cli() -> Path | None:
    venv = Path(os.environ.get("DEEPRESEARCH_LANGGRAPH_VENV", str(DEFAULT_VENV)))
    cli = venv / "bin" / "langgraph"
    return cli if cli.exists() else None


@contextmanager
def langgraph_server(cli: Path, env: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    env = env | {
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_API_KEY": "",
        "PATH": f"{cli.parent}:{env.get('PATH', '')}",
    }
    command = [str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    # dev mode's blockbuster refuses synchronous file calls on the event loop (docs/benchmarks.md lists
    # ours); a deployed LangGraph server does not check, so neither does the comparison
    command.append("--allow-blocking")
    # as many jobs at once as the biggest batch: the peer is not held back by its default of 10
    # langgraph.json with absolute paths, in a fresh folder: the dev server keeps its persistence
    # (.langgraph_api/) in its working directory, and each comparison starts from nothing
    log.parent.mkdir(parents=True, exist_ok=True)
    config = json.loads((ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {name: str(ROOT / spec.removeprefix("./")) for name, spec in config["graphs"].items()}
    (log.parent / "langgraph.json").write_text(json.dumps(config))
    command += ["--n-jobs-per-worker", "100", "--config", str(log.parent / "langgraph.json")]
    with log.open("ab") as out:
        # its working directory receives the dev server's persistence (.langgraph_api/): a fresh one
        process = subprocess.Popen(command, cwd=log.parent, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    with serving(process, f"{url}/ok", "langgraph dev", log, ready_within=120, poll=0.2):
        yield url


async def peer_batch(url: str, count: int, tag: str) -> list[dict[str, Any]]:
    """``count`` runs at once on the LangGraph server, each on its own thread, waited for with the SDK."""
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=httpx.Timeout(RUN_TIMEOUT_S, connect=30))

    async def one(i: int) -> dict[str, Any]:
        question = f"How do durable workflow checkpoints keep long research runs safe? ({tag} run {i})"
        started = time.time()
        thread = await client.threads.create()
        output = await client.runs.wait(thread["thread_id"], "deepresearch", input={"question": question})
        ended = time.time()
        ok = isinstance(output, dict) and bool((output.get("report") or {}).get("report_path"))
        return {
            "posted_at": started,
            "ended_at": ended,
            "completed": ok,
            "output": output if not ok else None,
        }

    return await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(count))), RUN_TIMEOUT_S)


def summarise_peer(rows: list[dict[str, Any]], peers: Peers) -> dict[str, Any]:
    start = min(r["posted_at"] for r in rows)
    end = max(r["ended_at"] for r in rows)
    busy = union_seconds((i.start, i.end) for i in peers.intervals(start) if i.start <= end)
    failed = [r["output"] for r in rows if not r["completed"]]
    if failed:
        logger.warning("peer runs without a report: %s", str(failed[0])[:500])
    return {
        "runs": len(rows),
        "completed": sum(r["completed"] for r in rows),
        "wall_s": round(end - start, 3),
        "external_union_s": round(busy, 3),
        "overhead": round((end - start) / busy, 3) if busy else None,
    }


def _side(side: str, url: str, peers: Peers, sizes: tuple[int, ...]) -> dict[str, Any]:
    def run_batch(n: int, tag: str) -> dict[str, Any]:
        if side == "ours":
            return summarise_batch(asyncio.run(batch(url, n, None, tag=tag)), peers)
        return summarise_peer(asyncio.run(peer_batch(url, n, tag)), peers)

    logger.info("peer comparison: %s, warm-up and three single runs", side)
    run_batch(1, "warm-up")  # imports, model negotiation, first connections
    singles = [run_batch(1, f"single {i}") for i in range(3)]
    median = statistics.median(r["overhead"] for r in singles)
    figures = {
        "single": min(singles, key=lambda r: abs(r["overhead"] - median))
        | {"overheads": [r["overhead"] for r in singles]}
    }
    for n in sizes:
        logger.info("peer comparison: %s, %d runs at once", side, n)
        figures[str(n)] = run_batch(n, f"x{n}")
    return figures


def compare(quick: bool = False) -> dict[str, Any]:
    """Both servers, one after the other, against one set of peers; ratios are ours ÷ LangGraph's."""
    cli = langgraph_cli()
    if cli is None:
        logger.warning("peer skipped: no langgraph CLI venv (see bench/langgraph_peer.py for the command)")
        return {"skipped": "no langgraph-cli[inmem] venv at DEEPRESEARCH_LANGGRAPH_VENV or /work/.cache"}
    sizes = (10,) if quick else (10, 50)
    result: dict[str, Any] = {}
    with peers_process() as peers, tempfile.TemporaryDirectory(prefix="deepresearch-peer-") as tmp:
        for side in ("langgraph", "ours"):
            home = Path(tmp) / side
            home.mkdir()
            env = server_env(peers, home, f"sqlite:///{home / 'runs.db'}")
            log = home / "server.log"
            server = langgraph_server(cli, env, log) if side == "langgraph" else live_server(env, log)
            try:
                with server as running:
                    url = running if isinstance(running, str) else running.url
                    result[side] = _side(side, url, peers, sizes)
            finally:  # kept after the run, for a failure's cause
                LOGS.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, LOGS / f"peer-{side}-server.log")
    ours, theirs = result["ours"], result["langgraph"]
    result["overhead_ratio"] = round(ours["single"]["overhead"] / theirs["single"]["overhead"], 2)
    for n in sizes:
        result[f"wall_ratio_{n}"] = round(ours[str(n)]["wall_s"] / theirs[str(n)]["wall_s"], 2)
    return result
