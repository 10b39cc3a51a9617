"""The Agent Protocol's runs that wait: `multitask_strategy: enqueue` (a run that starts when its thread's
research stops) and a stateless run's `on_completion: delete` (its thread goes when it ends). Held by
lifecycle.Protocol as `queue`, which it asks back for a run's status, a wait and the next research step.

An enqueued run is in the database with after_seq WAITING; whoever first sees the research stopped - the
accepting process's waiter, or any replica's stream, join or read of the run - claims it (a compare-and-set
to STARTING) and starts it. Only the waiters are in process memory."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any, Protocol

from deepresearch.api.agent_protocol.models import AgentRunCreate, RunStatus
from deepresearch.errors import InvalidInput, NotFound, RunConflict, RunNotFound
from deepresearch.service.runs import RunService
from deepresearch.store import ACTIVE_STATUSES, RunRecord
from deepresearch.store.steering import ProtocolRun, ProtocolSql, ProtocolThread

TERMINAL: frozenset[str] = frozenset({"success", "error", "timeout", "interrupted"})
QUEUE_SECONDS = 6 * 3600.0
"""How long an enqueued run, or a stateless run to delete on completion, is waited for here."""
WAITING, NEVER_RAN, STARTING = -1, -2, -3
"""An enqueued run's after_seq until it starts; if it ends without running; while it is being started."""
logger = logging.getLogger(__name__)
_background: set[asyncio.Task[None]] = set()  # referenced until done: the loop holds tasks weakly


def spawn(work: Coroutine[Any, Any, None], name: str) -> None:
    task = asyncio.create_task(work, name=name)
    _background.add(task)
    task.add_done_callback(_background.discard)


class Commands(Protocol):
    """What the waiting runs ask of the thread's commands (lifecycle.Protocol)."""

    async def status(self, run: ProtocolRun) -> RunStatus:
        """How the run's execution ended, else how its research stands now."""
        ...

    async def delete_thread(self, thread: ProtocolThread) -> None:
        """The thread with every research it had."""
        ...

    async def stopped(self, research_id: str) -> RunRecord:
        """The research once it is not executing."""
        ...

    async def advance(
        self, thread_id: str, research: RunRecord, body: AgentRunCreate
    ) -> tuple[RunRecord, int]:
        """Continue the research, answer it, or ask it a follow-up: the research that runs, and the seq its
        events start after."""
        ...


class WaitingRuns:
    """The protocol's runs that wait, for one principal's commands (`host`)."""

    def __init__(self, service: RunService, store: ProtocolSql, host: Commands) -> None:
        self.service = service
        self.store = store
        self.host = host

    async def wait_and_start(self, run: ProtocolRun) -> None:
        """An enqueued run: started here when the research stops (a stream or a read may start it first,
        on any replica)."""
        try:
            await self.started(run)
        except Exception:
            logger.exception("the enqueued protocol run %s could not start", run.run_id)

    async def started(self, run: ProtocolRun) -> ProtocolRun:
        """The run once it has started (or ended, or gone): an enqueued one starts when the runs enqueued
        before it on its thread have started and the thread's research has stopped (first in, first out)."""
        deadline = time.monotonic() + QUEUE_SECONDS
        while run.after_seq in (WAITING, STARTING) and time.monotonic() < deadline:
            research = await self._turn(run)
            if research is not None:
                await self._start_queued(run, research)
            else:
                await asyncio.sleep(0.2)
            found = await self.store.get_protocol_run(run.run_id)
            if found is None:
                break
            run = found
        return run

    async def _turn(self, run: ProtocolRun) -> RunRecord | None:
        """The thread's research, if it is this waiting run's turn to continue it."""
        if run.after_seq != WAITING:
            return None
        for other in await self.store.list_protocol_runs(run.thread_id):
            ahead = (other.created_at, other.run_id) < (run.created_at, run.run_id)
            if ahead and other.after_seq in (WAITING, STARTING):
                return None
        thread = await self.store.get_protocol_thread(run.thread_id)
        if thread is None or thread.research_id is None:
            return None
        try:
            research = await self.service.views.record(thread.research_id)
        except RunNotFound:  # deleted through /api meanwhile: nothing to continue
            await self.store.set_protocol_run_status(run.run_id, "error", NEVER_RAN)
            return None
        if research.status in ACTIVE_STATUSES or self.service.is_active_here(research.run_id):
            return None
        return research

    async def _start_queued(self, run: ProtocolRun, research: RunRecord) -> None:
        if not await self.store.start_protocol_run(run.run_id, STARTING, "pending"):
            return  # another request started it (or cancelled it) first
        kwargs = run.kwargs
        body = AgentRunCreate(
            assistant_id=run.assistant_id,
            input=kwargs.get("input"),
            command=kwargs.get("command"),
            checkpoint_id=kwargs.get("checkpoint_id"),
        )
        try:
            moved, after_seq = await self.host.advance(run.thread_id, research, body)
            await self.store.place_protocol_run(run.run_id, moved.run_id, after_seq)
        except (RunConflict, InvalidInput, NotFound) as exc:
            # e.g. a continuation of a research that completed meanwhile: this run ends without running
            logger.info("enqueued protocol run %s did not start: %s", run.run_id, exc)
            await self.store.set_protocol_run_status(run.run_id, "error", NEVER_RAN)

    async def delete_when_done(self, run: ProtocolRun) -> None:
        """on_completion: delete - the thread goes once the run has ended (a stateless run's)."""

        async def wait_then_delete() -> None:
            deadline = time.monotonic() + QUEUE_SECONDS
            while time.monotonic() < deadline:
                if await self.host.status(run) in TERMINAL:
                    break
                await asyncio.sleep(0.2)
            thread = await self.store.get_protocol_thread(run.thread_id)
            try:
                if thread is not None:
                    # its `end` is logged a moment before the record says it stopped (and the task exits)
                    await self.host.stopped(run.research_id)
                    await self.host.delete_thread(thread)
            except Exception:
                logger.exception("thread %s could not be deleted after its run", run.thread_id)

        spawn(wait_then_delete(), f"protocol-delete-{run.thread_id}")
