"""PostgreSQL run store: the same contract and tables as the SQLite store, shared by several replicas."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, LiteralString

from psycopg import sql
from psycopg.abc import Query
from psycopg.rows import DictRow

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
from .pg_connection import (
    Pool,
    open_postgres_pool,
)

logger = logging.getLogger(__name__)

# Advisory lock keys. The single-bigint and the two-int key spaces never overlap, so the per-run event
# locks (class, hashtext(run_id)) cannot collide with the setup locks.
MIGRATION_LOCK_KEY = 0x64725F6D6967  # "dr_mig"
CHECKPOINTER_SETUP_LOCK_KEY = 0x64725F636B70  # "dr_ckp"
_EVENT_LOCK_CLASS = 0x64725F65  # "dr_e"

# Ordered, append-only: a released migration is never edited; add a new one instead.
# Payloads are TEXT holding the exact JSON the SQLite store writes, not JSONB: JSONB reorders keys and
# rejects NaN and \u0000 (scraped pages contain both), and both backends must return identical records.
# Timestamps are the same ISO-8601 strings for the same reason; COLLATE "C" makes ORDER BY match SQLite's
# byte order whatever the database locale is.
# Each migration is a list of statements: the extended query protocol runs one statement per execute.
MIGRATIONS: tuple[tuple[int, str, tuple[LiteralString, ...]], ...] = (
    (
        1,
        "runs, events, checkpoint index, receipts",
        (
            """
            CREATE TABLE IF NOT EXISTS runs (
                run_id TEXT COLLATE "C" PRIMARY KEY,
                thread_id TEXT NOT NULL UNIQUE,
                question TEXT NOT NULL,
                options_json TEXT NOT NULL,
                status TEXT NOT NULL,
                engine TEXT NOT NULL,
                current_stage TEXT,
                error TEXT,
                artifact_dir TEXT,
                cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
                usage_json TEXT NOT NULL DEFAULT '{}',
                created_at TEXT COLLATE "C" NOT NULL,
                updated_at TEXT NOT NULL,
                started_at TEXT,
                finished_at TEXT
            )
            """,
            "CREATE INDEX IF NOT EXISTS runs_status_created ON runs (status, created_at)",
            "CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at)",
            """
            CREATE TABLE IF NOT EXISTS run_events (
                run_id TEXT COLLATE "C" NOT NULL,
                seq BIGINT NOT NULL,
                type TEXT NOT NULL,
                stage TEXT,
                ts TEXT NOT NULL,
                data_json TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS run_checkpoints (
                run_id TEXT COLLATE "C" NOT NULL,
                checkpoint_id TEXT COLLATE "C" NOT NULL,
                stage TEXT NOT NULL,
                title TEXT NOT NULL,
                created_at TEXT COLLATE "C" NOT NULL,
                next_json TEXT NOT NULL,
                summary TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                fork_of TEXT,
                PRIMARY KEY (run_id, checkpoint_id)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS tool_receipts (
                run_id TEXT COLLATE "C" NOT NULL,
                receipt_key TEXT COLLATE "C" NOT NULL,
                args_hash TEXT COLLATE "C" NOT NULL,
                tool_name TEXT NOT NULL,
                stage TEXT,
                status TEXT NOT NULL,
                args_json TEXT NOT NULL,
                result_json TEXT,
                error TEXT,
                tokens BIGINT NOT NULL DEFAULT 0,
                cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
                created_at TEXT COLLATE "C" NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (run_id, receipt_key, args_hash)
            )
            """,
            "CREATE INDEX IF NOT EXISTS receipts_status ON tool_receipts (run_id, receipt_key, status)",
        ),
    ),
)

# update_run may set exactly what the SQLite store allows
_RUN_COLUMNS = frozenset(
    {
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
)


# --- row mapping ---------------------------------------------------------------------------------


def _pg_text(value: str | None) -> str | None:
    # TEXT cannot hold NUL (SQLite can): an exception message quoting a scraped page must not turn
    # recording a failure into a second failure.
    return value.replace("\x00", "\ufffd") if value else value


class PostgresRunStore:
    """RunStore on a psycopg connection pool (autocommit, dict rows); safe across processes."""

    def __init__(self, pool: Pool, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool

    @property
    def pool(self) -> Pool:
        return self._pool

    async def _fetch(self, query: Query, params: Sequence[Any] = ()) -> list[DictRow]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(query, params)
            return await cur.fetchall() if cur.description else []

    async def _write(self, query: Query, params: Sequence[Any] = ()) -> int:
        async with self._pool.connection() as conn:
            cur = await conn.execute(query, params)
            return cur.rowcount

    async def setup(self) -> None:
        """Create or upgrade the schema. Idempotent, and safe when several processes run it at once:
        the transaction-level advisory lock serialises them and each sees the others' committed work."""
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS deepresearch_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            cur = await conn.execute("SELECT version FROM deepresearch_migrations")
            applied = {row["version"] for row in await cur.fetchall()}
            for version, name, statements in MIGRATIONS:
                if version in applied:
                    continue
                for statement in statements:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO deepresearch_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                    (version, name, utcnow()),
                )
                logger.info("applied store migration %s (%s)", version, name)

    async def aclose(self) -> None:
        if self._owns_pool:
            await self._pool.close()

    async def ping(self) -> None:
        await self._fetch("SELECT 1")

    # --- runs ----------------------------------------------------------------------------------
    async def create_run(
        self, question: str, options: dict[str, Any], engine: str, run_id: str | None = None
    ) -> RunRecord:
        run_id = run_id or new_run_id()
        now = utcnow()
        rows = await self._fetch(
            "INSERT INTO runs (run_id, thread_id, question, options_json, status, engine, created_at,"
            " updated_at) VALUES (%s, %s, %s, %s, 'queued', %s, %s, %s) RETURNING *",
            (run_id, thread_id_for(run_id), question, dumps_json(options), engine, now, now),
        )
        return run_from_row(rows[0])

    async def get_run(self, run_id: str) -> RunRecord:
        rows = await self._fetch("SELECT * FROM runs WHERE run_id = %s", (run_id,))
        if not rows:
            raise RunNotFound(run_id)
        return run_from_row(rows[0])

    async def list_runs(self, status: str | None = None, limit: int = 50, offset: int = 0) -> list[RunRecord]:
        query = "SELECT * FROM runs"
        params: list[Any] = []
        if status:
            query += " WHERE status = %s"
            params.append(status)
        query += " ORDER BY created_at DESC, run_id LIMIT %s OFFSET %s"
        params += [limit, offset]
        return [run_from_row(row) for row in await self._fetch(query, params)]

    async def update_run(self, run_id: str, **fields: Any) -> RunRecord:
        unknown = set(fields) - _RUN_COLUMNS
        if unknown:
            raise ValueError(f"cannot update run fields {sorted(unknown)}")
        assignments: list[sql.Composable] = []
        params: list[Any] = []
        for name, value in fields.items():
            if name in ("usage", "options"):
                column, value = f"{name}_json", dumps_json(value)
            elif name == "cancel_requested":
                column, value = name, bool(value)
            elif name == "error":
                column, value = name, _pg_text(value)
            else:
                column = name
            assignments.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
            params.append(value)
        assignments.append(sql.SQL("updated_at = %s"))
        params += [utcnow(), run_id]
        query = sql.SQL("UPDATE runs SET {} WHERE run_id = %s RETURNING *").format(
            sql.SQL(", ").join(assignments)
        )
        rows = await self._fetch(query, params)
        if not rows:
            raise RunNotFound(run_id)
        return run_from_row(rows[0])

    async def request_cancel(self, run_id: str) -> RunRecord:
        return await self.update_run(run_id, cancel_requested=True)

    async def is_cancel_requested(self, run_id: str) -> bool:
        rows = await self._fetch("SELECT cancel_requested FROM runs WHERE run_id = %s", (run_id,))
        return bool(rows and rows[0]["cancel_requested"])

    async def delete_run(self, run_id: str) -> None:
        # One transaction: another replica never sees a run without its events, or orphans left behind.
        async with self._pool.connection() as conn, conn.transaction():
            cur = await conn.execute("DELETE FROM runs WHERE run_id = %s", (run_id,))
            if cur.rowcount == 0:
                raise RunNotFound(run_id)
            for table in ("run_events", "run_checkpoints", "tool_receipts"):
                await conn.execute(
                    sql.SQL("DELETE FROM {} WHERE run_id = %s").format(sql.Identifier(table)), (run_id,)
                )

    # --- events --------------------------------------------------------------------------------
    async def append_event(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any]
    ) -> EventRecord:
        ts = utcnow()
        async with self._pool.connection() as conn, conn.transaction():
            # Writers of one run (from any process) queue on this lock until the previous one commits;
            # READ COMMITTED gives the INSERT a fresh snapshot after the wait, so MAX(seq) includes it.
            await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_EVENT_LOCK_CLASS, run_id))
            cur = await conn.execute(
                "INSERT INTO run_events (run_id, seq, type, stage, ts, data_json)"
                " SELECT %s, COALESCE(MAX(seq), 0) + 1, %s, %s, %s, %s FROM run_events WHERE run_id = %s"
                " RETURNING seq",
                (run_id, type_, stage, ts, dumps_json(data), run_id),
            )
            row = await cur.fetchone()
        assert row is not None  # INSERT ... SELECT over an aggregate always yields one row
        return EventRecord(run_id=run_id, seq=int(row["seq"]), type=type_, ts=ts, stage=stage, data=data)

    async def list_events(self, run_id: str, after: int = 0, limit: int = 10_000) -> list[EventRecord]:
        rows = await self._fetch(
            "SELECT * FROM run_events WHERE run_id = %s AND seq > %s ORDER BY seq LIMIT %s",
            (run_id, after, limit),
        )
        return [
            EventRecord(
                run_id=r["run_id"],
                seq=int(r["seq"]),
                type=r["type"],
                ts=r["ts"],
                stage=r["stage"],
                data=json.loads(r["data_json"]),
            )
            for r in rows
        ]

    # --- checkpoint index ---------------------------------------------------------------------
    async def add_checkpoint(self, record: CheckpointRecord) -> bool:
        rowcount = await self._write(
            "INSERT INTO run_checkpoints (run_id, checkpoint_id, stage, title, created_at, next_json,"
            " summary, thread_id, checkpoint_ns, parent_checkpoint_id, fork_of)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
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
            "SELECT * FROM run_checkpoints WHERE run_id = %s ORDER BY created_at, checkpoint_id", (run_id,)
        )
        return [checkpoint_from_row(r) for r in rows]

    # --- receipts ------------------------------------------------------------------------------
    async def get_receipt(self, run_id: str, receipt_key: str, hash_: str) -> Receipt | None:
        rows = await self._fetch(
            "SELECT * FROM tool_receipts WHERE run_id = %s AND receipt_key = %s AND args_hash = %s",
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
            " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, 'started', %s, %s, %s)"
            " ON CONFLICT (run_id, receipt_key, args_hash) DO UPDATE SET status = 'started', error = NULL,"
            " updated_at = EXCLUDED.updated_at WHERE tool_receipts.status <> 'succeeded'",
            (run_id, receipt_key, hash_, tool_name, stage, dumps_json(args), now, now),
        )

    async def finish_receipt(
        self, run_id: str, receipt_key: str, hash_: str, result: Any, tokens: int = 0, cost_usd: float = 0.0
    ) -> None:
        await self._write(
            "UPDATE tool_receipts SET status = 'succeeded', result_json = %s, tokens = %s, cost_usd = %s,"
            " error = NULL, updated_at = %s WHERE run_id = %s AND receipt_key = %s AND args_hash = %s",
            (dumps_json(result), tokens, cost_usd, utcnow(), run_id, receipt_key, hash_),
        )

    async def fail_receipt(self, run_id: str, receipt_key: str, hash_: str, error: str) -> None:
        await self._write(
            "UPDATE tool_receipts SET status = 'failed', error = %s, updated_at = %s"
            " WHERE run_id = %s AND receipt_key = %s AND args_hash = %s AND status <> 'succeeded'",
            (_pg_text(error), utcnow(), run_id, receipt_key, hash_),
        )

    async def list_receipts(
        self, run_id: str, receipt_key: str | None = None, status: str | None = None
    ) -> list[Receipt]:
        query = "SELECT * FROM tool_receipts WHERE run_id = %s"
        params: list[Any] = [run_id]
        if receipt_key:
            query += " AND receipt_key = %s"
            params.append(receipt_key)
        if status:
            query += " AND status = %s"
            params.append(status)
        query += " ORDER BY created_at, args_hash"
        return [receipt_from_row(row) for row in await self._fetch(query, params)]


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
