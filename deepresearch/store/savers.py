"""LangGraph's savers as the run store uses them: fenced (a process that lost a run's lease adds nothing to
its thread) and, on SQLite, committed together with the store's own writes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import RunnableConfig

from deepresearch.store.base import RunStore
from deepresearch.store.vendored import put_checkpoint, put_writes

__all__ = ["CheckpointFences", "FencedSaver", "FencedSqliteSaver", "compaction_statements"]

# a thread's newest checkpoint (ids sort by time: both savers read the latest with ORDER BY it DESC)
_LATEST = "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '')"


def compaction_statements(
    dialect: str, thread_id: str, keep: Sequence[str]
) -> list[tuple[str, Sequence[Any]]]:
    """What a completed run's thread no longer needs, as statements for one transaction.

    Resuming mid-way needs the pending writes of the latest checkpoint and the checkpoints of a subgraph
    still running; a completed run has neither. Forks and "continue from here" read the business
    checkpoints' values (`keep`, the run's checkpoint index), time travel re-runs a step's branches rather
    than reading its old writes, and the newest checkpoint holds the final state. Everything else - every
    task's writes, the subgraphs' checkpoints, the steps between business stages - is dropped (~60% of a
    default run's bytes).

    Written against LangGraph's own tables (not a public API): store/vendored.py pins their schemas."""
    # no business checkpoint indexed: NOT IN (NULL) is never true, so every root checkpoint stays
    marks = ", ".join("?" for _ in keep) or "NULL"
    writes = "writes" if dialect == "sqlite" else "checkpoint_writes"
    statements: list[tuple[str, Sequence[Any]]] = [
        (f"DELETE FROM {writes} WHERE thread_id = ?", (thread_id,)),
        (
            "DELETE FROM checkpoints WHERE thread_id = ? AND (checkpoint_ns <> ''"
            f" OR (checkpoint_id NOT IN ({marks}) AND checkpoint_id <> {_LATEST}))",
            (thread_id, *keep, thread_id),
        ),
    ]
    if dialect == "postgres":
        # channel values are rows of their own there, shared by the checkpoints that saw that version
        statements.append(
            (
                "DELETE FROM checkpoint_blobs b WHERE b.thread_id = ? AND NOT EXISTS (SELECT 1 FROM"
                " checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns"
                " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
                (thread_id,),
            )
        )
    return statements


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

    def _lease(self, thread_id: object) -> tuple[str, str] | None:
        return self._held.get(str(thread_id)) if thread_id else None

    async def write(self, thread_id: object, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """The statements in one of the store's transactions, with the thread's lease held in it."""
        run_id, owner = self._lease(thread_id) or ("", None)
        await self.store.fenced_writes(run_id, owner, statements)

    async def check(self, config: Any) -> None:
        # the same lookup as `write` (a thread id that is not a str finds its lease too)
        held = self._lease((config or {}).get("configurable", {}).get("thread_id"))
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


class FencedSqliteSaver(ShieldedSqliteSaver):
    """SQLite: a checkpoint or a task's writes are one more write transaction of the run store, so they
    join its group commit (one fsync with the events and receipts committed at the same moment) and the
    lease is checked in that same transaction, not by a read before it. The writes are AsyncSqliteSaver's
    own statements (copied, pinned: store/vendored.py); reads stay LangGraph's own."""

    fences: CheckpointFences

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        statement, stored = put_checkpoint(self.serde, config, checkpoint, metadata, new_versions)
        await self.fences.write(config["configurable"]["thread_id"], [statement])
        return stored

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        statements = put_writes(self.serde, config, writes, task_id, task_path)
        await self.fences.write(config["configurable"]["thread_id"], statements)
