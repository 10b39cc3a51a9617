"""Faults around the executing process: a lease lost to another replica (fencing), the per-process run
slots and their FIFO queue, a cancel asked on another replica, PostgreSQL restarting under load, a model
that hangs past its deadline. Real stores and real processes; the scripted servers count every call."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from deepresearch.engine.core import graph_config, open_engine
from deepresearch.service.runs import RunService
from deepresearch.store import RunRecord
from tests.conftest import Servers
from tests.live import live_server, server_env, wait_for
from tests.pg import PostgresNotInstalled, start_cluster
from tests.sse import SSEEvent, iter_sse
from tests.test_replicas import QUESTION, repeated_calls


def _iso_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def _ts(event: SSEEvent) -> datetime:
    return datetime.fromisoformat(event.data["ts"])


async def _until(predicate: Callable[[], Awaitable[bool]]) -> None:
    async with asyncio.timeout(30):
        while not await predicate():  # noqa: ASYNC110 - polling the database, which has no event to await
            await asyncio.sleep(0.02)


async def test_a_process_that_lost_its_lease_writes_nothing_more(servers: Servers, tmp_path: Path) -> None:
    """Another replica takes the run over while this one is in the middle of a model call: from then on
    this process adds no event, no checkpoint and no status to the run (fenced writes), and stops."""
    servers.llm.latency = 0.4
    async with open_engine(servers.settings(tmp_path, llm=True)) as engine:
        service = RunService(engine)
        run = await service.start(QUESTION)
        store = engine.store

        async def planned() -> bool:
            return len(await store.list_checkpoints(run.run_id)) >= 1

        await _until(planned)
        thief = "elsewhere:1:99:thief"
        taken = await store.claim_run(
            run.run_id, thief, _iso_in(60), _iso_in(0), dead_owner=service.replica_id
        )
        assert taken is not None
        events_then = len(await store.list_events(run.run_id))
        config = graph_config(run.thread_id)
        history_then = [s async for s in engine.graph.aget_state_history(config)]
        final = await asyncio.wait_for(service.wait(run.run_id), timeout=30)
        events_now = await store.list_events(run.run_id)
        history_now = [s async for s in engine.graph.aget_state_history(config)]
        await service.shutdown()
    assert len(events_now) == events_then, [e.type for e in events_now[events_then:]]
    assert len(history_now) == len(history_then)
    assert (final.status, final.lease_owner) == ("running", thief)  # untouched: the thief's run now


async def test_runs_beyond_the_limit_wait_their_turn_first_in_first_out(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path, max_concurrent_runs=1, stage_delay_seconds=0.15)
    async with open_engine(settings) as engine:
        service = RunService(engine)
        runs = [await service.start(f"{QUESTION} ({i})") for i in range(4)]
        ids = [r.run_id for r in runs]

        async def first_claimed() -> bool:
            return (await engine.store.get_run(ids[0])).lease_owner is not None

        await _until(first_claimed)
        waiting = [await service.get(run_id) for run_id in ids[1:]]
        assert [(r.status, r.queue_position) for r in waiting] == [
            ("queued", 1),
            ("queued", 2),
            ("queued", 3),
        ]
        cancelled = await asyncio.wait_for(service.cancel(ids[3]), timeout=5)  # at once: it never started
        assert cancelled.status == "cancelled"
        finals: list[RunRecord] = [await asyncio.wait_for(service.wait(run_id), 60) for run_id in ids]
        finals = [await engine.store.get_run(run_id) for run_id in ids]
        events = {run_id: await engine.store.list_events(run_id) for run_id in ids}
        await service.shutdown()
    assert [f.status for f in finals] == ["completed", "completed", "completed", "cancelled"]
    # one at a time, in the order they were started
    assert finals[0].finished_at <= finals[1].started_at and finals[1].finished_at <= finals[2].started_at
    queued = {
        run_id: [e.data["ahead"] for e in log if e.type == "message" and e.data.get("queued")]
        for run_id, log in events.items()
    }
    assert queued == {ids[0]: [], ids[1]: [0], ids[2]: [1], ids[3]: [2]}
    assert not any(e.type == "run_status" and e.data["status"] == "running" for e in events[ids[3]])
    assert [e.type for e in events[ids[3]]][-1] == "end"


async def test_a_taken_over_run_waiting_for_a_slot_is_cancelled_at_once(
    servers: Servers, tmp_path: Path
) -> None:
    """A run this process took over (it holds the lease, kept alive while the run waits for a slot) is
    cancelled at once, like any run waiting here: nothing else executes it, so nothing else would stop it
    (it was left "queued" behind a message that the executing process would stop it)."""
    settings = servers.settings(tmp_path, max_concurrent_runs=1, stage_delay_seconds=0.3)
    async with open_engine(settings) as engine:
        service = RunService(engine)
        busy = await service.start(f"{QUESTION} (busy)")
        waiting = await service.create(f"{QUESTION} (taken over)")
        assert await engine.store.claim_run(waiting.run_id, service.replica_id, _iso_in(60), _iso_in(0))
        service.launch_claimed(waiting.run_id)

        async def queued() -> bool:
            events = await engine.store.list_events(waiting.run_id)
            return any(e.type == "message" and e.data.get("queued") for e in events)

        await _until(queued)
        await asyncio.wait_for(service.cancel(waiting.run_id), timeout=10)
        cancelled = await engine.store.get_run(waiting.run_id)
        events = await engine.store.list_events(waiting.run_id)
        await asyncio.wait_for(service.wait(busy.run_id), 60)
        await service.shutdown()
    assert (cancelled.status, cancelled.lease_owner) == ("cancelled", None), cancelled
    assert [e.type for e in events][-1] == "end" and events[-1].data["status"] == "cancelled"


def test_a_cancel_on_another_replica_reaches_the_executing_one_within_a_second(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    """B is asked to cancel while A waits for the model: A hears of it within a second (not at its next
    tool boundary), lets the calls in flight finish and record, and stops right after them."""
    env = server_env(servers, tmp_path, DEEPRESEARCH_DATABASE_URL=database_url)
    with (
        live_server(env) as (url_a, _),
        live_server(env) as (url_b, _),
        httpx.Client(base_url=url_a, timeout=10) as client_a,
        httpx.Client(base_url=url_b, timeout=30) as client_b,
    ):
        run_id = client_a.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_for(client_b, run_id, lambda r: r["checkpoint_count"] >= 1)
        servers.llm.latency = 2.5  # the next model calls (screening) are slow
        events: list[SSEEvent] = []
        cancelled_at: datetime | None = None
        for event in iter_sse(client_b, f"/api/runs/{run_id}/events", timeout=60):
            events.append(event)
            screening = event.type == "tool_call" and event.data["stage"] == "screen_evidence"
            in_flight = screening and event.data.get("tool_name", "").startswith("llm.")
            if cancelled_at is None and in_flight and not event.data.get("reused"):
                time.sleep(0.3)  # well inside the 2.5 s call
                cancelled_at = datetime.now(UTC)
                assert client_b.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
        final = client_b.get(f"/api/runs/{run_id}").json()
    assert cancelled_at is not None and final["status"] == "cancelled"
    reached = [e for e in events if e.type == "message" and "reached the process" in e.data["text"]]
    assert len(reached) == 1 and reached[0].data["replica"], "\n".join(
        f"{e.data['ts']} {e.type} {e.data.get('text') or e.data.get('label')}" for e in events
    )
    assert (_ts(reached[0]) - cancelled_at).total_seconds() < 1.0
    last_call = max(_ts(e) for e in events if e.type == "tool_result" and e.data.get("parent_call_id"))
    assert (_ts(events[-1]) - last_call).total_seconds() < 1.0 and events[-1].type == "end"
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}


async def test_a_model_that_hangs_past_its_deadline_fails_the_stage_and_the_run_resumes(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path, llm=True, llm_timeout_seconds=0.5, llm_max_retries=1)
    servers.llm.latency = 5.0
    async with open_engine(settings) as engine:
        service = RunService(engine)
        run = await service.start(QUESTION)
        started = time.monotonic()
        failed = await asyncio.wait_for(service.wait(run.run_id), timeout=30)
        took = time.monotonic() - started
        assert failed.status == "failed" and "timed out" in (failed.error or "").lower(), failed.error
        assert (await engine.store.get_run(run.run_id)).lease_owner is None  # the process let go of it
        servers.llm.latency = 0.0
        await service.resume(run.run_id)
        final = await asyncio.wait_for(service.wait(run.run_id), timeout=60)
        await service.shutdown()
    assert final.status == "completed", final.error
    assert took < 10, took


def test_postgres_restarting_under_load_loses_no_run(servers: Servers, tmp_path: Path) -> None:
    """Three runs execute on two replicas when PostgreSQL restarts: every run completes, its log has no gap
    and no business checkpoint twice, and no call is made more than twice (one in flight at the restart
    may be made again, no more)."""
    try:
        cluster = start_cluster()
    except PostgresNotInstalled as exc:
        pytest.skip(str(exc))
    try:
        dsn = cluster.dsn(cluster.create_database())
        env = server_env(
            servers,
            tmp_path,
            DEEPRESEARCH_DATABASE_URL=dsn,
            DEEPRESEARCH_STAGE_DELAY_SECONDS="0.4",
            DEEPRESEARCH_TAKEOVER_SCAN_SECONDS="0.5",
        )
        with (
            live_server(env) as (url_a, _),
            live_server(env) as (url_b, _),
            httpx.Client(base_url=url_a, timeout=10) as client_a,
            httpx.Client(base_url=url_b, timeout=10) as client_b,
        ):
            ids = [
                client_a.post("/api/runs", json={"question": f"{QUESTION} ({i})"}).json()["run_id"]
                for i in range(3)
            ]
            for run_id in ids:
                wait_for(client_a, run_id, lambda r: r["checkpoint_count"] >= 1)
            restarted = threading.Thread(target=cluster.restart)
            restarted.start()
            restarted.join(timeout=60)
            finals = [
                wait_for(client_b, run_id, lambda r: r["status"] not in ("queued", "running"), timeout=120)
                for run_id in ids
            ]
            logs = {run_id: list(iter_sse(client_b, f"/api/runs/{run_id}/events")) for run_id in ids}
    finally:
        cluster.stop()
    assert [f["status"] for f in finals] == ["completed"] * 3, [f["error"] for f in finals]
    for run_id, log in logs.items():
        assert [e.id for e in log] == list(range(1, len(log) + 1)), run_id
        stages = [e.data["stage"] for e in log if e.type == "checkpoint"]
        assert len(stages) == len(set(stages)) == 7, stages
        assert [e.type for e in log].count("end") == 1
    # calls whose answer came while the database was away could not be recorded: made again, once.
    # Model calls and searches name the run's question; every run fetches the same pages.
    llm = Counter(json.dumps(body.get("messages"), sort_keys=True) for body in servers.llm.calls)
    assert max([*llm.values(), *Counter(servers.search.calls).values()]) <= 2, repeated_calls(servers)
    fetches = [n for p, n in servers.site.hits.items() if p.startswith("/articles/")]
    assert fetches and max(fetches) <= 2 * len(ids), servers.site.hits


@pytest.mark.long
def test_a_frozen_replica_loses_its_run_and_writes_nothing_when_it_wakes(
    servers: Servers, tmp_path: Path, fresh_postgres_dsn: str
) -> None:
    """A (executing) freezes (SIGSTOP) and a cancel arrives at B: once A's lease lapses, B claims the run
    and finishes it as cancelled without executing it. When A wakes (SIGCONT), every write it tries for
    the run is fenced off: the log and the record stay exactly as B left them. (PostgreSQL only: on SQLite
    a process frozen inside a write transaction holds the whole file until it wakes — docs/durability.md.)"""
    env = server_env(
        servers,
        tmp_path,
        DEEPRESEARCH_DATABASE_URL=fresh_postgres_dsn,
        DEEPRESEARCH_STAGE_DELAY_SECONDS="0.5",
        DEEPRESEARCH_LEASE_SECONDS="2",
        DEEPRESEARCH_TAKEOVER_SCAN_SECONDS="0.5",
    )
    with (
        live_server(env) as (url_a, process_a),
        live_server(env) as (url_b, _),
        httpx.Client(base_url=url_a, timeout=10) as client_a,
        # a write of A's frozen mid-transaction holds the run's row until PostgreSQL ends its session
        httpx.Client(base_url=url_b, timeout=30) as client_b,
    ):
        run_id = client_a.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_for(client_b, run_id, lambda r: r["checkpoint_count"] >= 1)
        process_a.send_signal(signal.SIGSTOP)
        try:
            assert client_b.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
            stopped = wait_for(client_b, run_id, lambda r: r["status"] != "running", timeout=30)
            events_then = list(iter_sse(client_b, f"/api/runs/{run_id}/events"))
        finally:
            process_a.send_signal(signal.SIGCONT)
        time.sleep(3)  # A wakes: its heartbeat and its next writes find the lease gone
        assert client_a.get("/readyz").status_code == 200
        events_now = list(iter_sse(client_b, f"/api/runs/{run_id}/events"))
        final = client_b.get(f"/api/runs/{run_id}").json()
    assert stopped["status"] == "cancelled"
    assert [e.id for e in events_now] == [e.id for e in events_then]
    assert events_now[-1].type == "end" and events_now[-1].data["status"] == "cancelled"
    assert any(e.data.get("orphaned") for e in events_now)
    assert (final["status"], final["lease_owner"], final["version"]) == (
        "cancelled",
        None,
        stopped["version"],
    )
