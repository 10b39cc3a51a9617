"""The RunStore contract, against both backends: SQLite (a file per test) and PostgreSQL (a database per
test on the throwaway cluster from tests/pg.py). What only PostgreSQL has to prove (several replicas) is in
tests/test_store_postgres.py, SQLite's own in tests/test_store_sqlite.py."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from deepresearch.errors import RunNotFound
from deepresearch.store import (
    CheckpointRecord,
    LeaseLost,
    LLMCapability,
    RunStore,
    open_postgres_store,
    open_sqlite_store,
)
from deepresearch.store.sql import MIGRATIONS


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
