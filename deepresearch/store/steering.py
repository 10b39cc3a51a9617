"""Steering's SQL (a part of SqlRunStore): receipts a fork or a follow-up takes over from the run it came
from, the counts /metrics reads (docs/steering.md), and the Agent Protocol's threads and runs
(docs/agent-protocol.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deepresearch.store.base import Row, dumps_json, utcnow
from deepresearch.store.core import SqlCore


class SteeringSql(SqlCore):
    async def copy_receipts(self, from_run: str, to_run: str, tools: Sequence[str]) -> int:
        """Copy `from_run`'s succeeded receipts of the `tools` to `to_run` (one statement): the same call
        with the same arguments is then answered from the recorded result. Returns how many. Which tools a
        new run may reuse is the tools' business (deepresearch/receipts/specs.py, REUSABLE_TOOLS)."""
        if not tools:
            return 0
        marks = ", ".join("?" for _ in tools)
        now = utcnow()

        async def body(tx: Any) -> int:
            count, _ = await tx.execute(
                "INSERT INTO tool_receipts (run_id, receipt_key, args_hash, tool_name, stage, status,"
                " args_json, result_json, error, tokens, cost_usd, created_at, updated_at)"
                " SELECT ?, receipt_key, args_hash, tool_name, stage, status, args_json, result_json, error,"
                " tokens, cost_usd, ?, ? FROM tool_receipts"
                f" WHERE run_id = ? AND status = 'succeeded' AND tool_name IN ({marks})"
                " ON CONFLICT DO NOTHING",
                (to_run, now, now, from_run, *tools),
            )
            # the copied receipts and the copied state refer to the original's texts by hash: the new
            # run uses them too, so deleting the original must keep them (store/texts.py)
            await tx.execute(
                "INSERT INTO run_texts (run_id, sha256) SELECT ?, sha256 FROM run_texts WHERE run_id = ?"
                " ON CONFLICT DO NOTHING",
                (to_run, from_run),
            )
            return int(count)

        return int(await self._atomic(body))

    async def count_runs_by_status(self) -> dict[str, int]:
        rows = await self._read("SELECT status, COUNT(*) AS n FROM runs GROUP BY status")
        return {str(row["status"]): int(row["n"]) for row in rows}

    async def receipt_totals(self) -> list[Row]:
        """Per tool: succeeded receipts, and the tokens and cost they recorded (all runs)."""
        return await self._read(
            "SELECT tool_name, COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS tokens,"
            " COALESCE(SUM(cost_usd), 0) AS cost FROM tool_receipts WHERE status = 'succeeded'"
            " GROUP BY tool_name"
        )


# --- the Agent Protocol's threads and runs (deepresearch/api/agent_protocol/, migration 12) -----------------
@dataclass(slots=True)
class ProtocolThread:
    thread_id: str
    owner: str
    metadata: dict[str, Any]
    research_id: str | None
    created_at: str
    updated_at: str


@dataclass(slots=True)
class ProtocolRun:
    run_id: str
    thread_id: str
    research_id: str
    assistant_id: str
    status: str
    metadata: dict[str, Any]
    kwargs: dict[str, Any]
    multitask_strategy: str
    after_seq: int
    """The research's events after this seq are this run's (its execution starts after it); -1: an
    enqueued run that has not started yet; -2: one that ended without running; -3: being started."""
    created_at: str
    updated_at: str


def _thread(row: Row) -> ProtocolThread:
    return ProtocolThread(
        thread_id=row["thread_id"],
        owner=row["owner"],
        metadata=json.loads(row["metadata_json"]),
        research_id=row["research_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _run(row: Row) -> ProtocolRun:
    return ProtocolRun(
        run_id=row["run_id"],
        thread_id=row["thread_id"],
        research_id=row["research_id"],
        assistant_id=row["assistant_id"],
        status=row["status"],
        metadata=json.loads(row["metadata_json"]),
        kwargs=json.loads(row["kwargs_json"]),
        multitask_strategy=row["multitask_strategy"],
        after_seq=int(row["after_seq"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class ProtocolSql(SqlCore):
    """The Agent Protocol's bookkeeping; the research is an ordinary run (runs, events, checkpoints)."""

    async def add_protocol_thread(self, thread_id: str, owner: str, metadata: dict[str, Any]) -> bool:
        """False when the id is taken (by anyone: ids are not reused across users)."""
        now = utcnow()
        count, _ = await self._write(
            "INSERT INTO protocol_threads (thread_id, owner, metadata_json, research_id, created_at,"
            " updated_at) VALUES (?, ?, ?, NULL, ?, ?) ON CONFLICT DO NOTHING",
            (thread_id, owner, dumps_json(metadata), now, now),
        )
        return bool(count)

    async def get_protocol_thread(self, thread_id: str) -> ProtocolThread | None:
        rows = await self._read("SELECT * FROM protocol_threads WHERE thread_id = ?", (thread_id,))
        return _thread(rows[0]) if rows else None

    async def list_protocol_threads(self, owner: str | None) -> list[ProtocolThread]:
        """Newest first; `owner` None: everyone's (an admin)."""
        if owner is None:
            rows = await self._read("SELECT * FROM protocol_threads ORDER BY created_at DESC, thread_id")
        else:
            rows = await self._read(
                "SELECT * FROM protocol_threads WHERE owner = ? ORDER BY created_at DESC, thread_id", (owner,)
            )
        return [_thread(row) for row in rows]

    async def update_protocol_thread(
        self,
        thread_id: str,
        *,
        metadata: dict[str, Any] | None = None,
        research_id: str | None = None,
        replacing: str | None = None,
    ) -> None:
        """`research_id` is set if the thread has none, or `replacing` (a research deleted since)."""
        if metadata is not None:
            await self._write(
                "UPDATE protocol_threads SET metadata_json = ?, updated_at = ? WHERE thread_id = ?",
                (dumps_json(metadata), utcnow(), thread_id),
            )
        if research_id is not None:
            # set once: of two first runs racing on a new thread, one research wins
            await self._write(
                "UPDATE protocol_threads SET research_id = ?, updated_at = ? WHERE thread_id = ?"
                " AND (research_id IS NULL OR research_id = ?)",
                (research_id, utcnow(), thread_id, replacing or ""),
            )

    async def delete_protocol_thread(self, thread_id: str) -> None:
        async def body(tx: Any) -> None:
            await tx.execute("DELETE FROM protocol_runs WHERE thread_id = ?", (thread_id,))
            await tx.execute("DELETE FROM protocol_threads WHERE thread_id = ?", (thread_id,))

        await self._atomic(body)

    async def add_protocol_run(self, run: ProtocolRun) -> None:
        await self._write(
            "INSERT INTO protocol_runs (run_id, thread_id, research_id, assistant_id, status, metadata_json,"
            " kwargs_json, multitask_strategy, after_seq, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.thread_id,
                run.research_id,
                run.assistant_id,
                run.status,
                dumps_json(run.metadata),
                dumps_json(run.kwargs),
                run.multitask_strategy,
                run.after_seq,
                run.created_at,
                run.updated_at,
            ),
        )

    async def get_protocol_run(self, run_id: str) -> ProtocolRun | None:
        rows = await self._read("SELECT * FROM protocol_runs WHERE run_id = ?", (run_id,))
        return _run(rows[0]) if rows else None

    async def list_protocol_runs(self, thread_id: str) -> list[ProtocolRun]:
        """Newest first."""
        rows = await self._read(
            "SELECT * FROM protocol_runs WHERE thread_id = ? ORDER BY created_at DESC, run_id", (thread_id,)
        )
        return [_run(row) for row in rows]

    async def set_protocol_run_status(self, run_id: str, status: str, after_seq: int | None = None) -> None:
        if after_seq is not None:
            await self._write(
                "UPDATE protocol_runs SET status = ?, after_seq = ?, updated_at = ? WHERE run_id = ?",
                (status, after_seq, utcnow(), run_id),
            )
            return
        await self._write(
            "UPDATE protocol_runs SET status = ?, updated_at = ? WHERE run_id = ?", (status, utcnow(), run_id)
        )

    async def start_protocol_run(self, run_id: str, after_seq: int, status: str) -> bool:
        """An enqueued run (after_seq -1: waiting) starts after `after_seq`, or ends without running
        (after_seq -2, `status` terminal): once. False when another request started or ended it."""
        count, _ = await self._write(
            "UPDATE protocol_runs SET after_seq = ?, status = ?, updated_at = ? WHERE run_id = ?"
            " AND after_seq = -1",
            (after_seq, status, utcnow(), run_id),
        )
        return bool(count)

    async def place_protocol_run(self, run_id: str, research_id: str, after_seq: int) -> None:
        """Where a started enqueued run's events are: the research it runs (a follow-up's, maybe)."""
        await self._write(
            "UPDATE protocol_runs SET research_id = ?, after_seq = ?, updated_at = ? WHERE run_id = ?",
            (research_id, after_seq, utcnow(), run_id),
        )

    async def delete_protocol_run(self, run_id: str) -> None:
        await self._write("DELETE FROM protocol_runs WHERE run_id = ?", (run_id,))

    async def last_event_seq(self, run_id: str) -> int:
        """The seq of the run's latest event (0: none yet)."""
        rows = await self._read(
            "SELECT COALESCE(MAX(seq), 0) AS seq FROM run_events WHERE run_id = ?", (run_id,)
        )
        return int(rows[0]["seq"])

    async def end_after(self, run_id: str, after_seq: int) -> dict[str, Any] | None:
        """The data of the run's first `end` event after `after_seq`: how that execution ended."""
        rows = await self._read(
            "SELECT data_json FROM run_events WHERE run_id = ? AND seq > ? AND type = 'end'"
            " ORDER BY seq LIMIT 1",
            (run_id, after_seq),
        )
        return dict(json.loads(rows[0]["data_json"])) if rows else None
