"""The run lifecycle, for the CLI and the HTTP runner alike: start, cancel, resume, fork, takeover, delete,
shutdown, start-up recovery and retention; it holds `views` (views.py) and `replicas` (replicas.py).

The state of a run lives in the database (status, cancel intent, events, checkpoints, receipts); this object
only holds the asyncio tasks this process is executing, so another process can always read, cancel (via the
persisted intent) and later take over a run. Every rule about what may happen to a run is here, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from deepresearch.engine.core import EventSink, ResearchEngine, graph_config
from deepresearch.errors import RunConflict, RunNotFound
from deepresearch.options import ResearchOptions
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.search.erasure import sweep_indexes
from deepresearch.service.auth import CLI, Principal, can_see
from deepresearch.service.collections import Collections
from deepresearch.service.contracts import PrunePublic, RunPublic
from deepresearch.service.limits import ActiveRuns, StartRate
from deepresearch.service.notifier import EventNotifier
from deepresearch.service.options import Patch, check_question, checked_options
from deepresearch.service.replicas import Active, ReplicaDuties, RunSlots, RunTurns, lease_live, machine
from deepresearch.service.views import RunViews, public_run, tree_bytes
from deepresearch.store import (
    ACTIVE_STATUSES,
    DATABASE_ERRORS,
    DATABASE_UNAVAILABLE,
    ActiveRunsLimit,
    EventRecord,
    RunChanged,
    RunRecord,
    utcnow,
    utcnow_precise,
)
from deepresearch.store.steering import ProtocolSql

logger = logging.getLogger(__name__)


class RunService:
    def __init__(
        self,
        engine: ResearchEngine,
        *,
        shutdown_grace_seconds: float = 30.0,
        on_event: EventSink | None = None,
    ) -> None:
        self.engine = engine
        self.store = engine.store
        self.settings = engine.settings
        self.notifier = EventNotifier()
        self.start_rate = StartRate(self.settings.max_runs_per_minute)
        self.quota = ActiveRuns(self.settings.max_active_runs_per_user)
        self.collections = Collections(self.settings)
        self.shutdown_grace_seconds = shutdown_grace_seconds
        self.on_event = on_event
        """Also told of every event this process appends (the CLI's live view)."""
        self._active: dict[str, Active] = {}
        self.on_stopped: list[Callable[[RunRecord], Awaitable[None]]] = []
        """Awaited with the final record when an execution here ends (waiting, completed, failed...)."""
        self.slots = RunSlots(self.settings.max_concurrent_runs)
        self.replica_id = f"{machine()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """This process, as a lease owner: machine (host and PID namespace), pid, a random part."""
        self._turns = RunTurns()
        """Commands on one run (resume, cancel, delete) take turns in this process."""
        self.views = RunViews(self.store, self.settings, engine, self)
        """What clients read about runs: detail, checkpoints, resume preview, receipts, artifacts."""
        self.replicas = ReplicaDuties(
            self.store, self.settings, self.replica_id, self.slots, self._active, self
        )
        """Leases, takeover of orphaned runs, cancels asked on other replicas (runner and MCP chores)."""

    # --- options -----------------------------------------------------------------------------------
    def options(
        self, base: Mapping[str, Any], patch: Patch | None, principal: Principal = CLI
    ) -> ResearchOptions:
        """`patch` over `base`, validated, with server-side checks; InvalidInput names the bad option."""
        return checked_options(base, patch, principal, self.settings, self.collections)

    # --- commands ----------------------------------------------------------------------------------
    async def create(
        self, question: str, patch: Patch | None = None, principal: Principal = CLI
    ) -> RunRecord:
        question = check_question(question, self.settings.max_question_chars)
        options = self.options(self.settings.default_option_values(), patch, principal)
        return await self.create_with(question, options, principal)

    async def create_with(
        self, question: str, options: ResearchOptions, principal: Principal = CLI
    ) -> RunRecord:
        """A run whose options are merged and checked already (a fork, a follow-up): quota as for any.
        The operator at the console is not limited."""
        if principal == CLI:
            return await self.engine.create_run(question, options, owner=principal.user)
        self.quota.check(principal.user, await self.store.count_active(principal.user))  # cheap early no
        self.start_rate.check(principal.user)
        try:
            # counted again in the insert's own transaction: starts at once cannot all pass the count above
            limit = self.settings.max_active_runs_per_user
            return await self.engine.create_run(question, options, owner=principal.user, active_limit=limit)
        except ActiveRunsLimit as exc:
            self.start_rate.forget(principal.user)  # refused: it did not start a run
            self.quota.check(principal.user, exc.active)
            raise

    async def start(self, question: str, patch: Patch | None = None, principal: Principal = CLI) -> RunRecord:
        run = await self.create(question, patch, principal)
        self.launch(run.run_id)
        return run

    def launch(self, run_id: str) -> None:
        """Execute a run created with `create` (a fresh run: nothing else can know of it yet)."""
        if run_id not in self._active:
            self._launch(run_id, None)

    def launch_claimed(self, run_id: str) -> None:
        """Execute a run whose lease this process has just claimed (a takeover)."""
        self._launch(run_id, None, claimed=True)

    async def resume(
        self,
        run_id: str,
        checkpoint_id: str | None = None,
        patch: Patch | None = None,
        *,
        takeover: bool = False,
        principal: Principal = CLI,
    ) -> RunRecord:
        """Continue from the latest checkpoint, or fork from `checkpoint_id`, with optional new options.

        `takeover` resumes a run still marked queued/running whose process is gone (killed, crashed): the
        caller vouches for that, since nothing can tell a dead process from a slow one yet."""
        async with self._turns.turn(run_id):
            return await self._resume(run_id, checkpoint_id, patch, takeover=takeover, principal=principal)

    async def _resume(
        self,
        run_id: str,
        checkpoint_id: str | None,
        patch: Patch | None,
        *,
        takeover: bool,
        principal: Principal,
    ) -> RunRecord:
        run = await self.visible_run(run_id, principal)
        if run_id in self._active:
            raise RunConflict(f"run {run_id} is {run.status} in this process; cancel it first, then resume")
        if run.status == "waiting_for_input":
            raise RunConflict(f"run {run_id} waits for your input: answer it (POST /api/runs/{run_id}/input)")
        if run.status in ACTIVE_STATUSES and not takeover:
            raise RunConflict(
                f"run {run_id} is {run.status}; cancel it first, then resume. If the process that ran it is "
                "gone (killed, crashed), take it over (CLI --takeover, API takeover=true)"
            )
        if run.status in ACTIVE_STATUSES and lease_live(run) and run.lease_owner != self.replica_id:
            raise RunConflict(
                f"run {run_id} is executing in another process (its lease runs until "
                f"{run.lease_expires_at}); cancel it instead, or wait: a dead process's runs are taken over"
            )
        if not takeover and principal != CLI and run.status not in ACTIVE_STATUSES:  # queued again: a start
            self.quota.check(run.owner, await self.store.count_active(run.owner))
        # its lease, if its process is known to be gone (killed on this machine) before the lease expires
        dead_owner = run.lease_owner if run.lease_owner and not lease_live(run) else None
        if run.status == "completed" and checkpoint_id is None:
            raise RunConflict(
                f"run {run_id} is already completed; fork it from one of its checkpoints "
                "(CLI --checkpoint ID, API checkpoint_id)"
            )
        config = None
        fork = False
        if checkpoint_id is not None:
            record = await self.views.checkpoint(run_id, checkpoint_id)
            config = graph_config(record.thread_id, record.checkpoint_id, record.checkpoint_ns)
            fork = record.checkpoint_id != (await self.store.list_checkpoints(run_id))[-1].checkpoint_id
        # a person resumes: the count of automatic takeovers starts again
        fields: dict[str, Any] = {
            "status": "queued",
            "queued_at": utcnow_precise(),
            "error": None,
            "cancel_requested": False,
            "attempts": 0,
        }
        if not takeover:  # the history's badges: resumed, and forked
            fields |= {"resumes": run.resumes + 1, "forks": run.forks + int(fork)}
        # the options it will run with must validate now, not in the execution (a stuck `queued` run)
        options = self.options(run.options, patch, principal)
        if patch is not None:
            fields["options"] = options.model_dump()
        try:
            # compare-and-set on the version read above: of two resumes at once, in this process or in
            # another one on the same database, exactly one claims the run
            run = await self.store.update_run(run_id, expect_version=run.version, **fields)
        except RunChanged:
            raise RunConflict(
                f"run {run_id} changed while this resume was prepared (another request or process); "
                "read it again and retry if it is still stopped"
            ) from None
        self._launch(run_id, config, dead_owner=dead_owner)
        return run

    async def answer_input(
        self, run_id: str, answer: dict[str, Any], principal: Principal = CLI
    ) -> RunRecord:
        """Continue a run `waiting_for_input` with a person's answer (LangGraph's Command(resume=...));
        the answer is checked by the caller (plan_review.py)."""
        async with self._turns.turn(run_id):
            run = await self.visible_run(run_id, principal)
            if run.status != "waiting_for_input" or run_id in self._active:
                raise RunConflict(f"run {run_id} is {run.status}: it waits for no input")
            try:
                run = await self.store.update_run(
                    run_id,
                    expect_version=run.version,
                    status="queued",
                    queued_at=utcnow_precise(),
                    pending_input=None,
                    attempts=0,
                )
            except RunChanged:
                raise RunConflict(f"run {run_id} was answered or changed meanwhile; read it again") from None
            self._launch(run_id, None, resume=answer)
            return run

    async def cancel(self, run_id: str, reason: str = "cancel requested") -> RunRecord:
        async with self._turns.turn(run_id):
            return await self._cancel(run_id, reason)

    async def _cancel(self, run_id: str, reason: str) -> RunRecord:
        # Taken before any await: a run that finishes meanwhile is not mistaken for an orphan.
        active = self._active.get(run_id)
        run = await self.store.get_run(run_id)
        if run.status == "waiting_for_input":
            # nothing executes it: it simply stops waiting. Claimed first, so of two replicas cancelling
            # at once only one writes the terminal events.
            if await self.replicas.claim(run_id, None, ("waiting_for_input",)) is None:
                return await self.store.get_run(run_id)
            me = self.replica_id
            end = {"status": "cancelled", "error": reason, "usage": run.usage, "report_path": None}
            await self.emit(run_id, "run_status", None, {"status": "cancelled"}, me)
            await self.emit(run_id, "end", None, end, me)
            run = await self.store.update_run(
                run_id, status="cancelled", error=reason, pending_input=None, finished_at=utcnow(), fence=me
            )
            await self.store.release_lease(run_id, me)
            return run
        if run.status not in ACTIVE_STATUSES:
            return run  # idempotent: cancelling a stopped run changes nothing
        elsewhere = active is None  # not a run waiting here for a slot, even one taken over (lease held)
        run = await self.store.request_cancel(run_id)  # the intent first: a takeover must find it
        if active is not None and not active.started:
            # waiting for a slot here: it executed nothing and stops at once (taken over: claimed below)
            active.task.cancel()
            await asyncio.wait([active.task])
            active = None
        if elsewhere and lease_live(run):
            # another process executes it: it reads the intent at its next tool boundary and stops
            text = "Cancel requested: the process executing the run stops at its nearest checkpoint."
            await self.emit(run_id, "message", None, {"text": text})
            return run
        if active is None:
            # Nothing executes it (its process died, or is restarting). Whoever holds a run's lease writes
            # its terminal events: claim it, then finish it as cancelled without executing it. If another
            # replica claims it first, that one sees the cancel and does the same.
            claimed = await self.replicas.claim(run_id, run.lease_owner)
            if claimed is not None:
                return await self.replicas.finish_cancelled(claimed)
            return await self.store.get_run(run_id)
        # the message first: once asked to stop, the run may write its terminal `end` at any moment, and
        # nothing may follow `end` in the log (a stream closes on it); delivered here, so the cancel watcher
        # (replicas.deliver_cancels) neither says it again nor says it after the end
        active.cancel_seen = True
        await self.emit(
            run_id, "message", None, {"text": "Cancel requested: stopping at the nearest checkpoint."}
        )
        self.request_stop(run_id, reason)
        return run

    def request_stop(self, run_id: str, reason: str) -> bool:
        """Ask a run executing here to stop at its next tool boundary (no I/O: safe in a signal handler)."""
        active = self._active.get(run_id)
        if active is not None:
            active.cancel.request(reason)
        return active is not None

    def abort(self, run_id: str) -> None:
        """Stop a run executing here at once (a second Ctrl-C): calls in flight may be made again."""
        active = self._active.get(run_id)
        if active is not None:
            active.task.cancel()

    async def wait(self, run_id: str) -> RunRecord:
        """Wait for this process's execution of the run to end; the run's final record."""
        active = self._active.get(run_id)
        if active is None:
            return await self.store.get_run(run_id)
        return await active.task

    async def delete(self, run_id: str, *, scrub: bool = True) -> None:
        """Checkpoints, then artifacts, then the rows: the run row goes last, so a delete cut short by a
        crash leaves a run that can be deleted again, never files or checkpoints nobody can find. `scrub`:
        then no copy is left in the database's files (prune scrubs once, after all)."""
        async with self._turns.turn(run_id):
            run = await self.store.get_run(run_id)
            if run.status in ACTIVE_STATUSES or run_id in self._active:
                raise RunConflict(f"run {run_id} is {run.status}; cancel it before deleting")
            await self.engine.delete_thread(run.thread_id)
            await asyncio.to_thread(self._remove_artifacts, run)
            await self.store.delete_run(run_id)
            if scrub:
                await self.store.scrub()

    def _remove_artifacts(self, run: RunRecord) -> None:
        root = self.views.artifact_root(run)
        if root is not None and root.is_dir():
            shutil.rmtree(root)

    # --- queries -----------------------------------------------------------------------------------
    async def get(self, run_id: str) -> RunPublic:
        run = await self.store.get_run(run_id)
        return public_run(run, await self.views.queue_positions(run))

    async def visible_run(self, run_id: str, principal: Principal) -> RunRecord:
        """The run, if `principal` may see it; RunNotFound otherwise (another user's run does not exist)."""
        run = await self.store.get_run(run_id)
        if not can_see(principal, run):
            raise RunNotFound(run_id)
        return run

    async def list_runs(
        self,
        status: str | None,
        limit: int,
        offset: int,
        principal: Principal = CLI,
        search: str | None = None,
    ) -> tuple[list[RunPublic], bool]:
        """One page of the runs `principal` may see, newest first, and whether another page follows."""
        owner = None if principal.admin else principal.user
        records = await self.store.list_runs(
            status=status, limit=limit + 1, offset=offset, owner=owner, search=search
        )
        queue = await self.views.queue_positions(*records[:limit])
        return [public_run(r, queue) for r in records[:limit]], len(records) > limit

    @property
    def protocol_store(self) -> ProtocolSql:
        """The Agent Protocol's threads and their runs, in the run database (both SQL stores keep them)."""
        if not isinstance(self.store, ProtocolSql):
            raise TypeError(f"{type(self.store).__name__} keeps no Agent Protocol threads")
        return self.store

    def is_active_here(self, run_id: str) -> bool:
        return run_id in self._active

    def active_run_ids(self) -> list[str]:
        """The runs this process executes, or holds waiting for a slot."""
        return list(self._active)

    # --- lifecycle ---------------------------------------------------------------------------------
    async def prune(self, older_than_days: float) -> PrunePublic:
        """Delete every run that stopped more than `older_than_days` ago (events, checkpoints, receipts,
        files), and report what the database and the workspace hold afterwards."""
        cutoff = (datetime.now(UTC) - timedelta(days=older_than_days)).isoformat(timespec="milliseconds")
        deleted: list[str] = []
        seen: set[str] = set()
        for _ in range(1000):  # batches of 1000: bounded, and each batch sees the previous one gone
            batch = [r for r in await self.store.finished_before(cutoff) if r.run_id not in seen]
            if not batch:
                break
            for run in batch:
                seen.add(run.run_id)
                try:
                    await self.delete(run.run_id, scrub=False)
                except (RunConflict, RunNotFound):
                    continue  # resumed or deleted meanwhile
                deleted.append(run.run_id)
        await self.store.scrub()
        await asyncio.to_thread(sweep_indexes, self.settings.home)  # indexes of collections now gone
        if deleted:
            logger.info("pruned %s run(s) finished before %s", len(deleted), cutoff)
        workspace = await asyncio.to_thread(tree_bytes, self.settings.workspace_dir)
        return PrunePublic(
            deleted=deleted, database_bytes=await self.store.size_bytes(), workspace_bytes=workspace
        )

    async def shutdown(self) -> None:
        """SIGTERM: every run here stops at its next tool boundary as `interrupted` (resumable); runs still
        waiting for a slot stay `queued` in the database, for another replica or the next start."""
        waiting = [a.task for a in self._active.values() if not a.started]
        for task in waiting:
            task.cancel()
        if waiting:
            await asyncio.wait(waiting)
        for active in self._active.values():
            active.cancel.request("shutdown", kind="shutdown")
        tasks = [a.task for a in self._active.values()]
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=self.shutdown_grace_seconds)
        for task in pending:  # past the grace period: the run stays 'running' and is recovered later
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5)

    # --- internals ---------------------------------------------------------------------------------
    def _launch(
        self,
        run_id: str,
        config: Any,
        *,
        claimed: bool = False,
        dead_owner: str | None = None,
        resume: Any = None,
    ) -> None:
        """Execute the run here: under its lease (`claimed`: already taken; `dead_owner`: a process known
        to be gone whose lease may be taken before it expires)."""
        if run_id in self._active:  # every caller checked; this is the invariant, not a code path
            raise RunConflict(f"run {run_id} is already executing in this process")
        cancel = CancelSignal(run_id, self.store)
        claim = None if claimed else dead_owner or ""
        task = asyncio.create_task(self._execute(run_id, config, cancel, claim, resume), name=f"run-{run_id}")
        self._active[run_id] = Active(task, cancel)

    async def _execute(
        self, run_id: str, config: Any, cancel: CancelSignal, claim: str | None, resume: Any = None
    ) -> RunRecord:
        """`claim`: None when the lease is taken already, else the dead owner it may be taken from ("").

        A run already claimed (a takeover) keeps its lease alive while it waits for a slot; any other run
        waits for its slot first, holding nothing, then claims."""
        heartbeat: asyncio.Task[None] | None = None
        slot = False
        try:
            if claim is None:
                heartbeat = self.replicas.hold_lease(run_id, cancel)
            ahead = self.slots.waiting
            turn = self.slots.enter()
            if turn is not None:
                await self.replicas.announce_wait(run_id, ahead)
                await self.slots.wait(turn)
            slot = True
            self._active[run_id].started = True
            if claim is not None:
                if await self.replicas.claim(run_id, claim or None) is None:
                    # another process holds a live lease, or ran the run while it waited here
                    logger.warning("run %s executes elsewhere or has stopped; not starting it here", run_id)
                    return await self.store.get_run(run_id)
                heartbeat = self.replicas.hold_lease(run_id, cancel)
            final = await self.engine.execute(
                run_id,
                checkpoint_config=config,
                cancel=cancel,
                on_event=self._publish,
                fence=self.replica_id,
                resume=resume,
            )
            for hook in self.on_stopped:  # webhooks, metrics: told how the execution ended
                await hook(final)
            return final
        except asyncio.CancelledError:
            raise  # torn down (a second Ctrl-C, shutdown past its grace): the engine recorded it
        except DATABASE_UNAVAILABLE:
            # the run stays `running`: when its lease lapses a takeover scan resumes it (up to
            # DEEPRESEARCH_MAX_ATTEMPTS executions), here or on another replica
            logger.exception("run %s: the database failed during its execution; it will be resumed", run_id)
            return await self.replicas.record_after_database_error(run_id)
        except Exception:
            logger.exception("run %s crashed outside the engine", run_id)
            raise
        finally:
            self._active.pop(run_id, None)
            if slot:
                self.slots.release()
            if heartbeat is not None:
                heartbeat.cancel()
                # the lease goes back at once (another replica need not wait for it to expire)
                with contextlib.suppress(*DATABASE_ERRORS):
                    await asyncio.shield(self.store.release_lease(run_id, self.replica_id))

    async def _publish(self, event: EventRecord) -> None:
        self.notifier.publish(event)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    async def emit(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any], fence: str | None = None
    ) -> None:
        await self._publish(await self.store.append_event(run_id, type_, stage, data, fence=fence))
