"""Persistence: the run store and the LangGraph checkpointer, opened together on one database."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from .base import (
    ACTIVE_STATUSES,
    LOCAL_OWNER,
    RESUMABLE_STATUSES,
    CheckpointRecord,
    EventRecord,
    LeaseLost,
    LLMCapability,
    Receipt,
    RunChanged,
    RunNotFound,
    RunRecord,
    RunStore,
    TokenRecord,
    args_hash,
    new_run_id,
    thread_id_for,
    utcnow,
    utcnow_precise,
)
from .pg_connection import PostgresUnavailable, open_postgres_pool, redact_dsn, session_advisory_lock
from .postgres import CHECKPOINTER_SETUP_LOCK_KEY, PostgresRunStore, open_postgres_store
from .serde import CompressedSerializer
from .sqlite import SqliteRunStore, connect_sqlite, open_sqlite_store, sqlite_path_from_url

__all__ = [
    "ACTIVE_STATUSES",
    "DATABASE_ERRORS",
    "DATABASE_UNAVAILABLE",
    "LOCAL_OWNER",
    "RESUMABLE_STATUSES",
    "CheckpointFences",
    "CheckpointRecord",
    "EventRecord",
    "LLMCapability",
    "LeaseLost",
    "Persistence",
    "PostgresRunStore",
    "PostgresUnavailable",
    "Receipt",
    "RunChanged",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "SqliteRunStore",
    "TokenRecord",
    "args_hash",
    "new_run_id",
    "open_persistence",
    "open_postgres_store",
    "open_sqlite_store",
    "redact_dsn",
    "thread_id_for",
    "utcnow",
    "utcnow_precise",
]


DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, psycopg.Error, OSError)
"""What a database that cannot be reached (or answer) raises, on either backend."""
DATABASE_UNAVAILABLE: tuple[type[Exception], ...] = (
    sqlite3.OperationalError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)
"""The database went away or cannot answer now (a restart, a cut connection, a lock held too long): not
a bug, and not the run's fault. A narrower class than DATABASE_ERRORS, which also covers any OSError."""


class CheckpointFences:
    """Which threads this process checkpoints under a lease: LangGraph's saver writes outside the store's
    transactions, so before each of its writes for such a thread the lease is checked (LeaseLost): a
    process that lost a run to another one cannot add checkpoints to the run's thread."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._held: dict[str, tuple[str, str]] = {}

    def hold(self, thread_id: str, run_id: str, owner: str) -> None:
        self._held[thread_id] = (run_id, owner)

    def drop(self, thread_id: str) -> None:
        self._held.pop(thread_id, None)

    async def check(self, config: Any) -> None:
        thread_id = (config or {}).get("configurable", {}).get("thread_id")
        held = self._held.get(thread_id) if thread_id else None
        if held is not None:
            await self.store.check_lease(*held)


class FencedSaver:
    """Checks the thread's fence before LangGraph writes a checkpoint or a task's writes (a mixin: first in
    the bases, so the check runs before the saver's own write)."""

    fences: CheckpointFences

    async def aput(self, config: Any, *args: Any, **kwargs: Any) -> Any:
        await self.fences.check(config)
        return await super().aput(config, *args, **kwargs)  # type: ignore[misc]

    async def aput_writes(self, config: Any, *args: Any, **kwargs: Any) -> None:
        await self.fences.check(config)
        await super().aput_writes(config, *args, **kwargs)  # type: ignore[misc]


class ShieldedSqliteSaver(AsyncSqliteSaver):
    """AsyncSqliteSaver whose writes cannot be cut in half by a task cancellation.

    LangGraph cancels the sibling tasks of a failed (or cancelled) step. A saver write interrupted between
    its INSERT and its COMMIT leaves a write transaction open on the saver's connection, and every other
    writer then waits until "database is locked". Shielding lets the write commit first.
    """

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.shield(super().aput(*args, **kwargs))

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.shield(super().aput_writes(*args, **kwargs))

    async def adelete_thread(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.shield(super().adelete_thread(*args, **kwargs))


class FencedSqliteSaver(FencedSaver, ShieldedSqliteSaver):
    pass


@dataclass(slots=True)
class Persistence:
    store: RunStore
    checkpointer: BaseCheckpointSaver
    database_url: str
    fences: CheckpointFences


class UnsupportedDatabase(ValueError):
    pass


@asynccontextmanager
async def open_persistence(database_url: str) -> AsyncIterator[Persistence]:
    """Open the run store and the checkpointer on the same database; both are set up (idempotent)."""
    if database_url.startswith("sqlite:///"):
        # One connection for the run store and the saver: their writes are serialised on it, so they
        # can never lock each other out of the file (two connections deadlocked when LangGraph cancelled
        # a step mid-write). BEGIN IMMEDIATE still guards against other processes on the same file.
        conn = await connect_sqlite(sqlite_path_from_url(database_url))
        try:
            store = SqliteRunStore(conn)
            await store.setup()
            saver = FencedSqliteSaver(conn)
            saver.fences = CheckpointFences(store)
            saver.serde = CompressedSerializer(saver.serde)
            # one lock for both: a commit must never land while the other's statement is half-stepped
            saver.lock = store.lock
            await saver.setup()
            yield Persistence(store, saver, database_url, saver.fences)
        finally:
            await conn.close()
        return
    if database_url.startswith(("postgres://", "postgresql://")):
        # Imported here so the embedded (sqlite) default never loads the Postgres checkpointer.
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        # One pool for both: a replica holds one set of connections, and the store's tables and the
        # checkpointer's live in the same database. Raises PostgresUnavailable (no password) if unreachable.
        async with open_postgres_pool(database_url) as pool:
            store = PostgresRunStore(pool)
            await store.setup()
            # The saver's setup is not safe against a second replica starting at the same moment, and its
            # CREATE INDEX CONCURRENTLY cannot run in a transaction: serialise it with a session lock, run on
            # the connection holding the lock (a second pool connection could deadlock a max_size=1 pool).
            async with pool.connection() as conn, session_advisory_lock(conn, CHECKPOINTER_SETUP_LOCK_KEY):
                await AsyncPostgresSaver(conn).setup()

            class FencedPostgresSaver(FencedSaver, AsyncPostgresSaver):  # here: imported lazily
                pass

            pg_saver = FencedPostgresSaver(pool)
            pg_saver.fences = CheckpointFences(store)
            pg_saver.serde = CompressedSerializer(pg_saver.serde)
            yield Persistence(store, pg_saver, database_url, pg_saver.fences)
        return
    raise UnsupportedDatabase(
        f"unsupported DEEPRESEARCH_DATABASE_URL {database_url.split('://')[0]!r}://...; "
        "use sqlite:///path/to/file.db or postgresql://user:password@host/db"
    )
