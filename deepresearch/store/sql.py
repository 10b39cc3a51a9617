"""The run store's SQL, written once for SQLite and PostgreSQL, and the store built on it.

Statements use ``?`` placeholders and the schema uses a few type words (``{bigint}``, ``{bool}``, ...);
a :class:`Dialect` turns both into its database's spelling. A backend supplies only its connections:
:meth:`SqlRunStore._transaction` (one transaction, with the statements it runs) and
:meth:`SqlRunStore._serialise` (the lock that orders writers of one run or of the schema across processes).
Every transaction boundary is here, so both backends commit exactly the same units of work.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from deepresearch.errors import RunNotFound
from deepresearch.store.base import (
    LOCAL_OWNER,
    ActiveRunsLimit,
    CheckpointRecord,
    EventRecord,
    LeaseLost,
    LLMCapability,
    Receipt,
    Row,
    RunChanged,
    RunRecord,
    dumps_json,
    new_run_id,
    record_from_row,
    thread_id_for,
    utcnow,
    utcnow_precise,
)
from deepresearch.store.core import Statements
from deepresearch.store.leases import LeaseSql
from deepresearch.store.migrations import MIGRATIONS
from deepresearch.store.savers import compaction_statements
from deepresearch.store.steering import ProtocolSql, SteeringSql
from deepresearch.store.texts import TextSql
from deepresearch.store.tokens import TokenSql

logger = logging.getLogger(__name__)


SCHEMA_LOCK = "deepresearch schema"
"""The key `_serialise` takes while migrating."""

MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS deepresearch_migrations "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

# update_run may set exactly these; the *_json columns take Python values
RUN_COLUMNS = frozenset(
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
        "attempts",
        "pending_input",
        "forked_from",
        "follow_up_of",
        "queued_at",
        "title",
        "resumes",
        "forks",
    }
)
_JSON_COLUMNS = frozenset({"usage", "options", "pending_input", "forked_from"})
RUN_TABLES = ("run_events", "run_checkpoints", "tool_receipts")

_CHECKPOINT_COLUMNS = (
    "run_id, checkpoint_id, stage, title, created_at, next_json, summary, thread_id, checkpoint_ns,"
    " parent_checkpoint_id, fork_of"
)


class SqlRunStore(TokenSql, LeaseSql, SteeringSql, ProtocolSql, TextSql):
    """The RunStore contract on SQL: the runs, their events, checkpoints and receipts; the other parts
    (tokens, leases, steering, texts) are the bases, all on one SqlCore. Subclasses provide
    `_transaction` and `_serialise`."""

    async def _fenced_write(
        self,
        run_id: str,
        fence: str | None,
        statement: str,
        params: Sequence[Any],
        *,
        updating_run: bool = False,
    ) -> tuple[int, list[Row]]:
        """One writing statement, in the same transaction as the check that `fence` (a lease owner)
        still holds the run's lease; None: unfenced (a command, not an execution). `updating_run`: the
        statement updates the run's own row."""
        return (await self.fenced_writes(run_id, fence, [(statement, params)], updating_run=updating_run))[0]

    async def fenced_writes(
        self,
        run_id: str,
        fence: str | None,
        statements: Sequence[tuple[str, Sequence[Any]]],
        *,
        updating_run: bool = False,
    ) -> list[tuple[int, list[Row]]]:
        """Writing statements in one transaction with the lease check (LeaseLost), in order. Also the way
        LangGraph's checkpoints reach SQLite (store/__init__.py): one commit, shared with other writers."""

        async def body(tx: Statements) -> list[tuple[int, list[Row]]]:
            await self._hold_lease(tx, run_id, fence, updating_run=updating_run)
            return [await tx.execute(statement, params) for statement, params in statements]

        return await self._atomic(body)

    async def compact_thread(
        self, run_id: str, thread_id: str, keep: Sequence[str], *, fence: str | None = None
    ) -> None:
        """Drop the LangGraph rows a completed run's thread no longer needs (savers.compaction_statements),
        keeping the checkpoints `keep` and the newest one."""
        await self.fenced_writes(run_id, fence, compaction_statements(self.dialect.name, thread_id, keep))

    async def check_lease(self, run_id: str, owner: str) -> None:
        """LeaseLost unless `owner` holds the run's lease now (before a write outside the database)."""
        rows = await self._read("SELECT lease_owner FROM runs WHERE run_id = ?", (run_id,))
        if not rows or rows[0]["lease_owner"] != owner:
            raise LeaseLost(run_id, owner)

    # --- schema --------------------------------------------------------------------------------
    async def setup(self) -> None:
        """Create or upgrade the schema. Idempotent, and safe when several processes run it at once: they
        queue on one lock and each sees the others' committed migrations."""
        await self._atomic(self._migrate)

    async def _migrate(self, tx: Statements) -> None:
        await self._serialise(tx, SCHEMA_LOCK)
        await tx.execute(MIGRATIONS_TABLE)
        _, rows = await tx.execute("SELECT version FROM deepresearch_migrations")
        applied = {row["version"] for row in rows}
        for version, name, statements in MIGRATIONS:
            if version in applied:
                continue
            for statement in statements:
                await tx.execute(self.dialect.ddl(statement))
            await tx.execute(
                "INSERT INTO deepresearch_migrations VALUES (?, ?, ?)",
                (version, name, utcnow()),
            )
            logger.info("applied store migration %s (%s) on %s", version, name, self.dialect.name)

    async def ping(self) -> None:
        await self._read("SELECT 1 AS one")

    async def size_bytes(self) -> int:
        """The whole database (runs, logs and LangGraph's checkpoints), in bytes."""
        return int((await self._read(self.dialect.size_sql))[0]["size"])

    # --- runs ----------------------------------------------------------------------------------
    async def create_run(
        self,
        question: str,
        options: dict[str, Any],
        engine: str,
        run_id: str | None = None,
        owner: str = LOCAL_OWNER,
        active_limit: int | None = None,
    ) -> RunRecord:
        """A new queued run. With `active_limit`, ActiveRunsLimit instead if `owner` has that many runs
        queued or running: the count and the insert are one transaction under a per-owner lock, so starts
        at once (on any replica) cannot all see the same count and all insert."""
        run_id = run_id or new_run_id()
        now = utcnow()

        async def body(tx: Statements) -> list[Row]:
            if active_limit is not None:
                await self._serialise(tx, f"owner:{owner}")
                _, counted = await tx.execute(_COUNT_ACTIVE, (owner,))
                if int(counted[0]["n"]) >= active_limit:
                    raise ActiveRunsLimit(owner, int(counted[0]["n"]))
            return (await tx.execute(_INSERT_RUN, (
                run_id, thread_id_for(run_id), question, dumps_json(options), engine, now, now, owner,
                utcnow_precise(),
            )))[1]  # fmt: skip

        rows = await self._atomic(body)
        return record_from_row(RunRecord, rows[0])

    async def get_run(self, run_id: str) -> RunRecord:
        rows = await self._read("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise RunNotFound(run_id)
        return record_from_row(RunRecord, rows[0])

    async def list_runs(
        self,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
        owner: str | None = None,
        search: str | None = None,
    ) -> list[RunRecord]:
        """Newest first; only `owner`'s runs when given; with `search`, only runs whose question or title
        contains it (any case)."""
        conditions: list[str] = []
        params: list[Any] = []
        for column, value in (("status", status), ("owner", owner)):
            if value is not None:
                conditions.append(f"{column} = ?")
                params.append(value)
        if search:
            pattern = "%" + re.sub(r"([\\%_])", r"\\\1", search.lower()) + "%"
            conditions.append(
                "(LOWER(question) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(title, '')) LIKE ? ESCAPE '\\')"
            )
            params += [pattern, pattern]
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        rows = await self._read(
            f"SELECT * FROM runs {where}ORDER BY created_at DESC, run_id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [record_from_row(RunRecord, row) for row in rows]

    async def count_active(self, owner: str) -> int:
        """Runs of `owner` queued or running (one statement: a run moving between the two counts once)."""
        rows = await self._read(_COUNT_ACTIVE, (owner,))
        return int(rows[0]["n"])

    async def finished_before(self, cutoff: str, limit: int = 1000) -> list[RunRecord]:
        """Runs that stopped before `cutoff` (ISO time), oldest first: not queued, running or waiting for
        input (a run waiting for a person is kept however long it waits)."""
        rows = await self._read(
            "SELECT * FROM runs WHERE status NOT IN ('queued', 'running', 'waiting_for_input')"
            " AND COALESCE(finished_at, updated_at) < ? ORDER BY created_at, run_id LIMIT ?",
            (cutoff, limit),
        )
        return [record_from_row(RunRecord, row) for row in rows]

    async def update_run(
        self, run_id: str, *, expect_version: int | None = None, fence: str | None = None, **fields: Any
    ) -> RunRecord:
        """Set these fields (and bump the run's version). With `expect_version`, only if nobody changed the
        run since it was read at that version: a compare-and-set, atomic across processes; RunChanged if
        somebody did. With `fence`, only while that lease owner holds the run (LeaseLost otherwise)."""
        unknown = set(fields) - RUN_COLUMNS
        if unknown:
            raise ValueError(f"cannot update run fields {sorted(unknown)}")
        assignments, params = [], []
        for name, value in fields.items():
            if name in _JSON_COLUMNS:
                name, value = f"{name}_json", dumps_json(value)
            elif name == "cancel_requested":
                value = bool(value)
            elif name in ("error", "title"):
                value = self.dialect.text(value)
            assignments.append(f"{name} = ?")
            params.append(value)
        condition, expected = (
            ("AND version = ? ", [expect_version]) if expect_version is not None else ("", [])
        )
        # column names come from RUN_COLUMNS, values are bound
        _, rows = await self._fenced_write(
            run_id,
            fence,
            f"UPDATE runs SET {', '.join(assignments)}, updated_at = ?, version = version + 1"
            f" WHERE run_id = ? {condition}RETURNING *",
            [*params, utcnow(), run_id, *expected],
            updating_run=True,
        )
        if not rows:
            if expect_version is not None and await self._read(
                "SELECT 1 AS one FROM runs WHERE run_id = ?", (run_id,)
            ):
                raise RunChanged(run_id)
            raise RunNotFound(run_id)
        return record_from_row(RunRecord, rows[0])

    async def request_cancel(self, run_id: str) -> RunRecord:
        return await self.update_run(run_id, cancel_requested=True)

    async def is_cancel_requested(self, run_id: str) -> bool:
        rows = await self._read("SELECT cancel_requested FROM runs WHERE run_id = ?", (run_id,))
        return bool(rows and rows[0]["cancel_requested"])

    async def delete_run(self, run_id: str) -> None:
        # One transaction: no reader (in any process) sees a run without its events, or orphans left behind.
        async def body(tx: Statements) -> None:
            count, _ = await tx.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            if count == 0:
                raise RunNotFound(run_id)
            for table in RUN_TABLES:
                await tx.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            await self.forget_run_texts(tx, run_id)

        await self._atomic(body)

    # --- events --------------------------------------------------------------------------------
    async def append_event(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any], *, fence: str | None = None
    ) -> EventRecord:
        ts = utcnow()

        async def body(tx: Statements) -> list[Row]:
            # Writers of one run (from any process) queue until the previous one commits, so the seq taken
            # inside the INSERT is never taken twice and the log has no gaps.
            await self._serialise(tx, run_id)
            await self._hold_lease(tx, run_id, fence)
            _, rows = await tx.execute(
                (
                    "INSERT INTO run_events (run_id, seq, type, stage, ts, data_json)"
                    " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM run_events WHERE run_id = ?"
                    " RETURNING seq"
                ),
                (run_id, type_, stage, ts, dumps_json(data), run_id),
            )
            await self._announce(tx, run_id, int(rows[0]["seq"]))
            return rows

        rows = await self._atomic(body)
        return EventRecord(run_id=run_id, seq=int(rows[0]["seq"]), type=type_, ts=ts, stage=stage, data=data)

    async def list_events(self, run_id: str, after: int = 0, limit: int = 10_000) -> list[EventRecord]:
        rows = await self._read(
            "SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, after, limit),
        )
        return [_current(record_from_row(EventRecord, row)) for row in rows]

    # --- checkpoint index ---------------------------------------------------------------------
    async def add_checkpoint(self, record: CheckpointRecord, *, fence: str | None = None) -> bool:
        count, _ = await self._fenced_write(
            record.run_id,
            fence,
            f"INSERT INTO run_checkpoints ({_CHECKPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
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
        return count > 0

    async def list_checkpoints(self, run_id: str) -> list[CheckpointRecord]:
        rows = await self._read(
            "SELECT * FROM run_checkpoints WHERE run_id = ? ORDER BY created_at, checkpoint_id", (run_id,)
        )
        return [record_from_row(CheckpointRecord, r) for r in rows]

    # --- receipts ------------------------------------------------------------------------------
    async def receipt_keys(self, run_id: str) -> set[tuple[str, str]]:
        """(receipt_key, args_hash) of every receipt of the run: which calls get_receipt can find."""
        rows = await self._read(
            "SELECT receipt_key, args_hash FROM tool_receipts WHERE run_id = ?", (run_id,)
        )
        return {(row["receipt_key"], row["args_hash"]) for row in rows}

    async def get_receipt(self, run_id: str, receipt_key: str, hash_: str) -> Receipt | None:
        rows = await self._read(
            "SELECT * FROM tool_receipts WHERE run_id = ? AND receipt_key = ? AND args_hash = ?",
            (run_id, receipt_key, hash_),
        )
        return record_from_row(Receipt, rows[0]) if rows else None

    async def start_receipt(
        self,
        run_id: str,
        receipt_key: str,
        hash_: str,
        tool_name: str,
        stage: str | None,
        args: Any,
        *,
        fence: str | None = None,
        texts: Mapping[str, str] | None = None,
        unless_cancelled: bool = False,
    ) -> None:
        """`texts`: args fields whose value is a text to store once (texts.py): the field gets its
        SHA-256, and the text is stored in the same transaction as the receipt. `unless_cancelled`:
        CancelRequested (nothing written) if the run's cancel was asked for, read in the same transaction."""
        now = utcnow()
        prepared = {field: await self._prepare_text(text) for field, text in (texts or {}).items()}
        if prepared:
            args = {**args, **{field: p[0] for field, p in prepared.items()}}

        async def body(tx: Statements) -> None:
            await self._hold_lease(tx, run_id, fence, unless_cancelled=unless_cancelled)
            for p in prepared.values():
                await self._store_text(tx, run_id, p)
            # A succeeded receipt is never downgraded; a failed or stale started one is restarted.
            await tx.execute(
                "INSERT INTO tool_receipts (run_id, receipt_key, args_hash, tool_name, stage, status,"
                " args_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'started', ?, ?, ?)"
                " ON CONFLICT (run_id, receipt_key, args_hash) DO UPDATE SET status = 'started',"
                " error = NULL, updated_at = excluded.updated_at WHERE tool_receipts.status <> 'succeeded'",
                (run_id, receipt_key, hash_, tool_name, stage, dumps_json(args), now, now),
            )

        await self._atomic(body)

    async def finish_receipt(
        self,
        run_id: str,
        receipt_key: str,
        hash_: str,
        result: Any,
        tokens: int = 0,
        cost_usd: float = 0.0,
        *,
        fence: str | None = None,
    ) -> None:
        await self._fenced_write(
            run_id,
            fence,
            "UPDATE tool_receipts SET status = 'succeeded', result_json = ?, tokens = ?, cost_usd = ?,"
            " error = NULL, updated_at = ? WHERE run_id = ? AND receipt_key = ? AND args_hash = ?",
            (dumps_json(result), tokens, cost_usd, utcnow(), run_id, receipt_key, hash_),
        )

    async def fail_receipt(
        self, run_id: str, receipt_key: str, hash_: str, error: str, *, fence: str | None = None
    ) -> None:
        await self._fenced_write(
            run_id,
            fence,
            "UPDATE tool_receipts SET status = 'failed', error = ?, updated_at = ?"
            " WHERE run_id = ? AND receipt_key = ? AND args_hash = ? AND status <> 'succeeded'",
            (self.dialect.text(error), utcnow(), run_id, receipt_key, hash_),
        )

    # --- what each model server supports ------------------------------------------------------
    async def get_llm_capability(self, endpoint: str, model: str) -> LLMCapability | None:
        rows = await self._read(
            "SELECT * FROM llm_capabilities WHERE endpoint = ? AND model = ?", (endpoint, model)
        )
        return record_from_row(LLMCapability, rows[0]) if rows else None

    async def put_llm_capability(self, capability: LLMCapability) -> None:
        await self._write(
            "INSERT INTO llm_capabilities (endpoint, model, mode, detail, checked_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (endpoint, model) DO UPDATE SET mode = excluded.mode, detail = excluded.detail,"
            " checked_at = excluded.checked_at",
            (
                capability.endpoint,
                capability.model,
                capability.mode,
                self.dialect.text(capability.detail),
                capability.checked_at,
            ),
        )

    async def list_receipts(
        self, run_id: str, receipt_key: str | None = None, status: str | None = None
    ) -> list[Receipt]:
        statement = "SELECT * FROM tool_receipts WHERE run_id = ?"
        params: list[Any] = [run_id]
        if receipt_key:
            statement += " AND receipt_key = ?"
            params.append(receipt_key)
        if status:
            statement += " AND status = ?"
            params.append(status)
        rows = await self._read(f"{statement} ORDER BY created_at, args_hash", params)
        return [record_from_row(Receipt, row) for row in rows]


_COUNT_ACTIVE = "SELECT COUNT(*) AS n FROM runs WHERE owner = ? AND status IN ('queued', 'running')"
_INSERT_RUN = (
    "INSERT INTO runs (run_id, thread_id, question, options_json, status, engine, created_at, updated_at,"
    " owner, queued_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING *"
)


def _current(event: EventRecord) -> EventRecord:
    """Logs written before graph_checkpoint existed called LangGraph's own checkpoints `checkpoint` with
    `indexed: false`; replayed, they keep the contract that a `checkpoint` is a business safety point."""
    if event.type == "checkpoint" and event.data.get("indexed") is False:
        event.type = "graph_checkpoint"
        event.data = {k: v for k, v in event.data.items() if k not in ("indexed", "resumable")}
    return event
