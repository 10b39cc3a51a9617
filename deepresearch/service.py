"""Run lifecycle for the HTTP runner: start, cancel, resume, fork, shutdown and start-up recovery.

The state of a run lives in the database (status, cancel intent, events, checkpoints, receipts); this object
only holds the asyncio tasks this process is executing, so another process can always read, cancel (via the
persisted intent) and later take over a run.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from config import ResearchOptions
from stages import STAGE_KEYS

from .engine import ResearchEngine, graph_config
from .store import ACTIVE_STATUSES, CheckpointRecord, EventRecord, RunRecord, utcnow
from .toolrun import CancelSignal

logger = logging.getLogger(__name__)


class RunConflict(Exception):
    """The run is in a state that does not allow this (HTTP 409)."""


class CheckpointNotFound(LookupError):
    """The checkpoint does not belong to this run (HTTP 404)."""


@dataclass(slots=True)
class _Active:
    task: asyncio.Task[RunRecord]
    cancel: CancelSignal


class EventNotifier:
    """Wakes SSE tails of a run when this process appends one of its events (others poll the log)."""

    def __init__(self) -> None:
        self._conditions: dict[str, asyncio.Condition] = {}

    def condition(self, run_id: str) -> asyncio.Condition:
        return self._conditions.setdefault(run_id, asyncio.Condition())

    async def notify(self, event: EventRecord) -> None:
        condition = self._conditions.get(event.run_id)
        if condition is not None:
            async with condition:
                condition.notify_all()

    async def wait(self, run_id: str, at_most_seconds: float) -> None:
        """Return when an event of the run is appended here, or after at most the given time."""
        condition = self.condition(run_id)
        async with condition:
            try:
                await asyncio.wait_for(condition.wait(), at_most_seconds)
            except TimeoutError:
                return


class RunService:
    def __init__(self, engine: ResearchEngine, *, shutdown_grace_seconds: float = 30.0) -> None:
        self.engine = engine
        self.store = engine.store
        self.notifier = EventNotifier()
        self.shutdown_grace_seconds = shutdown_grace_seconds
        self._active: dict[str, _Active] = {}

    # --- commands ----------------------------------------------------------------------------------
    async def start(self, question: str, options: ResearchOptions) -> RunRecord:
        run = await self.engine.create_run(question, options)
        self._launch(run.run_id, None)
        return run

    async def cancel(self, run_id: str) -> RunRecord:
        run = await self.store.get_run(run_id)
        if run.status not in ACTIVE_STATUSES:
            return run  # idempotent: cancelling a stopped run changes nothing
        run = await self.store.request_cancel(run_id)
        active = self._active.get(run_id)
        if active is None:
            # Nothing executes it: the process that ran it died and recovery is off. Its checkpoints
            # and receipts are intact, so it simply stops here, resumable. (With several replicas this
            # becomes a lease check: only a run whose lease expired is an orphan.)
            await self._emit(run_id, "run_status", None, {"status": "cancelled", "orphaned": True})
            await self._emit(
                run_id,
                "end",
                None,
                {"status": "cancelled", "error": None, "usage": run.usage, "report_path": None},
            )
            return await self.store.update_run(run_id, status="cancelled", finished_at=utcnow())
        active.cancel.request("cancel requested")
        await self._emit(
            run_id, "message", None, {"text": "Cancel requested: stopping at the nearest checkpoint."}
        )
        return run

    async def resume(
        self, run_id: str, checkpoint_id: str | None = None, options: dict[str, Any] | None = None
    ) -> RunRecord:
        run = await self.store.get_run(run_id)
        if run.status in ACTIVE_STATUSES or run_id in self._active:
            raise RunConflict(f"run {run_id} is {run.status}; cancel it first, then resume")
        if run.status == "completed" and checkpoint_id is None:
            raise RunConflict(f"run {run_id} is completed; pass a checkpoint_id to fork it from there")
        config = None
        if checkpoint_id is not None:
            record = await self.checkpoint(run_id, checkpoint_id)
            config = graph_config(record.thread_id, record.checkpoint_id, record.checkpoint_ns)
        if options:
            merged = ResearchOptions.model_validate({**run.options, **options})
            await self.store.update_run(run_id, options=merged.model_dump())
        run = await self.store.update_run(run_id, status="queued", error=None, cancel_requested=False)
        self._launch(run_id, config)
        return run

    async def delete(self, run_id: str) -> None:
        run = await self.store.get_run(run_id)
        if run.status in ACTIVE_STATUSES or run_id in self._active:
            raise RunConflict(f"run {run_id} is {run.status}; cancel it before deleting")
        await self.engine.graph.checkpointer.adelete_thread(run.thread_id)  # type: ignore[union-attr]
        await self.store.delete_run(run_id)

    # --- queries -----------------------------------------------------------------------------------
    async def checkpoint(self, run_id: str, checkpoint_id: str) -> CheckpointRecord:
        await self.store.get_run(run_id)
        for record in await self.store.list_checkpoints(run_id):
            if record.checkpoint_id == checkpoint_id:
                return record
        raise CheckpointNotFound(f"checkpoint {checkpoint_id} is not a checkpoint of run {run_id}")

    async def preview(self, run_id: str, checkpoint_id: str) -> dict[str, Any]:
        """What resuming from this checkpoint would skip, run and reuse, and the risk of a duplicate."""
        run = await self.store.get_run(run_id)
        record = await self.checkpoint(run_id, checkpoint_id)
        latest = await self.engine.latest_config(run)
        is_latest = latest is not None and latest["configurable"].get("checkpoint_id") == checkpoint_id
        position = STAGE_KEYS.index(record.stage)
        skipped = list(STAGE_KEYS[: position + 1])
        will_run = [
            s
            for s in STAGE_KEYS[position + 1 :]
            if s != "critic_review" or run.options.get("requires_critic_review", True)
        ]
        receipts = await self.store.list_receipts(run_id)
        later = set(will_run) | {"reflection"}
        reused = [r.to_dict() for r in receipts if r.status == "succeeded" and r.stage in later]
        in_doubt = [r.to_dict() for r in receipts if r.status == "started"]
        return {
            "run_id": run_id,
            "checkpoint_id": checkpoint_id,
            "stage": record.stage,
            "fork": not is_latest,
            "skipped_stages": skipped,
            "stages_to_run": will_run,
            "may_loop_back_to_search": position < STAGE_KEYS.index("analyze_findings"),
            "receipts_reused": reused,
            "receipts_reused_count": len(reused),
            "duplicate_risk": {
                "level": "possible" if in_doubt else "none",
                "calls_in_doubt": in_doubt,
                "explanation": (
                    "These calls started but never recorded a result (the process stopped while they were "
                    "in flight); they will be made again."
                    if in_doubt
                    else "Every completed call has a receipt; none will be repeated."
                ),
            },
        }

    def is_active_here(self, run_id: str) -> bool:
        return run_id in self._active

    # --- lifecycle ---------------------------------------------------------------------------------
    async def recover(self) -> list[str]:
        """Resume runs that a dead process left queued/running, or a shutdown left interrupted."""
        recovered = []
        for status in ("running", "queued", "interrupted"):
            for run in await self.store.list_runs(status=status, limit=1000):
                if run.run_id in self._active:
                    continue
                await self._emit(
                    run.run_id,
                    "message",
                    None,
                    {"text": "The runner restarted; resuming from the latest checkpoint."},
                )
                self._launch(run.run_id, None)
                recovered.append(run.run_id)
        if recovered:
            logger.info("recovered %s run(s) left active by a previous process", len(recovered))
        return recovered

    async def shutdown(self) -> None:
        """SIGTERM: every run here stops at its next tool boundary as `interrupted` (resumable)."""
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
    def _launch(self, run_id: str, config: Any) -> None:
        cancel = CancelSignal(run_id, self.store)
        task = asyncio.create_task(self._execute(run_id, config, cancel), name=f"run-{run_id}")
        self._active[run_id] = _Active(task, cancel)

    async def _execute(self, run_id: str, config: Any, cancel: CancelSignal) -> RunRecord:
        try:
            return await self.engine.execute(
                run_id, checkpoint_config=config, cancel=cancel, on_event=self.notifier.notify
            )
        except Exception:
            logger.exception("run %s crashed outside the engine", run_id)
            raise
        finally:
            self._active.pop(run_id, None)

    async def _emit(self, run_id: str, type_: str, stage: str | None, data: dict[str, Any]) -> None:
        await self.notifier.notify(await self.store.append_event(run_id, type_, stage, data))
