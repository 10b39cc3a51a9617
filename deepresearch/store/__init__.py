"""Persistence: the run store and the LangGraph checkpointer, opened together on one database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from .base import (
    ACTIVE_STATUSES,
    RESUMABLE_STATUSES,
    CheckpointRecord,
    EventRecord,
    Receipt,
    RunNotFound,
    RunRecord,
    RunStore,
    args_hash,
    new_run_id,
    thread_id_for,
    utcnow,
)
from .sqlite import SqliteRunStore, open_sqlite_store, sqlite_path_from_url

__all__ = [
    "ACTIVE_STATUSES",
    "RESUMABLE_STATUSES",
    "CheckpointRecord",
    "EventRecord",
    "Persistence",
    "Receipt",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "SqliteRunStore",
    "args_hash",
    "new_run_id",
    "open_persistence",
    "open_sqlite_store",
    "thread_id_for",
    "utcnow",
]


@dataclass(slots=True)
class Persistence:
    store: RunStore
    checkpointer: BaseCheckpointSaver
    database_url: str


class UnsupportedDatabase(ValueError):
    pass


@asynccontextmanager
async def open_persistence(database_url: str) -> AsyncIterator[Persistence]:
    """Open the run store and the checkpointer on the same database; both are set up (idempotent)."""
    if database_url.startswith("sqlite:///"):
        path = sqlite_path_from_url(database_url)
        async with open_sqlite_store(path) as store:
            # One saver per file, on its own connection: the saver serialises its own writes.
            saver_conn = await aiosqlite.connect(path)
            try:
                await saver_conn.execute("PRAGMA busy_timeout=10000")
                saver = AsyncSqliteSaver(saver_conn)
                await saver.setup()
                yield Persistence(store=store, checkpointer=saver, database_url=database_url)
            finally:
                await saver_conn.close()
        return
    if database_url.startswith(("postgres://", "postgresql://")):
        raise UnsupportedDatabase(
            "PostgreSQL storage is not available in this build yet; use DEEPRESEARCH_DATABASE_URL="
            "sqlite:///path/to/deepresearch.db (or leave it empty for the embedded default)"
        )
    raise UnsupportedDatabase(
        f"unsupported DEEPRESEARCH_DATABASE_URL {database_url.split('://')[0]!r}://...; "
        "use sqlite:///path/to/file.db or postgresql://user:password@host/db"
    )
