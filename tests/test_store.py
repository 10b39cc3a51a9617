"""The RunStore contract, against both backends: SQLite (a file per test) and PostgreSQL (a database per
test on the throwaway cluster from tests/pg.py), plus what only PostgreSQL has to prove: several replicas."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph

from deepresearch.errors import RunNotFound
from deepresearch.store import (
    CheckpointRecord,
    LeaseLost,
    LLMCapability,
    PostgresUnavailable,
    RunStore,
    open_persistence,
    open_postgres_store,
    open_sqlite_store,
    redact_dsn,
)
from deepresearch.store.sql import MIGRATIONS

if TYPE_CHECKING:  # the fixtures come from tests.pg via pytest_plugins in tests/conftest.py
    from tests.pg import PostgresCluster

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Backend:
    name: str
    url: str

    def open(self) -> AbstractAsyncContextManager[RunStore]:
        if self.name == "sqlite":
            return open_sqlite_store(Path(self.url.removeprefix("sqlite:///")))
        return open_postgres_store(self.url)

    def migration_versions(self) -> list[int]:
        query = "SELECT version FROM deepresearch_migrations ORDER BY version"
        if self.name == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as conn:
                return [row[0] for row in conn.execute(query)]
        with psycopg.connect(self.url) as conn:
            return [row[0] for row in conn.execute(query)]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", f"sqlite:///{tmp_path / 'store.db'}")
    else:
        yield Backend("postgres", request.getfixturevalue("fresh_postgres_dsn"))


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[RunStore]:
    async with backend.open() as opened:
        yield opened


def checkpoint(run_id: str, checkpoint_id: str, created_at: str) -> CheckpointRecord:
    return CheckpointRecord(
        run_id=run_id,
        checkpoint_id=checkpoint_id,
        stage="plan",
        title="Plan",
        created_at=created_at,
        next=["search"],
        summary="planned",
        thread_id=f"deepresearch-{run_id}",
        checkpoint_ns="",
        parent_checkpoint_id=None,
    )


# --- the contract, both backends -----------------------------------------------------------------
async def test_setup_is_idempotent(backend: Backend, store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    await store.setup()
    await store.setup()
    async with backend.open() as again:  # a second process opening the same database
        assert (await again.get_run(run.run_id)).to_dict() == run.to_dict()
    assert backend.migration_versions() == [version for version, *_ in MIGRATIONS]


async def test_both_backends_have_the_same_tables_columns_and_indexes(
    tmp_path: Path, fresh_postgres_dsn: str
) -> None:
    """One schema: what SQLite and PostgreSQL hold after setup is the same, index for index."""
    async with open_sqlite_store(tmp_path / "same.db"):
        pass
    async with open_postgres_store(fresh_postgres_dsn):
        pass
    tables = (
        "runs",
        "run_events",
        "run_checkpoints",
        "tool_receipts",
        "deepresearch_migrations",
        "llm_capabilities",
        "api_tokens",
        "browser_sessions",
    )
    with sqlite3.connect(tmp_path / "same.db") as conn:
        lite_columns = {t: [row[1] for row in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
        lite_indexes = {
            (row[0], row[1])
            for row in conn.execute("SELECT tbl_name, name FROM sqlite_master WHERE type = 'index'")
            if row[0] in tables and not row[1].startswith("sqlite_autoindex")
        }
    with psycopg.connect(fresh_postgres_dsn) as conn:
        pg_columns = {
            t: [
                row[0]
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
                    " ORDER BY ordinal_position",
                    (t,),
                )
            ]
            for t in tables
        }
        pg_indexes = {
            (row[0], row[1])
            for row in conn.execute("SELECT tablename, indexname FROM pg_indexes WHERE schemaname = 'public'")
            if row[0] in tables and not row[1].endswith(("_pkey", "_key"))
        }
    assert lite_columns == pg_columns
    assert lite_indexes == pg_indexes and ("runs", "runs_created") in lite_indexes


_OPEN_SQLITE = """
import asyncio, sys
from deepresearch.store import open_persistence

async def main(url: str) -> None:
    async with open_persistence(url) as persistence:
        await persistence.store.ping()

for line in sys.stdin:  # a new database URL, handed to every process at the same moment
    asyncio.run(main(line.strip()))
    print("opened", flush=True)
"""


async def test_processes_opening_a_new_sqlite_database_at_once(tmp_path: Path) -> None:
    """Several processes set up one new file at the same moment: every one starts, migrations run once.
    The processes start once (an interpreter's start takes seconds of CPU) and are handed each new file
    together, so from the second file on they reach it within milliseconds of each other."""
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    processes = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", _OPEN_SQLITE, cwd=REPO, **pipes)
        for _ in range(6)
    ]
    try:
        for attempt in range(5):
            url = f"sqlite:///{tmp_path / f'race-{attempt}.db'}"
            for process in processes:
                assert process.stdin is not None
                process.stdin.write(f"{url}\n".encode())
            await asyncio.gather(*(p.stdin.drain() for p in processes if p.stdin))
            answers = await asyncio.wait_for(
                asyncio.gather(*(p.stdout.readline() for p in processes if p.stdout)), timeout=60
            )
            if answers != [b"opened\n"] * len(processes):  # a process failed: its traceback says why
                for process in processes:
                    if process.returncode is None:
                        process.kill()
                errors = [(await p.stderr.read()).decode()[-800:] for p in processes if p.stderr]
                raise AssertionError(errors)
            with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
                versions = [row[0] for row in conn.execute("SELECT version FROM deepresearch_migrations")]
            assert sorted(versions) == [version for version, *_ in MIGRATIONS]
    finally:
        for process in processes:
            if process.stdin:
                process.stdin.close()  # the processes' loop ends
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
                await process.wait()


async def test_llm_capability_is_remembered_per_endpoint_and_model(store: RunStore) -> None:
    endpoint = "http://127.0.0.1:8080/v1"
    assert await store.get_llm_capability(endpoint, "m") is None
    await store.put_llm_capability(LLMCapability(endpoint, "m", "json_schema", "accepted", "t1"))
    await store.put_llm_capability(LLMCapability(endpoint, "other", "prompt", "all refused", "t1"))
    await store.put_llm_capability(LLMCapability(endpoint, "m", "json_object", "json_schema refused", "t2"))
    assert await store.get_llm_capability(endpoint, "m") == LLMCapability(
        endpoint, "m", "json_object", "json_schema refused", "t2"
    )
    other = await store.get_llm_capability(endpoint, "other")
    assert other is not None and other.mode == "prompt"


async def test_run_crud(store: RunStore) -> None:
    run = await store.create_run("why?", {"depth": 2, "tags": ["a"]}, "llm", run_id="r1")
    assert (run.run_id, run.thread_id, run.status, run.engine) == ("r1", "deepresearch-r1", "queued", "llm")
    assert run.options == {"depth": 2, "tags": ["a"]} and run.usage == {} and run.cancel_requested is False
    assert run.created_at == run.updated_at and run.current_stage is None and run.started_at is None
    assert (await store.get_run("r1")).to_dict() == run.to_dict()

    updated = await store.update_run(
        "r1", status="running", current_stage="plan", usage={"tokens": 5}, options={"depth": 3},
        started_at="2030-01-01T00:00:00.000+00:00", error=None,
    )  # fmt: skip
    assert (updated.status, updated.current_stage, updated.usage, updated.options) == (
        "running", "plan", {"tokens": 5}, {"depth": 3},
    )  # fmt: skip
    assert updated.started_at == "2030-01-01T00:00:00.000+00:00" and updated.updated_at >= run.updated_at
    assert (await store.get_run("r1")).to_dict() == updated.to_dict()
    await store.ping()

    for call in (store.get_run("nope"), store.update_run("nope", status="failed"), store.delete_run("nope")):
        with pytest.raises(RunNotFound, match="'nope'"):
            await call


async def test_list_runs_filter_and_pagination(store: RunStore) -> None:
    completed_ids = set()
    for i in range(7):
        run = await store.create_run(f"q{i}", {}, "extractive")
        if i % 2:
            await store.update_run(run.run_id, status="completed")
            completed_ids.add(run.run_id)
        if i < 4:
            await asyncio.sleep(0.003)  # distinct timestamps for some, shared milliseconds likely for others
    everything = await store.list_runs(limit=100)
    expected = sorted(everything, key=lambda r: r.run_id)
    expected.sort(key=lambda r: r.created_at, reverse=True)  # newest first, ties by run id ascending
    assert [r.run_id for r in everything] == [r.run_id for r in expected] and len(everything) == 7
    pages = [await store.list_runs(limit=3, offset=offset) for offset in (0, 3, 6, 9)]
    assert [len(p) for p in pages] == [3, 3, 1, 0]
    assert [r.run_id for p in pages for r in p] == [r.run_id for r in everything]
    completed = await store.list_runs(status="completed")
    assert {r.run_id for r in completed} == completed_ids and len(completed) == 3
    assert [r.run_id for r in await store.list_runs(status="completed", limit=1, offset=1)] == [
        completed[1].run_id
    ]
    assert await store.list_runs(status="failed") == []


async def test_update_run_rejects_unknown_fields(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    with pytest.raises(ValueError, match=r"\['question', 'thread_id'\]"):
        await store.update_run(run.run_id, question="changed", thread_id="x", status="running")
    assert (await store.get_run(run.run_id)).to_dict() == run.to_dict()


async def test_cancel_flag(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    assert await store.is_cancel_requested(run.run_id) is False
    cancelled = await store.request_cancel(run.run_id)
    assert cancelled.cancel_requested is True and await store.is_cancel_requested(run.run_id) is True
    assert (await store.update_run(run.run_id, cancel_requested=False)).cancel_requested is False
    assert await store.is_cancel_requested("unknown") is False
    with pytest.raises(RunNotFound):
        await store.request_cancel("unknown")


async def test_concurrent_appends_get_gap_free_seq(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    records = await asyncio.gather(
        *(store.append_event(run.run_id, "tick", "search", {"i": i}) for i in range(50))
    )
    assert sorted(r.seq for r in records) == list(range(1, 51))
    events = await store.list_events(run.run_id)
    assert [e.seq for e in events] == list(range(1, 51))
    assert {e.seq: e.data["i"] for e in events} == {r.seq: r.data["i"] for r in records}
    other = await store.create_run("q2", {}, "extractive")
    assert (await store.append_event(other.run_id, "first", None, {})).seq == 1  # seq is per run


async def test_list_events_replays_after_a_seq(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    written = [await store.append_event(run.run_id, f"e{i}", "plan", {"i": i}) for i in range(10)]
    assert [e.to_dict() for e in await store.list_events(run.run_id, after=4)] == [
        e.to_dict() for e in written[4:]
    ]
    assert [e.seq for e in await store.list_events(run.run_id, after=4, limit=2)] == [5, 6]
    assert await store.list_events(run.run_id, after=10) == []
    assert written[0].to_dict()["stage"] == "plan" and written[0].to_dict()["i"] == 0


async def test_payloads_round_trip_exactly(store: RunStore) -> None:
    """Key order, NaN, NUL and non-ASCII survive both backends (JSONB would reorder and reject them)."""
    data = {"zeta": 1, "alpha": [1.5, None, True], "nan": math.nan, "nul": "a\x00b", "text": "ünï ✓ 中文"}
    run = await store.create_run("q", data, "extractive")
    event = await store.append_event(run.run_id, "payload", None, data)
    [stored] = await store.list_events(run.run_id)
    for got in (stored.data, (await store.get_run(run.run_id)).options):
        assert list(got) == list(data) and got["nul"] == "a\x00b" and math.isnan(got["nan"])
        assert json.dumps(got) == json.dumps(event.data)


async def test_checkpoint_index_insert_or_ignore(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    first = checkpoint(run.run_id, "cp-b", "2030-01-01T00:00:00.001+00:00")
    assert await store.add_checkpoint(first) is True
    assert (
        await store.add_checkpoint(checkpoint(run.run_id, "cp-b", "2031-01-01T00:00:00.000+00:00")) is False
    )
    assert await store.add_checkpoint(checkpoint(run.run_id, "cp-a", "2030-01-01T00:00:00.000+00:00")) is True
    listed = await store.list_checkpoints(run.run_id)
    assert [c.checkpoint_id for c in listed] == ["cp-a", "cp-b"]
    assert listed[1] == first  # the ignored duplicate changed nothing
    assert listed[1].to_dict()["framework_ref"]["langgraph"]["thread_id"] == run.thread_id


async def test_receipts_lifecycle(store: RunStore) -> None:
    run = await store.create_run("q", {}, "extractive")
    rid = run.run_id
    assert await store.get_receipt(rid, "search", "h1") is None
    await store.start_receipt(rid, "search", "h1", "web_search", "search", {"q": "x"})
    started = await store.get_receipt(rid, "search", "h1")
    assert started is not None and (started.status, started.args, started.result) == (
        "started",
        {"q": "x"},
        None,
    )

    await store.finish_receipt(rid, "search", "h1", {"hits": [1, 2]}, tokens=12, cost_usd=0.25)
    done = await store.get_receipt(rid, "search", "h1")
    assert done is not None and (done.status, done.result, done.tokens, done.cost_usd, done.error) == (
        "succeeded", {"hits": [1, 2]}, 12, 0.25, None,
    )  # fmt: skip
    # A replayed call must never downgrade a succeeded receipt: not by start, not by fail.
    await store.start_receipt(rid, "search", "h1", "web_search", "search", {"q": "x"})
    await store.fail_receipt(rid, "search", "h1", "late failure")
    assert await store.get_receipt(rid, "search", "h1") == done

    await store.start_receipt(rid, "fetch", "h2", "fetch", "fetch", {"url": "u"})
    await store.fail_receipt(rid, "fetch", "h2", "TimeoutError: slow")
    failed = await store.get_receipt(rid, "fetch", "h2")
    assert failed is not None and (failed.status, failed.error) == ("failed", "TimeoutError: slow")
    await store.start_receipt(rid, "fetch", "h2", "fetch", "fetch", {"url": "u"})  # a retry restarts it
    retried = await store.get_receipt(rid, "fetch", "h2")
    assert retried is not None and (retried.status, retried.error) == ("started", None)
    await store.start_receipt(rid, "fetch", "h3", "fetch", "fetch", {"url": "v"})

    assert [(r.receipt_key, r.args_hash) for r in await store.list_receipts(rid)] == [
        ("search", "h1"), ("fetch", "h2"), ("fetch", "h3"),
    ]  # fmt: skip
    assert [r.args_hash for r in await store.list_receipts(rid, receipt_key="fetch")] == ["h2", "h3"]
    assert [r.args_hash for r in await store.list_receipts(rid, status="succeeded")] == ["h1"]
    assert [r.args_hash for r in await store.list_receipts(rid, "fetch", "started")] == ["h2", "h3"]
    assert await store.list_receipts(rid, receipt_key="fetch", status="succeeded") == []
    assert done.to_dict()["status"] == "succeeded" and "result" not in done.to_dict()


def _iso_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


async def test_a_replica_that_lost_the_lease_can_write_nothing(store: RunStore) -> None:
    """Fencing: after B takes the run over from A, every write A makes as the run's executor fails with
    LeaseLost and leaves nothing behind; B's writes and unfenced commands go through."""
    run = await store.create_run("q", {}, "extractive")
    rid, now = run.run_id, _iso_in(0)
    assert await store.claim_run(rid, "A", _iso_in(30), now) is not None
    await store.append_event(rid, "message", None, {"text": "A"}, fence="A")
    await store.start_receipt(rid, "search", "h1", "web.search", "search", {"q": 1}, fence="A")
    # B cannot take a live lease; it can once A is known dead (or its lease expired)
    assert await store.claim_run(rid, "B", _iso_in(30), now) is None
    assert await store.claim_run(rid, "B", _iso_in(30), now, dead_owner="A") is not None
    writes = {
        "event": store.append_event(rid, "message", None, {"text": "zombie"}, fence="A"),
        "status": store.update_run(rid, status="failed", fence="A"),
        "start receipt": store.start_receipt(rid, "fetch", "h2", "web.fetch", "fetch", {"u": 1}, fence="A"),
        "finish receipt": store.finish_receipt(rid, "search", "h1", {"hits": []}, fence="A"),
        "fail receipt": store.fail_receipt(rid, "search", "h1", "late", fence="A"),
        "checkpoint": store.add_checkpoint(checkpoint(rid, "c1", now), fence="A"),
        "lease check": store.check_lease(rid, "A"),
    }
    for name, write in writes.items():
        with pytest.raises(LeaseLost):
            await write
            pytest.fail(f"the {name} write went through")
    assert [e.data["text"] for e in await store.list_events(rid)] == ["A"]
    current = await store.get_run(rid)
    assert (current.status, current.lease_owner) == ("queued", "B")
    assert [r.status for r in await store.list_receipts(rid)] == ["started"]
    assert await store.list_checkpoints(rid) == []
    await store.append_event(rid, "message", None, {"text": "B"}, fence="B")
    await store.finish_receipt(rid, "search", "h1", {"hits": []}, fence="B")
    await store.request_cancel(rid)  # a command (unfenced) from any replica
    assert await store.cancel_requested_among("B") == [rid] and await store.cancel_requested_among("A") == []


async def test_the_queue_is_first_in_first_out_and_claims_only_active_runs(store: RunStore) -> None:
    runs = [await store.create_run(f"q{i}", {}, "extractive") for i in range(3)]
    await store.update_run(runs[0].run_id, queued_at=_iso_in(5))  # resumed later: goes to the back
    positions = await store.queue_positions()
    assert [positions[r.run_id] for r in runs] == [3, 1, 2]
    assert await store.claim_run(runs[1].run_id, "A", _iso_in(30), _iso_in(0)) is not None
    positions = await store.queue_positions()  # a claimed run has left the queue
    assert runs[1].run_id not in positions and positions[runs[2].run_id] == 1
    await store.update_run(runs[2].run_id, status="completed")
    # a run that stopped meanwhile is not claimed (a waiter here must not run it again)
    assert await store.claim_run(runs[2].run_id, "A", _iso_in(30), _iso_in(0)) is None


async def test_delete_run_removes_everything(store: RunStore) -> None:
    keep = await store.create_run("keep", {}, "extractive")
    gone = await store.create_run("gone", {}, "extractive")
    for run in (keep, gone):
        await store.append_event(run.run_id, "e", None, {})
        await store.add_checkpoint(checkpoint(run.run_id, "cp", "2030-01-01T00:00:00.000+00:00"))
        await store.start_receipt(run.run_id, "k", "h", "tool", None, {})
    await store.delete_run(gone.run_id)
    with pytest.raises(RunNotFound):
        await store.get_run(gone.run_id)
    assert await store.list_events(gone.run_id) == []
    assert await store.list_checkpoints(gone.run_id) == []
    assert await store.list_receipts(gone.run_id) == []
    with pytest.raises(RunNotFound):
        await store.delete_run(gone.run_id)
    assert len(await store.list_events(keep.run_id)) == 1 and len(await store.list_receipts(keep.run_id)) == 1
    assert [r.run_id for r in await store.list_runs()] == [keep.run_id]


# --- PostgreSQL only: replicas, the checkpointer, the smoke CLI, failures -----------------------------
async def test_two_replicas_append_to_one_run(fresh_postgres_dsn: str) -> None:
    async with (
        open_postgres_store(fresh_postgres_dsn, max_size=4) as replica_a,
        open_postgres_store(fresh_postgres_dsn, max_size=4) as replica_b,
    ):
        run = await replica_a.create_run("shared", {}, "extractive")
        records = await asyncio.gather(
            *(
                (replica_a if i % 2 else replica_b).append_event(run.run_id, "tick", None, {"i": i})
                for i in range(80)
            )
        )
        assert sorted(r.seq for r in records) == list(range(1, 81))
        assert [e.seq for e in await replica_b.list_events(run.run_id)] == list(range(1, 81))


async def test_an_event_appended_by_one_replica_wakes_the_others(fresh_postgres_dsn: str) -> None:
    """LISTEN/NOTIFY: a streamer on replica A learns of B's event at B's commit, without polling."""
    async with (
        open_postgres_store(fresh_postgres_dsn, max_size=2) as replica_a,
        open_postgres_store(fresh_postgres_dsn, max_size=2) as replica_b,
    ):
        run = await replica_b.create_run("shared", {}, "extractive")
        woken: asyncio.Queue[str] = asyncio.Queue()
        watching = asyncio.create_task(replica_a.watch_events(woken.put_nowait))
        try:
            for attempt in range(50):  # the LISTEN is in place once an event gets through
                await replica_b.append_event(run.run_id, "tick", None, {"i": attempt})
                try:
                    assert (await asyncio.wait_for(woken.get(), timeout=0.2)).split()[0] == run.run_id
                    break
                except TimeoutError:
                    continue
            else:
                raise AssertionError("no notification in 50 appends")
            tock = await replica_b.append_event(run.run_id, "tock", None, {})
            # the payload says which event: a tail that was handed it in memory skips the echo
            assert await asyncio.wait_for(woken.get(), timeout=5) == f"{run.run_id} {tock.seq}"
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching


async def test_concurrent_setup_from_several_processes(fresh_postgres_dsn: str) -> None:
    """Replicas starting at once on an empty database: both schemas are created exactly once."""

    async def start_replica() -> int:
        async with open_persistence(fresh_postgres_dsn) as persistence:
            return len(await persistence.store.list_runs())

    assert await asyncio.gather(*(start_replica() for _ in range(4))) == [0, 0, 0, 0]
    with psycopg.connect(fresh_postgres_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM deepresearch_migrations").fetchone() == (len(MIGRATIONS),)
        assert conn.execute("SELECT count(DISTINCT v) = count(*) FROM checkpoint_migrations").fetchone() == (
            True,
        )


class CountState(TypedDict):
    count: int


def _count_graph() -> StateGraph[CountState]:
    graph = StateGraph(CountState)
    graph.add_node("increment", lambda state: {"count": state["count"] + 1})
    graph.add_edge(START, "increment")
    graph.add_edge("increment", END)
    return graph


async def test_open_persistence_postgres_checkpoints_survive_a_restart(fresh_postgres_dsn: str) -> None:
    config: Any = {"configurable": {"thread_id": "deepresearch-t1"}}
    async with open_persistence(fresh_postgres_dsn) as persistence:
        assert isinstance(persistence.checkpointer, AsyncPostgresSaver)
        graph = _count_graph().compile(checkpointer=persistence.checkpointer)
        assert await graph.ainvoke({"count": 41}, config) == {"count": 42}
        saved = await persistence.checkpointer.aget_tuple(config)
        assert saved is not None and saved.checkpoint["channel_values"]["count"] == 42
        run = await persistence.store.create_run("q", {}, "extractive")
    async with open_persistence(fresh_postgres_dsn) as reopened:  # a new process, a new pool
        graph = _count_graph().compile(checkpointer=reopened.checkpointer)
        assert (await graph.aget_state(config)).values == {"count": 42}
        assert (await reopened.store.get_run(run.run_id)).to_dict() == run.to_dict()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _smoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base_env = {k: v for k, v in os.environ.items() if "DSN" not in k and "DATABASE_URL" not in k}
    return subprocess.run(
        [sys.executable, str(REPO / "pg_smoke.py"), *args],
        cwd=REPO, env={**base_env, **(env or {})}, capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip


def test_pg_smoke_with_a_password_never_prints_it(postgres_cluster: PostgresCluster) -> None:
    password = f"pw-{uuid.uuid4().hex}"
    role = f"smoke_{uuid.uuid4().hex[:8]}"
    postgres_cluster.create_password_role(role, password)
    db = postgres_cluster.create_database()
    try:
        dsn = postgres_cluster.dsn(db, user=role, password=password)
        for result in (_smoke(dsn), _smoke(env={"DEEPRESEARCH_DATABASE_URL": dsn})):
            assert result.returncode == 0, result.stderr
            assert password not in result.stdout + result.stderr
            summary = json.loads(result.stdout)
            assert summary["ok"] is True and summary["dsn"] == redact_dsn(dsn) and ":***@" in summary["dsn"]
            assert (
                summary["store_migrations"] == [v for v, *_ in MIGRATIONS]
                and summary["checkpointer_migrations"] > 0
            )
            assert summary["round_trip"]["deleted"] is True
        assert json.loads(result.stdout)["dsn_source"] == "DEEPRESEARCH_DATABASE_URL"
        wrong = _smoke(env={"KSADK_LANGGRAPH_CHECKPOINT_DSN": dsn.replace(password, "not-" + password)})
        assert wrong.returncode == 1 and "password authentication failed" in wrong.stderr
        assert password not in wrong.stderr and "Traceback" not in wrong.stderr
    finally:
        postgres_cluster.drop_database(db)


def test_pg_smoke_unreachable_and_usage_errors() -> None:
    port = _free_port()
    started = time.monotonic()
    result = _smoke(f"postgresql://someone:hunter2secret@127.0.0.1:{port}/research")
    assert result.returncode == 1 and time.monotonic() - started < 30
    assert result.stdout == "" and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"cannot connect to PostgreSQL at 127.0.0.1:{port}/research (user someone)" in result.stderr
    assert "hunter2secret" not in result.stderr
    missing = _smoke()
    assert missing.returncode == 2 and "no DSN" in missing.stderr


async def test_unreachable_server_fails_fast_with_a_clear_message() -> None:
    port = _free_port()
    started = time.monotonic()
    with pytest.raises(PostgresUnavailable) as refused:
        async with open_persistence(f"postgres://app:s3cr3t-pw@127.0.0.1:{port}/deepresearch"):
            pass
    assert time.monotonic() - started < 5
    assert str(refused.value).startswith(f"cannot connect to PostgreSQL at 127.0.0.1:{port}/deepresearch")
    assert "s3cr3t-pw" not in str(refused.value)

    # A server that accepts TCP but never answers: the connect timeout bounds the wait.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        dsn = f"postgresql://app:s3cr3t-pw@127.0.0.1:{silent.getsockname()[1]}/deepresearch"
        started = time.monotonic()
        with pytest.raises(PostgresUnavailable, match="timeout expired") as hung:
            async with open_postgres_store(dsn, connect_timeout=2):
                pass
        assert time.monotonic() - started < 10 and "s3cr3t-pw" not in str(hung.value)


def test_redact_dsn() -> None:
    assert (
        redact_dsn("postgresql://u:p@ss@h:5432/db?sslmode=require")
        == "postgresql://u:***@h:5432/db?sslmode=require"
    )
    assert redact_dsn("postgres://u@h/db") == "postgres://u@h/db"
    assert (
        redact_dsn("postgresql://h/db?user=u&password=x&a=1") == "postgresql://h/db?user=u&password=***&a=1"
    )
    assert redact_dsn("host=h password='a b' dbname=d") == "host=h password=*** dbname=d"
    assert redact_dsn("sqlite:///tmp/x.db") == "sqlite:///tmp/x.db"


async def test_old_logs_and_options_read_back_under_the_current_contract(store: RunStore) -> None:
    """Rows written by the previous release: a LangGraph checkpoint logged as `checkpoint` with indexed
    false replays as `graph_checkpoint`; a stored Infinity deadline reads back as no deadline."""
    from deepresearch.options import STORED, ResearchOptions
    from deepresearch.service.views import public_run

    run = await store.create_run("q", {"budget": {"deadline_seconds": math.inf}}, "extractive")
    await store.append_event(run.run_id, "checkpoint", "start", {"checkpoint_id": "c0", "indexed": False})
    await store.append_event(
        run.run_id, "checkpoint", "plan_research", {"checkpoint_id": "c1", "indexed": True}
    )
    events = await store.list_events(run.run_id)
    assert [(e.type, e.data.get("indexed")) for e in events] == [
        ("graph_checkpoint", None),
        ("checkpoint", True),
    ]
    assert public_run(await store.get_run(run.run_id)).options.budget.deadline_seconds is None
    assert ResearchOptions.model_validate((await store.get_run(run.run_id)).options, context=STORED)


async def test_update_with_expected_version_is_a_compare_and_set(backend: Backend) -> None:
    """Two processes read the same version; exactly one of their conditional updates lands."""
    from deepresearch.store import RunChanged

    async with backend.open() as first, backend.open() as second:
        run = await first.create_run("q", {}, "extractive")
        assert run.version == 0
        seen_a, seen_b = await first.get_run(run.run_id), await second.get_run(run.run_id)
        outcomes = await asyncio.gather(
            first.update_run(run.run_id, expect_version=seen_a.version, status="queued"),
            second.update_run(run.run_id, expect_version=seen_b.version, status="running"),
            return_exceptions=True,
        )
        assert sorted(type(o).__name__ for o in outcomes) == [RunChanged.__name__, "RunRecord"]
        assert (await first.get_run(run.run_id)).version == 1
        with pytest.raises(RunNotFound):
            await first.update_run("nope", expect_version=0, status="queued")


# --- SQLite only: group commit ---------------------------------------------------------------------
async def test_sqlite_group_commit_keeps_each_writers_result_and_failure_its_own(tmp_path: Path) -> None:
    """Writes asked for at once are committed together; each caller gets its own result, in order, and a
    failing write fails only its caller (its group is rolled back and replayed one by one)."""
    async with open_sqlite_store(tmp_path / "group.db") as store:
        runs = [await store.create_run(f"q{i}", {}, "extractive") for i in range(4)]

        async def burst(n: int, with_failure: bool) -> list[Any]:
            writes: list[Any] = [
                store.append_event(runs[i % 4].run_id, "e", None, {"i": i}) for i in range(n)
            ]
            if with_failure:
                writes.insert(n // 2, store.delete_run("no-such-run"))  # raises inside its transaction
            return await asyncio.gather(*writes, return_exceptions=True)

        for round_no in range(5):
            outcomes = await burst(40, with_failure=round_no % 2 == 0)
            failed = [o for o in outcomes if isinstance(o, BaseException)]
            assert [type(f) for f in failed] == ([] if round_no % 2 else [RunNotFound])
            assert all(o.seq > 0 for o in outcomes if not isinstance(o, BaseException))
        for run in runs:
            events = await store.list_events(run.run_id)
            assert [e.seq for e in events] == list(range(1, 51))  # 5 bursts x 10 each, no gap, no repeat
            assert [e.data["i"] % 4 for e in events] == [runs.index(run)] * 50
    with sqlite3.connect(tmp_path / "group.db") as conn:  # all of it committed, on disk
        assert conn.execute("SELECT COUNT(*) FROM run_events").fetchone()[0] == 200


async def test_statements_give_the_same_answers_on_both_aiosqlite_paths(tmp_path: Path) -> None:
    """One trip to aiosqlite's thread per statement (its private `_execute`), or its public cursors when an
    aiosqlite without it is installed: the same rows, row access by name and row counts."""
    from deepresearch.store.sqlite import _Statements, connect_sqlite

    conn = await connect_sqlite(tmp_path / "paths.db")
    try:
        fast = _Statements(conn)
        slow = _Statements(conn)
        slow._run = None
        assert fast._run is not None  # the aiosqlite this project installs has it
        for statements in (fast, slow):
            await statements.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER)")
            await statements.execute("DELETE FROM t")
            count, _ = await statements.execute("INSERT INTO t VALUES (?, ?), (?, ?)", ("a", 1, "b", 2))
            assert count == 2
            count, rows = await statements.execute("SELECT k, v FROM t ORDER BY k")
            assert [(r["k"], r["v"]) for r in rows] == [("a", 1), ("b", 2)]
            count, rows = await statements.execute("UPDATE t SET v = v + 1 WHERE k = ? RETURNING v", ("b",))
            assert rows[0]["v"] == 3
            await conn.commit()
    finally:
        await conn.close()
