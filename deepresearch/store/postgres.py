"""PostgreSQL run store: the shared SQL (sql.py) on a psycopg pool, safe across replicas."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from deepresearch.store.base import Row
from deepresearch.store.core import POSTGRES
from deepresearch.store.pg_connection import Pool, open_postgres_pool
from deepresearch.store.sql import MIGRATIONS, SCHEMA_LOCK, SqlRunStore

logger = logging.getLogger(__name__)

__all__ = ["CHECKPOINTER_SETUP_LOCK_KEY", "MIGRATIONS", "PostgresRunStore", "open_postgres_store"]

# Advisory lock keys. The single-bigint and the two-int key spaces never overlap, so the per-run locks
# (class, hashtext(run_id)) cannot collide with the setup locks.
MIGRATION_LOCK_KEY = 0x64725F6D6967  # "dr_mig"
CHECKPOINTER_SETUP_LOCK_KEY = 0x64725F636B70  # "dr_ckp"
_RUN_LOCK_CLASS = 0x64725F65  # "dr_e"
EVENTS_CHANNEL = "deepresearch_events"
"""NOTIFY channel: the payload is ``<run id> <seq>`` of an appended event (a bare run id from before)."""


class _Statements:
    def __init__(self, conn: AsyncConnection[DictRow]) -> None:
        self._conn = conn

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> tuple[int, list[Row]]:
        cur = await self._conn.execute(POSTGRES.sql(statement), POSTGRES.params(params))  # type: ignore[arg-type]
        rows = await cur.fetchall() if cur.description else []
        return cur.rowcount, list(rows)


class PostgresRunStore(SqlRunStore):
    """RunStore on a psycopg connection pool (autocommit, dict rows); safe across processes."""

    dialect = POSTGRES

    def __init__(self, pool: Pool, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool

    @property
    def pool(self) -> Pool:
        return self._pool

    @asynccontextmanager
    async def _transaction(self, *, write: bool = True) -> AsyncIterator[_Statements]:
        async with self._pool.connection() as conn:
            if not write:  # autocommit: a lone SELECT needs no transaction block
                yield _Statements(conn)
                return
            async with conn.transaction():
                yield _Statements(conn)

    async def _serialise(self, tx: Any, key: str) -> None:
        # A transaction-level advisory lock: released at COMMIT. READ COMMITTED gives the statements after
        # the wait a fresh snapshot, so they see what the previous holder committed.
        if key == SCHEMA_LOCK:
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK_KEY,))
        else:
            await tx.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (_RUN_LOCK_CLASS, key))

    async def _announce(self, tx: Any, run_id: str, seq: int) -> None:
        # delivered at COMMIT, to every listening session: streamers on other replicas wake at once, and
        # this process's own tails skip the echo of what they were handed in memory (the seq says so)
        await tx.execute("SELECT pg_notify(?, ?)", (EVENTS_CHANNEL, f"{run_id} {seq}"))

    async def watch_events(self, wake: Callable[[str], None]) -> None:
        """LISTEN on a connection of its own (not the pool's: it stays in LISTEN for good); reconnects
        after a lost connection. Notifications missed meanwhile cost a poll interval, nothing else."""
        while True:
            try:
                # the pool's options: autocommit (a LISTEN takes effect at once), timeouts
                conn = await AsyncConnection.connect(self._pool.conninfo, **(self._pool.kwargs or {}))
                async with conn:
                    await conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    async for notice in conn.notifies():
                        wake(notice.payload)
            except psycopg.OperationalError:
                logger.warning("listening for run events failed; reconnecting in 1 s", exc_info=True)
                await asyncio.sleep(1)

    async def aclose(self) -> None:
        if self._owns_pool:
            await self._pool.close()


@asynccontextmanager
async def open_postgres_store(
    dsn: str, *, min_size: int = 1, max_size: int = 10, connect_timeout: int = 5
) -> AsyncIterator[PostgresRunStore]:
    """A set-up PostgresRunStore on its own pool; raises PostgresUnavailable if the server is unreachable."""
    async with open_postgres_pool(
        dsn, min_size=min_size, max_size=max_size, connect_timeout=connect_timeout
    ) as pool:
        store = PostgresRunStore(pool)
        await store.setup()
        yield store
