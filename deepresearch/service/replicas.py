"""What one runner process does among several on one database: leases, takeover of orphaned runs,
cancels asked on other replicas, and the process's own run slots (FIFO queue) and command turns.

RunService holds one (`RunService.replicas`): the service decides what may happen to a run; this module
decides which process does it, and asks the service (its `Executor`) to execute, log and stop. The failure
model is in docs/durability.md ("Several runners").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from config import Settings
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import DATABASE_ERRORS, LeaseLost, RunRecord, RunStore, utcnow, utcnow_precise

logger = logging.getLogger(__name__)

TAKEOVER_STATUSES = ("queued", "running")
RECOVERY_STATUSES = ("running", "queued", "interrupted")


@dataclass(slots=True)
class Active:
    """A run this process has launched: waiting for a slot (not started) or executing."""

    task: asyncio.Task[RunRecord]
    cancel: CancelSignal
    started: bool = False
    cancel_seen: bool = False
    """A cancel asked on any replica has reached this execution (announced once)."""


class RunSlots:
    """At most `limit` runs execute in this process at once; the others wait their turn, first in, first
    out. A waiter cancelled while it waits (the run was cancelled or the process stops) leaves the line;
    one cancelled just as it was handed a slot passes the slot on."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._busy = 0
        self._line: deque[asyncio.Future[None]] = deque()

    @property
    def free(self) -> int:
        return max(0, self.limit - self._busy - len(self._line))

    @property
    def waiting(self) -> int:
        return len(self._line)

    def enter(self) -> asyncio.Future[None] | None:
        """Take a slot now (None), or a place at the end of the line: the turn to `wait` for. Synchronous,
        so runs launched one after the other keep their order."""
        if self._busy < self.limit and not self._line:
            self._busy += 1
            return None
        turn = asyncio.get_running_loop().create_future()
        self._line.append(turn)
        return turn

    async def wait(self, turn: asyncio.Future[None]) -> None:
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # handed a slot at the moment it was cancelled: the next in line gets it
            else:
                self._line.remove(turn)
            raise

    def release(self) -> None:
        while self._line:
            turn = self._line.popleft()
            if not turn.done():
                turn.set_result(None)  # the slot goes straight to the next in line
                return
        self._busy -= 1


class RunTurns:
    """Commands on one run (resume, cancel, delete) take turns in this process: a double-clicked resume
    must find the first one's execution, never start a second. (Across processes: the version's
    compare-and-set, then the lease.)"""

    def __init__(self) -> None:
        self._commands: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def turn(self, run_id: str) -> AsyncIterator[None]:
        lock, users = self._commands.get(run_id, (asyncio.Lock(), 0))
        self._commands[run_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._commands[run_id]
            if users == 1:
                del self._commands[run_id]  # ids nobody waits on leave no trace (a fuzzer sends millions)
            else:
                self._commands[run_id] = (lock, users - 1)


class Executor(Protocol):
    """What the replica duties ask of the run service (RunService)."""

    def launch_claimed(self, run_id: str) -> None:
        """Execute here a run whose lease this process has just claimed."""
        ...

    async def emit(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any], fence: str | None = None
    ) -> None:
        """Append an event to the run's log and hand it to this process's listeners."""
        ...

    def request_stop(self, run_id: str, reason: str) -> bool:
        """Ask a run executing here to stop at its next tool boundary."""
        ...


class ReplicaDuties:
    """Lease keeping, takeover and cross-replica cancel for one process (`replica_id`). `active`: the runs
    this process has launched, the host's own map (read here, and `cancel_seen` marked)."""

    def __init__(
        self,
        store: RunStore,
        settings: Settings,
        replica_id: str,
        slots: RunSlots,
        active: dict[str, Active],
        host: Executor,
    ) -> None:
        self.store = store
        self.settings = settings
        self.replica_id = replica_id
        self.slots = slots
        self._active = active
        self.host = host

    # --- takeover ----------------------------------------------------------------------------------
    async def recover(self) -> list[str]:
        """Start-up: resume runs whose process is gone (no live lease): left queued/running by a crash or
        interrupted by a shutdown. A run another process is executing keeps running there."""
        return await self._take_over(RECOVERY_STATUSES, "The runner restarted")

    async def take_over_orphans(self) -> list[str]:
        """Runs left queued/running whose lease expired (their process died): resumed here, once."""
        return await self._take_over(TAKEOVER_STATUSES, "The process executing it stopped answering")

    async def watch_orphans(self) -> None:
        """serve: take over orphaned runs every DEEPRESEARCH_TAKEOVER_SCAN_SECONDS, until cancelled."""
        while True:
            await asyncio.sleep(self.settings.takeover_scan_seconds)
            try:
                await self.take_over_orphans()
            except DATABASE_ERRORS:
                logger.exception("looking for orphaned runs failed; trying again")

    async def _take_over(self, statuses: tuple[str, ...], why: str) -> list[str]:
        now = datetime.now(UTC)
        idle_before = iso(now - timedelta(seconds=self.settings.lease_seconds))
        taken = []
        for run in await self.store.unclaimed_runs(statuses, idle_before):
            if run.run_id in self._active or lease_live(run):
                continue
            if self.slots.free == 0:
                # no room here: the run waits in the queue, where this or another replica finds it
                await self._requeue(run)
                continue
            claimed = await self.claim(run.run_id, run.lease_owner, statuses)
            if claimed is None:
                continue  # another replica was faster
            if claimed.cancel_requested:
                await self.finish_cancelled(claimed)
                continue
            if claimed.attempts > self.settings.max_attempts:
                await self._give_up(claimed)
                continue
            text = f"{why}; resuming from the latest checkpoint (attempt {claimed.attempts})."
            await self.host.emit(run.run_id, "message", None, {"text": text, "replica": self.replica_id})
            self.host.launch_claimed(run.run_id)
            taken.append(run.run_id)
        if taken:
            logger.info("took over %s run(s) whose process was gone: %s", len(taken), why)
        return taken

    async def _requeue(self, run: RunRecord) -> None:
        if run.status == "interrupted":  # scans look at queued and running runs only
            await self.store.update_run(run.run_id, status="queued", queued_at=utcnow_precise())

    async def finish_cancelled(self, run: RunRecord) -> RunRecord:
        """A run cancelled while nobody executed it (its process died or was restarting), claimed by this
        process: it stops here as `cancelled`, resumable, without executing. Fenced: if another replica
        took the lease meanwhile, that one finishes it."""
        me = self.replica_id
        try:
            await self.host.emit(
                run.run_id, "run_status", None, {"status": "cancelled", "orphaned": True}, me
            )
            end = {"status": "cancelled", "error": None, "usage": run.usage, "report_path": None}
            await self.host.emit(run.run_id, "end", None, end, me)
            run = await self.store.update_run(run.run_id, status="cancelled", finished_at=utcnow(), fence=me)
        except LeaseLost:
            logger.info("run %s: another process claimed it while it was being cancelled here", run.run_id)
            return await self.store.get_run(run.run_id)
        await self.store.release_lease(run.run_id, me)
        return run

    async def _give_up(self, run: RunRecord) -> None:
        error = (
            f"gave up after {run.attempts - 1} executions that each ended with their process gone "
            "(DEEPRESEARCH_MAX_ATTEMPTS); fix the cause (see the server log), then resume the run"
        )
        await self.host.emit(run.run_id, "error", None, {"error": error})
        run = await self.store.update_run(run.run_id, status="failed", error=error, finished_at=utcnow())
        await self.store.release_lease(run.run_id, self.replica_id)
        end = {"status": "failed", "error": error, "usage": run.usage, "report_path": None}
        await self.host.emit(run.run_id, "end", None, end)

    # --- leases ------------------------------------------------------------------------------------
    async def claim(
        self, run_id: str, dead_owner: str | None = None, statuses: tuple[str, ...] = TAKEOVER_STATUSES
    ) -> RunRecord | None:
        now = datetime.now(UTC)
        expires = iso(now + timedelta(seconds=self.settings.lease_seconds))
        return await self.store.claim_run(run_id, self.replica_id, expires, iso(now), dead_owner, statuses)

    def hold_lease(self, run_id: str, cancel: CancelSignal) -> asyncio.Task[None]:
        """Keep the run's lease (claimed by this process) until the task is cancelled."""
        return asyncio.create_task(self._keep_lease(run_id, cancel), name=f"lease-{run_id}")

    async def _keep_lease(self, run_id: str, cancel: CancelSignal) -> None:
        """Renew the run's lease every third of its length while it executes here. Lost (this process
        stalled past the expiry and another took the run over): stop at the next tool boundary (and every
        write of the execution is fenced meanwhile)."""
        while True:
            await asyncio.sleep(self.settings.lease_seconds / 3)
            expires = iso(datetime.now(UTC) + timedelta(seconds=self.settings.lease_seconds))
            try:
                kept = await self.store.renew_lease(run_id, self.replica_id, expires)
            except DATABASE_ERRORS:
                logger.warning("run %s: renewing its lease failed; retrying", run_id, exc_info=True)
                continue
            if not kept:
                logger.error("run %s: lease lost to another process; stopping here", run_id)
                cancel.request("lease lost: another process took the run over")
                return

    # --- waiting and failing ---------------------------------------------------------------------
    async def record_after_database_error(self, run_id: str) -> RunRecord:
        for _ in range(10):  # bounded: a caller waiting on the task gets the record once it can be read
            try:
                return await self.store.get_run(run_id)
            except DATABASE_ERRORS:
                await asyncio.sleep(0.5)
        return await self.store.get_run(run_id)

    async def announce_wait(self, run_id: str, ahead: int) -> None:
        text = (
            f"Queued: this runner executes {self.slots.limit} runs at once "
            f"(DEEPRESEARCH_MAX_CONCURRENT_RUNS) and {ahead} more are waiting before this one."
        )
        await self.host.emit(run_id, "message", None, {"text": text, "queued": True, "ahead": ahead})

    # --- cancels asked on any replica --------------------------------------------------------------
    async def watch_cancels(self) -> None:
        """Until cancelled: every DEEPRESEARCH_CANCEL_POLL_SECONDS, one query finds the runs executing here
        that somebody asked (on any replica) to cancel, and stops them at their next tool boundary."""
        while True:
            await asyncio.sleep(self.settings.cancel_poll_seconds)
            if not any(active.started and not active.cancel_seen for active in self._active.values()):
                continue
            try:
                await self.deliver_cancels()
            except DATABASE_ERRORS:
                logger.warning("looking for cancelled runs failed; trying again", exc_info=True)

    async def deliver_cancels(self) -> list[str]:
        reached = []
        for run_id in await self.store.cancel_requested_among(self.replica_id):
            active = self._active.get(run_id)
            if active is None or active.cancel_seen:
                continue
            active.cancel_seen = True
            text = "The cancel reached the process executing the run; it stops when its calls in flight end."
            # said before the stop is asked: a stopped run writes its `end`, and nothing may follow it
            await self.host.emit(run_id, "message", None, {"text": text, "replica": self.replica_id})
            self.host.request_stop(run_id, "cancel requested")
            reached.append(run_id)
        return reached


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


def _this_machine() -> str:
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = "-"
    return f"{socket.gethostname()}:{namespace}"


# read once, at import (never on the event loop: it is a file-system call)
_MACHINE = _this_machine()


def machine() -> str:
    """This host and PID namespace: processes that share it can tell whether a pid is alive."""
    return _MACHINE


def lease_live(run: RunRecord) -> bool:
    """Some process holds the run's lease, it has not expired, and — when that process ran on this machine —
    it is still alive (a run whose process was killed here is an orphan at once, not after the expiry)."""
    if not (run.lease_owner and run.lease_expires_at and run.lease_expires_at > utcnow()):
        return False
    process = run.lease_owner.rpartition(":")[0]  # host:namespace:pid (without the random part)
    host, _, pid = process.rpartition(":")
    if host != machine() or not pid.isdigit() or int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    return True
