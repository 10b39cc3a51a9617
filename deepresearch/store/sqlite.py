"""SQLite run store (the embedded default), on the same file as the LangGraph checkpointer."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from .base import (
    CheckpointRecord,
    EventRecord,
    Receipt,
    RunNotFound,
    RunRecord,
    checkpoint_from_row,
    dumps_json,
    new_run_id,
    receipt_from_row,
    run_from_row,
    thread_id_for,
    utcnow,
)

logger = logging.getLogger(__name__)

# Ordered, append-only: a released migration is never edited; add a new one instead.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "runs, events, checkpoint index, receipts",
        """
        CREATE TABLE IF NOT EXISTS runs (
            run_id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL UNIQUE,
            question TEXT NOT NULL,
            options_json TEXT NOT NULL,
            status TEXT NOT NULL,
            engine TEXT NOT NULL,
            current_stage TEXT,
            error TEXT,
            artifact_dir TEXT,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            usage_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT
        );
        CREATE INDEX IF NOT EXISTS runs_status_created ON runs (status, created_at);
        CREATE TABLE IF NOT EXISTS run_events (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            stage TEXT,
            ts TEXT NOT NULL,
            data_json TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE IF NOT EXISTS run_checkpoints (
            run_id TEXT NOT NULL,
            checkpoint_id TEXT NOT NULL,
            stage TEXT NOT NULL,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            next_json TEXT NOT NULL,
            summary TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            checkpoint_ns TEXT NOT NULL,
            parent_checkpoint_id TEXT,
            fork_of TEXT,
            PRIMARY KEY (run_id, checkpoint_id)
        );
        CREATE TABLE IF NOT EXISTS tool_receipts (
            run_id TEXT NOT NULL,
            receipt_key TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            stage TEXT,
            status TEXT NOT NULL,
            args_json TEXT NOT NULL,
            result_json TEXT,
            error TEXT,
            tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, receipt_key, args_hash)
        );
        CREATE INDEX IF NOT EXISTS receipts_status ON tool_receipts (run_id, receipt_key, status);
        """,
    ),
)

_RUN_COLUMNS = {
    "status",
    "engine",
    "current_stage",
    "error",
    "artifact_dir",
    "started_at",
    "finished_at",
    "usage",
    "cancel_requested",
    "options",
}


class SqliteRunStore:
    """RunStore on one aiosqlite connection (SQLite serialises writers anyway)."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        # The connection may be shared with the LangGraph saver: rows are shaped per cursor, not globally.
        self._conn = conn
        # One statement (and its commit) at a time: a cursor still being read while another coroutine
        # commits fails with "SQL statements in progress". Shared with the saver on the same connection.
        self.lock = asyncio.Lock()

    async def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        async with self.lock, self._conn.execute(sql, params) as cur:
            cur.row_factory = aiosqlite.Row
            return list(await cur.fetchall())

    async def _write(self, sql: str, params: Sequence[Any] = ()) -> tuple[int, list[aiosqlite.Row]]:
        async with self.lock:
            async with self._conn.execute(sql, params) as cur:
                cur.row_factory = aiosqlite.Row
                rows = list(await cur.fetchall())
                rowcount = cur.rowcount
            await self._conn.commit()
            return rowcount, rows

    async def setup(self) -> None:
        """Create or upgrade the schema. Idempotent."""
        await self._conn.execute("PRAGMA journal_mode=WAL")
        await self._conn.execute("PRAGMA busy_timeout=10000")
        await self._conn.execute(
            "CREATE TABLE IF NOT EXISTS deepresearch_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        async with self._conn.execute("SELECT version FROM deepresearch_migrations") as cur:
            applied = {row[0] for row in await cur.fetchall()}
        for version, name, sql in MIGRATIONS:
            if version in applied:
                continue
            await self._conn.executescript(sql)
            await self._conn.execute(
                "INSERT INTO deepresearch_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, utcnow()),
            )
            await self._conn.commit()
            logger.info("applied store migration %s (%s)", version, name)

    async def aclose(self) -> None:
        await self._conn.close()

    async def ping(self) -> None:
        await self._fetch("SELECT 1")

    # --- runs ----------------------------------------------------------------------------------
    async def create_run(
        self, question: str, options: dict[str, Any], engine: str, run_id: str | None = None
    ) -> RunRecord:
        run_id = run_id or new_run_id()
        now = utcnow()
        await self._write(
            "INSERT INTO runs (run_id, thread_id, question, options_json, status, engine, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)",
            (run_id, thread_id_for(run_id), question, dumps_json(options), engine, now, now),
        )
        return await self.get_run(run_id)

    async def get_run(self, run_id: str) -> RunRecord:
        rows = await self._fetch("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id)
        return run_from_row(rows[0])

    async def list_runs(self, status: str | None = None, limit: int = 50, offset: int = 0) -> list[RunRecord]:
        sql = "SELECT * FROM runs"
        params: list[Any] = []
        if status:
            sql += " WHERE status = ?"
            params.append(status)
        sql += " ORDER BY created_at DESC, run_id LIMIT ? OFFSET ?"
        params += [limit, offset]
        return [run_from_row(row) for row in await self._fetch(sql, params)]

    async def update_run(self, run_id: str, **fields: Any) -> RunRecord:
        unknown = set(fields) - _RUN_COLUMNS
        if unknown:
            raise ValueError(f"cannot update run fields {sorted(unknown)}")
        assignments, params = [], []
        for name, value in fields.items():
            if name in ("usage", "options"):
                assignments.append(f"{name}_json = ?")
                params.append(dumps_json(value))
            elif name == "cancel_requested":
                assignments.append("cancel_requested = ?")
                params.append(int(bool(value)))
            else:
                assignments.append(f"{name} = ?")
                params.append(value)
        assignments.append("updated_at = ?")
        params += [utcnow(), run_id]
        # column names come from the whitelist above, values are bound
        rowcount, _ = await self._write(f"UPDATE runs SET {', '.join(assignments)} WHERE run_id = ?", params)
        if rowcount == 0:
            raise RunNotFound(run_id)
        return await self.get_run(run_id)

    async def request_cancel(self, run_id: str) -> RunRecord:
        return await self.update_run(run_id, cancel_requested=True)

    async def is_cancel_requested(self, run_id: str) -> bool:
        rows = await self._fetch("SELECT cancel_requested FROM runs WHERE run_id = ?", (run_id,))
        return bool(rows and rows[0][0])

    async def delete_run(self, run_id: str) -> None:
        await self.get_run(run_id)
        for table in ("run_events", "run_checkpoints", "tool_receipts", "runs"):
            await self._write(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))

    # --- events --------------------------------------------------------------------------------
    async def append_event(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any]
    ) -> EventRecord:
        ts = utcnow()
        # seq is allocated inside the INSERT, so two writers can never take the same number.
        _, rows = await self._write(
            "INSERT INTO run_events (run_id, seq, type, stage, ts, data_json) "
            "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM run_events WHERE run_id = ? RETURNING seq",
            (run_id, type_, stage, ts, dumps_json(data), run_id),
        )
        return EventRecord(run_id=run_id, seq=int(rows[0][0]), type=type_, ts=ts, stage=stage, data=data)

    async def list_events(self, run_id: str, after: int = 0, limit: int = 10_000) -> list[EventRecord]:
        rows = await self._fetch(
            "SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, after, limit),
        )
        return [
            EventRecord(
                run_id=r["run_id"],
                seq=r["seq"],
                type=r["type"],
                ts=r["ts"],
                stage=r["stage"],
                data=json.loads(r["data_json"]),
            )
            for r in rows
        ]

    # --- checkpoint index ---------------------------------------------------------------------
    async def add_checkpoint(self, record: CheckpointRecord) -> bool:
        rowcount, _ = await self._write(
            "INSERT OR IGNORE INTO run_checkpoints (run_id, checkpoint_id, stage, title, created_at,"
            " next_json, summary, thread_id, checkpoint_ns, parent_checkpoint_id, fork_of)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.run_id,
                record.checkpoint_id,
                record.stage,
                record.title,
                record.created_at,
                dumps_json(record.next),
                record.summary,
                record.thread_id,
                record.checkpoint_ns,
                record.parent_checkpoint_id,
                record.fork_of,
            ),
        )
        return rowcount > 0

    async def list_checkpoints(self, run_id: str) -> list[CheckpointRecord]:
        rows = await self._fetch(
            "SELECT * FROM run_checkpoints WHERE run_id = ? ORDER BY created_at, checkpoint_id", (run_id,)
        )
        return [checkpoint_from_row(r) for r in rows]

    # --- receipts ------------------------------------------------------------------------------
    async def get_receipt(self, run_id: str, receipt_key: str, hash_: str) -> Receipt | None:
        rows = await self._fetch(
            "SELECT * FROM tool_receipts WHERE run_id = ? AND receipt_key = ? AND args_hash = ?",
            (run_id, receipt_key, hash_),
        )
        return receipt_from_row(rows[0]) if rows else None

    async def start_receipt(
        self, run_id: str, receipt_key: str, hash_: str, tool_name: str, stage: str | None, args: Any
    ) -> None:
        now = utcnow()
        # A succeeded receipt is never downgraded; a failed or stale started one is restarted.
        await self._write(
            "INSERT INTO tool_receipts (run_id, receipt_key, args_hash, tool_name, stage, status, args_json,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'started', ?, ?, ?)"
            " ON CONFLICT (run_id, receipt_key, args_hash) DO UPDATE SET status = 'started', error = NULL,"
            " updated_at = excluded.updated_at WHERE tool_receipts.status != 'succeeded'",
            (run_id, receipt_key, hash_, tool_name, stage, dumps_json(args), now, now),
        )

    async def finish_receipt(
        self, run_id: str, receipt_key: str, hash_: str, result: Any, tokens: int = 0, cost_usd: float = 0.0
    ) -> None:
        await self._write(
            "UPDATE tool_receipts SET status = 'succeeded', result_json = ?, tokens = ?, cost_usd = ?,"
            " error = NULL, updated_at = ? WHERE run_id = ? AND receipt_key = ? AND args_hash = ?",
            (dumps_json(result), tokens, cost_usd, utcnow(), run_id, receipt_key, hash_),
        )

    async def fail_receipt(self, run_id: str, receipt_key: str, hash_: str, error: str) -> None:
        await self._write(
            "UPDATE tool_receipts SET status = 'failed', error = ?, updated_at = ?"
            " WHERE run_id = ? AND receipt_key = ? AND args_hash = ? AND status != 'succeeded'",
            (error, utcnow(), run_id, receipt_key, hash_),
        )

    async def list_receipts(
        self, run_id: str, receipt_key: str | None = None, status: str | None = None
    ) -> list[Receipt]:
        sql = "SELECT * FROM tool_receipts WHERE run_id = ?"
        params: list[Any] = [run_id]
        if receipt_key:
            sql += " AND receipt_key = ?"
            params.append(receipt_key)
        if status:
            sql += " AND status = ?"
            params.append(status)
        sql += " ORDER BY created_at, args_hash"
        return [receipt_from_row(row) for row in await self._fetch(sql, params)]


def sqlite_path_from_url(url: str) -> Path:
    if not url.startswith("sqlite:///"):
        raise ValueError(f"not a sqlite URL: {url!r} (expected sqlite:///path/to/file.db)")
    return Path(url.removeprefix("sqlite:///"))


async def connect_sqlite(path: Path) -> aiosqlite.Connection:
    """A connection whose writes take the file's write lock up front (BEGIN IMMEDIATE): another process
    on the same file then makes it wait (busy_timeout) instead of failing a read-then-write transaction
    at once with "database is locked"."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(path, isolation_level="IMMEDIATE")
    await conn.execute("PRAGMA busy_timeout=10000")
    return conn


@asynccontextmanager
async def open_sqlite_store(path: Path) -> AsyncIterator[SqliteRunStore]:
    conn = await connect_sqlite(path)
    store = SqliteRunStore(conn)
    try:
        await store.setup()
        yield store
    finally:
        await conn.close()
