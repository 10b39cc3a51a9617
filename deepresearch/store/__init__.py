"""Persistence: the run store and the LangGraph checkpointer, opened together on one database."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver

from deepresearch.store.base import (
    ACTIVE_STATUSES,
    LOCAL_OWNER,
    RESUMABLE_STATUSES,
    ActiveRunsLimit,
    CancelRequested,
    CheckpointRecord,
    EventRecord,
    LeaseLost,
    LLMCapability,
    Receipt,
    RunChanged,
    RunRecord,
    RunStore,
    TokenRecord,
    args_hash,
    new_run_id,
    thread_id_for,
    utcnow,
    utcnow_precise,
)
from deepresearch.store.pg_connection import (
    POOL_SIZE,
    POOL_TIMEOUT_SECONDS,
    DatabaseBusy,
    PostgresUnavailable,
    open_postgres_pool,
    redact_dsn,
    session_advisory_lock,
)
from deepresearch.store.postgres import CHECKPOINTER_SETUP_LOCK_KEY, PostgresRunStore, open_postgres_store
from deepresearch.store.savers import CheckpointFences, FencedSaver, FencedSqliteSaver
from deepresearch.store.serde import CompressedSerializer
from deepresearch.store.sqlite import SqliteRunStore, connect_sqlite, open_sqlite_store, sqlite_path_from_url

__all__ = [
    "ACTIVE_STATUSES",
    "DATABASE_ERRORS",
    "DATABASE_UNAVAILABLE",
    "LOCAL_OWNER",
    "RESUMABLE_STATUSES",
    "ActiveRunsLimit",
    "CancelRequested",
    "CheckpointFences",
    "CheckpointRecord",
    "DatabaseBusy",
    "EventRecord",
    "LLMCapability",
    "LeaseLost",
    "Persistence",
    "PostgresRunStore",
    "PostgresUnavailable",
    "Receipt",
    "RunChanged",
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


@dataclass(slots=True)
class Persistence:
    store: RunStore
    checkpointer: BaseCheckpointSaver
    database_url: str
    fences: CheckpointFences


class UnsupportedDatabase(ValueError):
    pass


@asynccontextmanager
async def open_persistence(
    database_url: str, *, pool_size: int = POOL_SIZE, pool_timeout: float = POOL_TIMEOUT_SECONDS
) -> AsyncIterator[Persistence]:
    """Open the run store and the checkpointer on the same database; both are set up (idempotent).
    PostgreSQL: at most `pool_size` connections, a checkout waits `pool_timeout` s (then DatabaseBusy)."""
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
            # (the saver's reads, which hold saver.lock: pinned in vendored.py; its writes go through the
            # store's group commit)
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
        async with open_postgres_pool(
            database_url, max_size=pool_size, checkout_seconds=pool_timeout
        ) as pool:
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
