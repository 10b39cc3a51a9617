"""SQLite run store (the embedded default), on the same file and connection as the LangGraph checkpointer."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from deepresearch.store.base import Row
from deepresearch.store.core import SQLITE
from deepresearch.store.sql import MIGRATIONS, SqlRunStore
from deepresearch.store.vendored import one_trip

__all__ = ["MIGRATIONS", "SqliteRunStore", "connect_sqlite", "open_sqlite_store", "sqlite_path_from_url"]


logger = logging.getLogger(__name__)
T = TypeVar("T")
MAX_GROUP = 64
"""At most this many write transactions committed as one (bounds a group's time holding the lock)."""
BUSY_TIMEOUT_MS = 10_000
"""How long a statement waits for another process's write lock before "database is locked"."""


class _Statements:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        # one trip to aiosqlite's thread per statement (store/vendored.py); its public cursors without it
        self._run = one_trip(conn)

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> tuple[int, list[Row]]:
        params = SQLITE.params(params)
        if self._run is not None:
            return await self._run(statement, params)
        async with self._conn.execute(statement, params) as cur:
            cur.row_factory = aiosqlite.Row
            rows = list(await cur.fetchall())
            return cur.rowcount, rows


class SqliteRunStore(SqlRunStore):
    """RunStore on one aiosqlite connection (SQLite serialises writers anyway)."""

    dialect = SQLITE

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        # One statement (and its commit) at a time: a cursor still being read while another coroutine
        # commits fails with "SQL statements in progress". Shared with the saver on the same connection.
        self.lock = asyncio.Lock()
        self._pending: list[tuple[Callable[[Any], Awaitable[Any]], asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def _transaction(self, *, write: bool = True) -> AsyncIterator[_Statements]:
        async with self.lock:
            if not write:  # a lone SELECT: autocommit, never takes the file's write lock
                yield _Statements(self._conn)
                return
            # IMMEDIATE takes the file's write lock now (other processes wait up to busy_timeout), so a
            # read-then-write transaction can never fail half-way with "database is locked".
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _Statements(self._conn)
            except BaseException:
                await self._conn.rollback()
                raise
            await self._conn.commit()

    async def _atomic(self, body: Callable[[Any], Awaitable[T]]) -> T:
        """Group commit: the write transactions asked for while one commits are run together in the next
        transaction, one fsync for all of them (a commit costs ~1.6 ms of fsync; a default run makes ~450
        of them, 10 runs at once queued ~7 s of them on this one connection). Each caller still returns
        only once its own writes are committed, in the order asked. If any body of a group fails, the
        group is rolled back and each body runs again in a transaction of its own, so one failure is
        only its caller's.

        Shielded: a cancel (a second Ctrl-C, a shutdown past its grace) must not cut a transaction on
        the shared connection in half; it would stay open, and every later write would fail."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((body, future))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.ensure_future(self._commit_pending())
            self._committer.add_done_callback(_retrieve)
        return await asyncio.shield(future)

    async def _commit_pending(self) -> None:
        group: list[tuple[Callable[[Any], Awaitable[Any]], asyncio.Future[Any]]] = []
        try:
            while self._pending:
                group, self._pending = self._pending[:MAX_GROUP], self._pending[MAX_GROUP:]
                if len(group) > 1 and await self._commit_group(group):
                    continue
                for body, future in group:  # alone, or again one by one after the group failed
                    try:
                        result = await super()._atomic(body)
                    except Exception as exc:
                        if not future.done():
                            future.set_exception(exc)
                    else:
                        if not future.done():
                            future.set_result(result)
        except BaseException as exc:  # the loop is going away mid-commit: nobody may wait forever
            for _, future in [*group, *self._pending]:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            self._pending = []
            raise

    async def _commit_group(
        self, group: list[tuple[Callable[[Any], Awaitable[Any]], asyncio.Future[Any]]]
    ) -> bool:
        """All of `group` in one transaction; False (nothing committed) if any of it failed."""
        try:
            async with self._transaction() as tx:
                results = [await body(tx) for body, _ in group]
        except Exception:
            logger.debug(
                "group of %s writes rolled back; committing them one by one", len(group), exc_info=True
            )
            return False
        for (_, future), result in zip(group, results, strict=True):
            if not future.done():
                future.set_result(result)
        return True

    async def _serialise(self, tx: Any, key: str) -> None:
        """Nothing to add: BEGIN IMMEDIATE already holds the database's single write lock."""

    async def scrub(self) -> None:
        """Write the WAL into the file and truncate it: the pages a delete zeroed leave no older copy."""
        async with self.lock, self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cur:
            await cur.fetchall()

    async def aclose(self) -> None:
        await self._conn.close()


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # the caller may have been cancelled meanwhile: its error is not "never retrieved"


def sqlite_path_from_url(url: str) -> Path:
    if not url.startswith("sqlite:///"):
        raise ValueError(f"not a sqlite URL: {url!r} (expected sqlite:///path/to/file.db)")
    return Path(url.removeprefix("sqlite:///"))


async def connect_sqlite(path: Path) -> aiosqlite.Connection:
    """A WAL-mode connection that waits (busy_timeout) for other processes on the same file instead of
    failing at once with "database is locked"."""
    # off the event loop: a file-system call (LangGraph's dev server refuses blocking calls on its loop)
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    # IMMEDIATE: the saver's implicit transactions (an INSERT, an executemany of writes, then its commit)
    # take the write lock up front too; SqliteRunStore opens its own transactions explicitly.
    conn = await aiosqlite.connect(path, isolation_level="IMMEDIATE")
    try:
        await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # deleted rows are overwritten with zeros, not only unlinked: a deleted run leaves no text behind
        await conn.execute("PRAGMA secure_delete=ON")
        await _enable_wal(conn)
    except BaseException:
        await conn.close()  # its worker thread would otherwise keep the process from exiting
        raise
    return conn


async def _enable_wal(conn: aiosqlite.Connection) -> None:
    """Switch the file to WAL (persistent, so usually a no-op).

    Changing the journal mode needs the file to itself and answers "database is locked" at once, without
    waiting for busy_timeout, when another process is opening the same new file: retry for as long."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            async with conn.execute("PRAGMA journal_mode=WAL") as cur:
                await cur.fetchall()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.02)


@asynccontextmanager
async def open_sqlite_store(path: Path) -> AsyncIterator[SqliteRunStore]:
    conn = await connect_sqlite(path)
    store = SqliteRunStore(conn)
    try:
        await store.setup()
        yield store
    finally:
        await conn.close()
