"""Measurements against a real `deepresearch serve` process, driven over HTTP with real SSE clients.

Busy time is the union of the peers' call intervals (recorded at the scripted servers, bench/peers.py):
a run can be no shorter than the time in which at least one of its external calls is in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.peers import Interval, Peers
from peers import free_port

ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 900.0
RECONNECTS = 5
"""Times one SSE client picks a dropped stream up again before the run counts as failed."""
"""No run of the benchmark may take longer than this; a stream still open then fails the figure."""


def union_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of [start, end] intervals (overlaps counted once, empty ones ignored)."""
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted((s, e) for s, e in intervals if e > s):
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def epoch(ts: str) -> float:
    return datetime.fromisoformat(ts).timestamp()


def server_env(peers: Peers, home: Path, database_url: str, **extra: str) -> dict[str, str]:
    """The server's whole configuration: LLM mode against the peers, generous request limits (the bench
    starts hundreds of runs at once from one client), defaults for everything the issue measures."""
    site = urlsplit(peers.urls["site"])
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DEEPRESEARCH_", "OPENAI_", "LONG_TASK_"))
    }
    env |= {
        "DEEPRESEARCH_HOME": str(home / "home"),
        "DEEPRESEARCH_WORKSPACE_DIR": str(home / "workspace"),
        "DEEPRESEARCH_DATABASE_URL": database_url,
        "DEEPRESEARCH_ENGINE": "llm",
        "OPENAI_BASE_URL": f"{peers.urls['llm']}/v1",
        "OPENAI_MODEL_NAME": "scripted-model",
        "OPENAI_API_KEY": "bench-key",
        "DEEPRESEARCH_SEARCH_PROVIDERS": "generic",
        "DEEPRESEARCH_WEB_SEARCH_URL": f"{peers.urls['search']}/search",
        "DEEPRESEARCH_DUCKDUCKGO_ENABLED": "false",
        "DEEPRESEARCH_FETCH_ALLOW_HOSTS": f"{site.hostname}:{site.port}",
        "DEEPRESEARCH_MAX_RUNS_PER_MINUTE": "100000",
        "DEEPRESEARCH_MAX_ACTIVE_RUNS_PER_USER": "100000",
        "DEEPRESEARCH_MAX_STREAMS_PER_CLIENT": "100000",
        # N runs at once really execute at once: the benchmark measures one process's concurrency, not the
        # queue in front of it (DEEPRESEARCH_MAX_CONCURRENT_RUNS, 64 by default, would hold 136 of 200)
        "DEEPRESEARCH_MAX_CONCURRENT_RUNS": "1000",
        "DEEPRESEARCH_LOG_LEVEL": "WARNING",
    }
    return env | extra


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    pid: int


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by a process and its children — live ones (a process pool's
    workers) and reaped ones — from /proc; 0.0 where there is no /proc."""
    fields = _stat(pid)
    if fields is None:
        return 0.0
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(pid):
            child = _stat(int(entry.name))
            if child is not None and child[1] == str(pid):  # field 4 of stat: the parent's pid
                ticks += sum(int(child[i]) for i in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


@contextmanager
def live_server(env: dict[str, str], log: Path) -> Iterator[Server]:
    """`deepresearch serve` in its own process (the product's entry point); yields its URL and pid."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    with serving(process, f"{url}/readyz", "deepresearch serve", log, ready_within=60, poll=0.1):
        yield Server(url, process.pid)


@contextmanager
def serving(
    process: subprocess.Popen[bytes], ready_url: str, name: str, log: Path, ready_within: float, poll: float
) -> Iterator[None]:
    """Wait until `process` answers 200 at `ready_url` (or fail, naming its log); stop it on the way out."""
    try:
        deadline = time.monotonic() + ready_within
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: see {log}")
            try:
                if httpx.get(ready_url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} was not ready in {ready_within:g} s: see {log}")
            time.sleep(poll)
        yield
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


@dataclass
class RunTrace:
    """What one SSE client saw of one run."""

    run_id: str
    posted_at: float
    connected_at: float = 0.0
    ended_at: float = 0.0
    status: str = ""
    last_seq: int = 0
    delays: list[float] = field(default_factory=list)
    """client receive − event ts, for events appended after the stream was open (replayed ones are not
    deliveries)."""
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    reconnects: int = 0

    @property
    def wall(self) -> float:
        return self.ended_at - self.posted_at


async def stream_run(
    client: httpx.AsyncClient, trace: RunTrace, after: int = 0, stop: Any = None, keep: bool = False
) -> RunTrace:
    """Read the run's SSE stream until `end` (or until ``stop(event)`` is true); bounded by RUN_TIMEOUT_S.

    A stream the connection drops under is picked up again after the last event seen, as an EventSource
    does with Last-Event-ID (at most RECONNECTS times, counted in ``trace.reconnects``)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    last = after
    while True:
        try:
            return await _read_stream(client, trace, last, stop, keep, deadline)
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            trace.reconnects += 1
            if trace.reconnects > RECONNECTS:
                dropped = f"run {trace.run_id}: the stream dropped {trace.reconnects} times"
                raise RuntimeError(dropped) from exc
            last = trace.last_seq or after


async def _read_stream(
    client: httpx.AsyncClient, trace: RunTrace, after: int, stop: Any, keep: bool, deadline: float
) -> RunTrace:
    url = f"/api/runs/{trace.run_id}/events"
    timeout = httpx.Timeout(RUN_TIMEOUT_S, connect=30)
    async with client.stream("GET", url, params={"after": after}, timeout=timeout) as response:
        response.raise_for_status()
        trace.connected_at = trace.connected_at or time.time()
        data = ""
        async for line in response.aiter_lines():
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {trace.run_id}: stream still open after {RUN_TIMEOUT_S} s")
            if line.startswith("data:"):
                data = line[5:].strip()
                continue
            if line or not data:
                continue
            received = time.time()
            event = json.loads(data)
            data = ""
            sent = epoch(event["ts"])
            if sent >= trace.connected_at:
                trace.delays.append(received - sent)
            trace.last_seq = int(event["seq"])
            if keep:
                trace.events.append((received, event))
            if event["type"] == "end":
                trace.status, trace.ended_at = str(event["status"]), received
                return trace
            if stop is not None and stop(event):
                trace.ended_at = received
                return trace
    raise RuntimeError(f"run {trace.run_id}: the stream closed before its end event")


async def start_run(client: httpx.AsyncClient, question: str, options: dict[str, Any] | None) -> RunTrace:
    posted = time.time()
    response = await client.post("/api/runs", json={"question": question, "options": options or {}})
    if response.status_code != 201:
        raise RuntimeError(f"POST /api/runs answered {response.status_code}: {response.text[:300]}")
    return RunTrace(response.json()["run_id"], posted)


def http_client(url: str) -> httpx.AsyncClient:
    # idle connections are dropped after 2 s, before the server's keep-alive (uvicorn: 5 s) closes them:
    # with hundreds of streams on 2 cores, a request sent on a connection the server is just closing
    # failed with "Server disconnected" (the 200-at-once step, once)
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000, keepalive_expiry=2.0)
    return httpx.AsyncClient(base_url=url, limits=limits, timeout=httpx.Timeout(60, connect=30))


async def batch(
    url: str, count: int, options: dict[str, Any] | None = None, tag: str = "", keep: bool = False
) -> list[RunTrace]:
    """Start ``count`` runs at once, each followed by its own SSE client, and wait for all their ends."""
    async with http_client(url) as client:

        async def one(i: int) -> RunTrace:
            question = f"How do durable workflow checkpoints keep long research runs safe? ({tag} run {i})"
            trace = await start_run(client, question, options)
            await stream_run(client, trace, keep=keep)
            await _stopped(client, trace.run_id)  # not timed: the status flips just after `end`
            return trace

        return await asyncio.gather(*(one(i) for i in range(count)))


async def _stopped(client: httpx.AsyncClient, run_id: str) -> None:
    """Until the run's record says it stopped (its last writes are in the database then)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if (await client.get(f"/api/runs/{run_id}")).json().get("status") not in ("running", "queued"):
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"run {run_id} still running 30 s after its end event")


def idle_by_stage(trace: RunTrace, intervals: list[Interval]) -> dict[str, float]:
    """Where a run's time outside every external call went: each gap of the call union, attributed to
    the business stage running at its middle (from the run's own stage events), in seconds."""
    marks = sorted(
        (epoch(event["ts"]), str(event.get("stage") or "run"))
        for _received, event in trace.events
        if event["type"] == "tool_call" and "parent_call_id" not in event
    )
    merged: list[list[float]] = []
    for start, end in sorted((i.start, i.end) for i in intervals if i.end > i.start):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    edges = [trace.posted_at, *[x for pair in merged for x in pair], trace.ended_at]
    idle: dict[str, float] = {}
    for gap_start, gap_end in zip(edges[::2], edges[1::2], strict=False):
        if gap_end <= gap_start:
            continue
        middle = (gap_start + gap_end) / 2
        stage = "start (POST → first stage)"
        for at, name in marks:
            if at <= middle:
                stage = name
        idle[stage] = round(idle.get(stage, 0.0) + gap_end - gap_start, 3)
    return dict(sorted(idle.items(), key=lambda kv: -kv[1]))


def summarise_batch(traces: list[RunTrace], peers: Peers) -> dict[str, Any]:
    start = min(t.posted_at for t in traces)
    end = max(t.ended_at for t in traces)
    busy = union_seconds((i.start, i.end) for i in peers.intervals(start) if i.start <= end)
    delays = [d for t in traces for d in t.delays]
    return {
        "runs": len(traces),
        "completed": sum(t.status == "completed" for t in traces),
        "wall_s": round(end - start, 3),
        "external_union_s": round(busy, 3),
        "overhead": round((end - start) / busy, 3) if busy else None,
        "sse_p50_ms": _ms(percentile(delays, 50)),
        "sse_p95_ms": _ms(percentile(delays, 95)),
        "sse_events": len(delays),
        "run_wall_median_s": round(statistics.median(t.wall for t in traces), 3),
        "stream_reconnects": sum(t.reconnects for t in traces),
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def database_bytes(database_url: str) -> int:
    """Bytes the database holds (SQLite: pages in use, WAL included; PostgreSQL: pg_database_size)."""
    if database_url.startswith("sqlite:///"):
        path = database_url.removeprefix("sqlite:///")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


async def resume_latency(url: str) -> dict[str, Any]:
    """Cancel a run after its second checkpoint; resume it; time from the POST to the first new event."""
    async with http_client(url) as client:
        trace = await start_run(client, "How do checkpoints make resuming cheap? (resume bench)", None)
        seen: list[int] = []

        def second_checkpoint(event: dict[str, Any]) -> bool:
            if event["type"] == "checkpoint":
                seen.append(1)
            return len(seen) >= 2

        await stream_run(client, trace, stop=second_checkpoint)
        await client.post(f"/api/runs/{trace.run_id}/cancel", json={})
        await stream_run(client, trace, after=trace.last_seq)
        stopped = trace.status
        resumed = RunTrace(trace.run_id, time.time())
        answer = await client.post(f"/api/runs/{trace.run_id}/resume", json={})
        if answer.status_code != 202:
            raise RuntimeError(f"resume answered {answer.status_code}: {answer.text[:300]}")
        first = await stream_run(client, resumed, after=trace.last_seq, stop=lambda e: True)
        first_s = first.ended_at - resumed.posted_at
        final = await stream_run(client, RunTrace(trace.run_id, time.time()), after=first.last_seq)
    return {
        "stopped_as": stopped,
        "first_new_event_ms": round(first_s * 1000, 1),
        "resumed_run": final.status,
    }


async def cancel_latency(url: str, peers: Peers) -> dict[str, Any]:
    """Cancel while a model call is in flight; time from that call's end (at the peer) to `cancelled`."""
    async with http_client(url) as client:
        trace = await start_run(client, "How do durable runs stop cleanly? (cancel bench)", None)

        def llm_call_started(event: dict[str, Any]) -> bool:
            return (
                event["type"] == "tool_call"
                and str(event.get("tool_name", "")).startswith("llm")
                and event.get("parent_call_id") is not None
            )

        await stream_run(client, trace, stop=llm_call_started)
        cancel_at = time.time()
        await client.post(f"/api/runs/{trace.run_id}/cancel", json={})
        await stream_run(client, trace, after=trace.last_seq)
    # in flight: at the peer already, or about to be - its tool_call event (and so its started receipt,
    # after which a call always goes out) can reach the client before the request reaches the peer
    in_flight = [
        i for i in peers.intervals(trace.posted_at) if i.start <= cancel_at + 0.1 and i.end >= cancel_at
    ]
    call_end = max((i.end for i in in_flight), default=cancel_at)
    return {
        "status": trace.status,
        "calls_in_flight_at_cancel": len(in_flight),
        "cancelled_after_call_ms": round((trace.ended_at - call_end) * 1000, 1),
        "cancelled_after_request_ms": round((trace.ended_at - cancel_at) * 1000, 1),
    }


def extraction_cpu_ms(pages: int = 20) -> dict[str, Any]:
    """CPU time of the product's extraction of one typical bench page (thread CPU, median of ``pages``)."""
    from bench.peers import bench_page_html
    from deepresearch.web.extract import extract_document

    samples = []
    size = 0
    for n in range(pages):
        body = bench_page_html(n).encode()
        size = len(body)
        started = time.thread_time()
        extract_document(body, "text/html", "utf-8", f"https://fieldnotes.example/pages/{n}", 20_000)
        samples.append((time.thread_time() - started) * 1000)
    return {"page_bytes": size, "cpu_ms_median": round(statistics.median(samples), 1), "pages": pages}


def interval_stats(intervals: list[Interval]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for interval in intervals:
        counts[interval.peer] = counts.get(interval.peer, 0) + 1
    return counts
