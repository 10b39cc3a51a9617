"""What only PostgreSQL has to prove in the store: several replicas on one database, the checkpointer
across a restart, the pg_smoke CLI and failures to connect (the contract both backends share is
tests/test_store.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph

from deepresearch.store import PostgresUnavailable, open_persistence, open_postgres_store, redact_dsn
from deepresearch.store.sql import MIGRATIONS
from peers import launch

if TYPE_CHECKING:  # the fixtures come from tests.pg via pytest_plugins in tests/conftest.py
    from tests.pg import PostgresCluster

REPO = Path(__file__).resolve().parent.parent


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


async def test_fenced_updates_of_one_run_from_two_replicas_queue_instead_of_deadlocking(
    fresh_postgres_dsn: str,
) -> None:
    """The lease holder's fenced writes that change the run's row (a cancel finishing it while the
    executor records a stage) run at once on two connections: each waits for the other's commit. With a
    shared row lock taken for the check and upgraded by the UPDATE, two of them deadlocked (PostgreSQL
    aborts one: a 500 on the cancel, seen in CI)."""
    async with (
        open_postgres_store(fresh_postgres_dsn, max_size=6) as replica_a,
        open_postgres_store(fresh_postgres_dsn, max_size=6) as replica_b,
    ):
        run = await replica_a.create_run("shared", {}, "extractive")
        now = datetime.now(UTC)
        expires = (now + timedelta(minutes=5)).isoformat(timespec="milliseconds")
        assert await replica_a.claim_run(run.run_id, "owner", expires, now.isoformat(timespec="milliseconds"))
        rounds = 40
        await asyncio.gather(
            *(
                (replica_a if i % 2 else replica_b).update_run(
                    run.run_id, current_stage=f"s{i}", fence="owner"
                )
                for i in range(rounds)
            )
        )
        assert (await replica_b.get_run(run.run_id)).version == run.version + 1 + rounds


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
    return launch.run(
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
