"""The PostgreSQL connection pool under cancellation and exhaustion, on a real server.

A task cancelled while it hands its connection back (an SSE client that went away: Starlette cancels its
stream again at every await) must neither lose the connection nor strand the request waiting for it: that
left replica B's pool with a free connection and a cancel request that waited 30 s for it, then 500
(docs/durability.md, "Connection pool"). And a pool that is exhausted for real answers 503 with
Retry-After, never 500."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from deepresearch.store import open_postgres_pool
from deepresearch.store.pg_connection import DatabaseBusy
from peers import serve_app
from runner import create_app
from tests.conftest import Servers


async def test_a_connection_handed_back_by_a_cancelled_task_reaches_the_waiting_request(
    fresh_postgres_dsn: str,
) -> None:
    """The holder is cancelled while its connection goes to the request queued for it (the one moment
    psycopg_pool's hand-over waits: for one loop turn after the request queues, it holds the lock the
    hand-over takes): the request gets the connection at once, and the pool keeps it. The request is let
    run 0-3 loop turns first, so the moment is met however many turns a checkout takes to queue."""
    async with open_postgres_pool(fresh_postgres_dsn, max_size=1, checkout_seconds=3) as pool:
        loop = asyncio.get_running_loop()
        for turns in range(4):
            holding, release = asyncio.Event(), asyncio.Event()

            async def holder(holding: asyncio.Event, release: asyncio.Event) -> None:
                async with pool.connection() as conn:
                    await conn.execute("SELECT 1")
                    holding.set()
                    await release.wait()

            held = asyncio.create_task(holder(holding, release))
            await asyncio.wait_for(holding.wait(), 5)
            started = time.monotonic()
            # the request queues; the holder leaves its block (handing the connection over) and is
            # cancelled at the hand-over's first wait, as a stream whose client went away is
            waiting = asyncio.create_task(pool.getconn())
            for _ in range(turns):
                await asyncio.sleep(0)
            release.set()
            loop.call_soon(held.cancel)
            conn = await asyncio.wait_for(waiting, 10)
            assert time.monotonic() - started < 2, f"waited for a free connection ({turns} turns)"
            await pool.putconn(conn)
            await asyncio.gather(held, return_exceptions=True)
            # and the connection is still the pool's: the next checkout does not wait for a lost one
            async with pool.connection(timeout=2) as again:
                assert (await (await again.execute("SELECT 2 AS two")).fetchone()) == {"two": 2}


async def test_an_exhausted_pool_is_a_503_with_retry_after(
    servers: Servers, tmp_path: Path, fresh_postgres_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A request that finds no free connection in time is told so (503, Retry-After), not a 500, and the
    log names who holds the connections and where; once the database lets them, requests are answered
    again."""
    settings = servers.settings(
        tmp_path,
        llm=True,
        database_url=fresh_postgres_dsn,
        database_pool_size=1,
        database_pool_timeout_seconds=1,
        stage_delay_seconds=5,
    )
    with serve_app(create_app(settings), lifespan="on") as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            created = await client.post("/api/runs", json={"question": "What makes pools run dry?"})
            run_id = created.json()["run_id"]
            # another process holds the run's row: the first write to it (the execution's or the cancel's)
            # waits for it in the only connection
            with _row_locked(fresh_postgres_dsn, run_id):
                cancel = asyncio.create_task(client.post(f"/api/runs/{run_id}/cancel", json={}))
                for _ in range(100):  # the cancel has the connection once a read finds none free
                    answer = await client.get(f"/api/runs/{run_id}")
                    if answer.status_code == 503:
                        break
                    await asyncio.sleep(0.05)
                assert answer.status_code == 503, answer.text
                assert answer.headers["Retry-After"].isdigit()
                assert "database is busy" in answer.json()["detail"]
            # the cancel held the connection (202 once the row was free) or waited behind the execution
            assert (await asyncio.wait_for(cancel, 30)).status_code in (202, 503)
            # the row is free again: everything is answered, the pool is whole
            assert (await client.get(f"/api/runs/{run_id}")).status_code == 200
            assert (await client.post(f"/api/runs/{run_id}/cancel", json={})).status_code == 202
    holders = [r.getMessage() for r in caplog.records if "longest holders" in r.getMessage()]
    # (a connection in the middle of a hand-over has no holder yet: any of the 503s names it)
    assert any("deepresearch/store/" in message for message in holders), holders


@contextlib.contextmanager
def _row_locked(dsn: str, run_id: str) -> Iterator[None]:
    with psycopg.connect(dsn) as conn:  # a transaction until the block ends
        conn.execute("SELECT 1 FROM runs WHERE run_id = %s FOR UPDATE", (run_id,))
        yield


def test_database_busy_is_a_database_error_and_a_503() -> None:
    """The loops that retry on database errors retry it; the HTTP handler answers it 503."""
    busy = DatabaseBusy("no connection")
    assert isinstance(busy, psycopg.OperationalError)
    assert busy.status == 503 and busy.headers()["Retry-After"].isdigit()
