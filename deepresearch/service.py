"""The run lifecycle, for the CLI and the HTTP runner alike: start, cancel, resume, fork, takeover, delete,
shutdown and start-up recovery, and the read models (run detail, checkpoint index, preview).

The state of a run lives in the database (status, cancel intent, events, checkpoints, receipts); this object
only holds the asyncio tasks this process is executing, so another process can always read, cancel (via the
persisted intent) and later take over a run. Every rule about what may happen to a run is here, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from config import STORED, ResearchOptions, describe_validation_error, error_message, merge_options
from stages import REPORT_STAGES, STAGE_KEYS

from .contracts import (
    ArtifactPublic,
    CheckpointPublic,
    DuplicateRisk,
    PreviewPublic,
    ReceiptPublic,
    RunDetailPublic,
    RunPublic,
    StagePublic,
)
from .engine import EventSink, ResearchEngine, graph_config
from .preflight import llm_public
from .store import ACTIVE_STATUSES, CheckpointRecord, EventRecord, Receipt, RunChanged, RunRecord, utcnow
from .toolrun import CancelSignal
from .workspace import Workspace, WorkspaceError

logger = logging.getLogger(__name__)

Patch = BaseModel | Mapping[str, Any]
"""Options to change: an OptionsPatch, or a mapping validated as one."""

REPORT_FILE = "deepresearch-report.md"


class InvalidInput(ValueError):
    """The request cannot be carried out as given (HTTP 422, CLI exit 2); the message names the fix.

    `field` is the dotted name of the bad input (``question``, ``options.corpus_dir``) when there is one."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message


class RunConflict(Exception):
    """The run is in a state that does not allow this (HTTP 409)."""


class CheckpointNotFound(LookupError):
    """The checkpoint does not belong to this run (HTTP 404)."""


class ArtifactNotFound(LookupError):
    """No such artifact in the run's folder (HTTP 404)."""


# The rule for a question, as a regular expression that Python, JSON Schema validators and pydantic's
# engine all read the same way (so the OpenAPI document states it too): no control characters
# but tab and newlines, and at least one character that is neither a space nor invisible (zero-width,
# format and separator characters).
_CONTROL = r"\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F"
_INVISIBLE = r"\s\x00-\x1F\x7F-\x9F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202F\u205F-\u206F\u3000\uFEFF"
QUESTION_PATTERN = rf"^[^{_CONTROL}]*[^{_INVISIBLE}][^{_CONTROL}]*$"
_QUESTION = re.compile(QUESTION_PATTERN)
_CONTROLS = re.compile(rf"[{_CONTROL}]")


def question_problem(question: str, max_chars: int) -> str | None:
    """What is wrong with a question (already stripped), or None: the one rule for the CLI and HTTP."""
    if not question:
        return "the question is empty"
    if len(question) > max_chars:
        return f"at most {max_chars} characters (got {len(question)})"
    if any("\ud800" <= ch <= "\udfff" for ch in question):
        return "contains an unpaired surrogate (not valid Unicode text)"
    if not _QUESTION.match(question):
        return "contains control characters" if _CONTROLS.search(question) else "has no visible characters"
    return None


def check_question(question: str, max_chars: int) -> str:
    """The question, stripped; InvalidInput when it is empty, invisible, too long or not storable text."""
    question = question.strip()
    if problem := question_problem(question, max_chars):
        raise InvalidInput(problem, "question")
    return question


@dataclass(slots=True)
class _Active:
    task: asyncio.Task[RunRecord]
    cancel: CancelSignal


class EventNotifier:
    """Wakes the SSE tails of a run when this process appends one of its events (others poll the log).

    One asyncio.Event per subscriber, never a shared Condition: a thousand clients that go away at once
    must not be able to leave a lock held that every later notify() waits for."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Event]] = {}

    @contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Event]:
        wake = asyncio.Event()
        self._subscribers.setdefault(run_id, set()).add(wake)
        try:
            yield wake
        finally:
            subscribers = self._subscribers.get(run_id)
            if subscribers is not None:
                subscribers.discard(wake)
                if not subscribers:
                    del self._subscribers[run_id]

    def notify(self, run_id: str) -> None:
        for wake in self._subscribers.get(run_id, ()):
            wake.set()


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
        self.shutdown_grace_seconds = shutdown_grace_seconds
        self.on_event = on_event
        """Also told of every event this process appends (the CLI's live view)."""
        self._active: dict[str, _Active] = {}
        # Commands on one run (resume, cancel, delete) take turns in this process: a double-clicked resume
        # must find the first one's execution, never start a second. (Across processes: leases, later.)
        self._commands: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def _command(self, run_id: str) -> AsyncIterator[None]:
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

    # --- options -----------------------------------------------------------------------------------
    def options(self, base: Mapping[str, Any], patch: Patch | None) -> ResearchOptions:
        """`patch` over `base`, validated, with server-side checks; InvalidInput names the bad option."""
        try:
            options = merge_options(base, patch)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(["options", *(str(p) for p in first["loc"])])
            if len(exc.errors()) == 1:
                raise InvalidInput(error_message(first), field) from None
            raise InvalidInput(describe_validation_error(exc, "options")) from None
        if options.corpus_dir:
            try:
                exists = Path(options.corpus_dir).is_dir()
            except OSError as exc:  # a name too long, a folder the server may not read
                raise InvalidInput(f"cannot be read: {exc.strerror}", "options.corpus_dir") from None
            if not exists:
                raise InvalidInput(
                    f"folder {options.corpus_dir} does not exist on the server", "options.corpus_dir"
                )
        return options

    # --- commands ----------------------------------------------------------------------------------
    async def create(self, question: str, patch: Patch | None = None) -> RunRecord:
        question = check_question(question, self.settings.max_question_chars)
        options = self.options(self.settings.default_option_values(), patch)
        return await self.engine.create_run(question, options)

    async def start(self, question: str, patch: Patch | None = None) -> RunRecord:
        run = await self.create(question, patch)
        self.launch(run.run_id)
        return run

    def launch(self, run_id: str) -> None:
        """Execute a run created with `create` (a fresh run: nothing else can know of it yet)."""
        if run_id not in self._active:
            self._launch(run_id, None)

    async def resume(
        self,
        run_id: str,
        checkpoint_id: str | None = None,
        patch: Patch | None = None,
        *,
        takeover: bool = False,
    ) -> RunRecord:
        """Continue from the latest checkpoint, or fork from `checkpoint_id`, with optional new options.

        `takeover` resumes a run still marked queued/running whose process is gone (killed, crashed): the
        caller vouches for that, since nothing can tell a dead process from a slow one yet."""
        async with self._command(run_id):
            return await self._resume(run_id, checkpoint_id, patch, takeover=takeover)

    async def _resume(
        self, run_id: str, checkpoint_id: str | None, patch: Patch | None, *, takeover: bool
    ) -> RunRecord:
        run = await self.store.get_run(run_id)
        if run_id in self._active:
            raise RunConflict(f"run {run_id} is {run.status} in this process; cancel it first, then resume")
        if run.status in ACTIVE_STATUSES and not takeover:
            raise RunConflict(
                f"run {run_id} is {run.status}; cancel it first, then resume. If the process that ran it is "
                "gone (killed, crashed), take it over (CLI --takeover, API takeover=true)"
            )
        if run.status == "completed" and checkpoint_id is None:
            raise RunConflict(
                f"run {run_id} is already completed; fork it from one of its checkpoints "
                "(CLI --checkpoint ID, API checkpoint_id)"
            )
        config = None
        if checkpoint_id is not None:
            record = await self.checkpoint(run_id, checkpoint_id)
            config = graph_config(record.thread_id, record.checkpoint_id, record.checkpoint_ns)
        fields: dict[str, Any] = {"status": "queued", "error": None, "cancel_requested": False}
        # the options it will run with must validate now, not in the execution (a stuck `queued` run)
        options = self.options(run.options, patch)
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
        self._launch(run_id, config)
        return run

    async def cancel(self, run_id: str, reason: str = "cancel requested") -> RunRecord:
        async with self._command(run_id):
            return await self._cancel(run_id, reason)

    async def _cancel(self, run_id: str, reason: str) -> RunRecord:
        # Taken before any await: a run that finishes meanwhile is not mistaken for an orphan.
        active = self._active.get(run_id)
        run = await self.store.get_run(run_id)
        if run.status not in ACTIVE_STATUSES:
            return run  # idempotent: cancelling a stopped run changes nothing
        run = await self.store.request_cancel(run_id)
        if active is None:
            # Nothing executes it here. If the process that ran it died and recovery is off, its
            # checkpoints and receipts are intact, so it simply stops here, resumable. (With several
            # replicas this becomes a lease check: only a run whose lease expired is an orphan.)
            await self._emit(run_id, "run_status", None, {"status": "cancelled", "orphaned": True})
            await self._emit(
                run_id,
                "end",
                None,
                {"status": "cancelled", "error": None, "usage": run.usage, "report_path": None},
            )
            return await self.store.update_run(run_id, status="cancelled", finished_at=utcnow())
        self.request_stop(run_id, reason)
        await self._emit(
            run_id, "message", None, {"text": "Cancel requested: stopping at the nearest checkpoint."}
        )
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

    async def delete(self, run_id: str) -> None:
        """Checkpoints, then artifacts, then the rows: the run row goes last, so a delete cut short by a
        crash leaves a run that can be deleted again, never files or checkpoints nobody can find."""
        async with self._command(run_id):
            run = await self.store.get_run(run_id)
            if run.status in ACTIVE_STATUSES or run_id in self._active:
                raise RunConflict(f"run {run_id} is {run.status}; cancel it before deleting")
            await self.engine.graph.checkpointer.adelete_thread(run.thread_id)  # type: ignore[union-attr]
            root = self._artifact_root(run)
            if root is not None and root.is_dir():
                await asyncio.to_thread(shutil.rmtree, root)
            await self.store.delete_run(run_id)

    # --- queries -----------------------------------------------------------------------------------
    async def get(self, run_id: str) -> RunPublic:
        return public_run(await self.store.get_run(run_id))

    async def list_runs(self, status: str | None, limit: int, offset: int) -> tuple[list[RunPublic], bool]:
        """One page of runs, newest first, and whether another page follows."""
        records = await self.store.list_runs(status=status, limit=limit + 1, offset=offset)
        return [public_run(r) for r in records[:limit]], len(records) > limit

    async def detail(self, run_id: str) -> RunDetailPublic:
        run = await self.store.get_run(run_id)
        checkpoints = await self.store.list_checkpoints(run.run_id)
        latest = {c.stage: c for c in checkpoints}
        by_stage = run.usage.get("by_stage") or {}
        stages = []
        for stage in REPORT_STAGES:
            record = latest.get(stage.key)
            status = "done" if record else "pending"
            if run.current_stage == stage.key and run.status in ACTIVE_STATUSES:
                status = "running"
            elif run.current_stage == stage.key and run.status == "failed":
                status = "failed"
            usage = by_stage.get(stage.key, {})
            stages.append(
                StagePublic(
                    key=stage.key,
                    title=stage.title,
                    status=status,
                    tool_name=stage.tool_name,
                    summary=record.summary if record else "",
                    checkpoint_id=record.checkpoint_id if record else None,
                    tokens=int(usage.get("tokens", 0)),
                    cost_usd=float(usage.get("cost_usd", 0.0)),
                )
            )
        artifacts = await self.artifacts(run)
        report = REPORT_FILE if any(a.path == REPORT_FILE for a in artifacts) else None
        return RunDetailPublic(
            **public_run(run).model_dump(),
            llm=await llm_public(self.engine.settings, self.store) if run.engine == "llm" else None,
            stages=stages,
            checkpoint_count=len(checkpoints),
            artifacts=artifacts,
            report_path=report,
            active_here=self.is_active_here(run.run_id),
        )

    async def checkpoints(self, run_id: str) -> list[CheckpointPublic]:
        run = await self.store.get_run(run_id)
        active = run.status in ACTIVE_STATUSES
        return [
            CheckpointPublic(
                **record.to_dict(),
                status="active" if active else run.status,
                resumable=not active and bool(record.next),
            )
            for record in await self.store.list_checkpoints(run_id)
        ]

    async def checkpoint(self, run_id: str, checkpoint_id: str) -> CheckpointRecord:
        await self.store.get_run(run_id)
        for record in await self.store.list_checkpoints(run_id):
            if record.checkpoint_id == checkpoint_id:
                return record
        raise CheckpointNotFound(f"checkpoint {checkpoint_id} is not a checkpoint of run {run_id}")

    async def receipts(
        self, run_id: str, receipt_key: str | None = None, status: str | None = None
    ) -> list[ReceiptPublic]:
        await self.store.get_run(run_id)
        return [public_receipt(r) for r in await self.store.list_receipts(run_id, receipt_key, status)]

    async def preview(self, run_id: str, checkpoint_id: str) -> PreviewPublic:
        """What resuming from this checkpoint would skip, run and reuse, and the risk of a duplicate."""
        run = await self.store.get_run(run_id)
        record = await self.checkpoint(run_id, checkpoint_id)
        latest = await self.engine.latest_config(run)
        is_latest = latest is not None and latest["configurable"].get("checkpoint_id") == checkpoint_id
        position = STAGE_KEYS.index(record.stage)
        will_run = [
            s
            for s in STAGE_KEYS[position + 1 :]
            if s != "critic_review" or run.options.get("requires_critic_review", True)
        ]
        receipts = await self.store.list_receipts(run_id)
        later = set(will_run) | {"reflection"}
        reused = [public_receipt(r) for r in receipts if r.status == "succeeded" and r.stage in later]
        in_doubt = [public_receipt(r) for r in receipts if r.status == "started"]
        return PreviewPublic(
            run_id=run_id,
            checkpoint_id=checkpoint_id,
            stage=record.stage,
            fork=not is_latest,
            skipped_stages=list(STAGE_KEYS[: position + 1]),
            stages_to_run=will_run,
            may_loop_back_to_search=position < STAGE_KEYS.index("analyze_findings"),
            receipts_reused=reused,
            receipts_reused_count=len(reused),
            duplicate_risk=DuplicateRisk(
                level="possible" if in_doubt else "none",
                calls_in_doubt=in_doubt,
                explanation=(
                    "These calls started but never recorded a result (the process stopped while they were "
                    "in flight); they will be made again."
                    if in_doubt
                    else "Every completed call has a receipt; none will be repeated."
                ),
            ),
        )

    async def artifacts(self, run: RunRecord) -> list[ArtifactPublic]:
        return await asyncio.to_thread(self._list_artifacts, run)

    def artifact_file(self, run: RunRecord, relative: str) -> Path:
        """The artifact's absolute path; ArtifactNotFound for anything else (including escapes)."""
        root = self._artifact_root(run)
        if root is None:
            raise ArtifactNotFound("the run has no artifact folder yet")
        try:
            target = Workspace(root).resolve(relative)
            found = target.is_file()
        except (WorkspaceError, OSError) as exc:  # an escape, or a name the file system refuses
            raise ArtifactNotFound(f"artifact not found: {exc}") from None
        if not found:
            raise ArtifactNotFound(f"artifact {relative} not found")
        return target

    def is_active_here(self, run_id: str) -> bool:
        return run_id in self._active

    def _artifact_root(self, run: RunRecord) -> Path | None:
        if not run.artifact_dir:
            return None
        return Workspace(self.settings.workspace_dir).resolve(run.artifact_dir)

    def _list_artifacts(self, run: RunRecord) -> list[ArtifactPublic]:
        root = self._artifact_root(run)
        if root is None or not root.is_dir():
            return []
        return [
            ArtifactPublic(path=path.relative_to(root).as_posix(), size=path.stat().st_size)
            for path in sorted(root.rglob("*"))
            if path.is_file() and not path.is_symlink() and not path.name.startswith(".")
        ]

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
        if run_id in self._active:  # every caller checked; this is the invariant, not a code path
            raise RunConflict(f"run {run_id} is already executing in this process")
        cancel = CancelSignal(run_id, self.store)
        task = asyncio.create_task(self._execute(run_id, config, cancel), name=f"run-{run_id}")
        self._active[run_id] = _Active(task, cancel)

    async def _execute(self, run_id: str, config: Any, cancel: CancelSignal) -> RunRecord:
        try:
            return await self.engine.execute(
                run_id, checkpoint_config=config, cancel=cancel, on_event=self._publish
            )
        except asyncio.CancelledError:
            raise  # torn down (a second Ctrl-C, shutdown past its grace): the engine recorded it
        except Exception:
            logger.exception("run %s crashed outside the engine", run_id)
            raise
        finally:
            self._active.pop(run_id, None)

    async def _publish(self, event: EventRecord) -> None:
        self.notifier.notify(event.run_id)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    async def _emit(self, run_id: str, type_: str, stage: str | None, data: dict[str, Any]) -> None:
        await self._publish(await self.store.append_event(run_id, type_, stage, data))


def public_run(run: RunRecord) -> RunPublic:
    return RunPublic.model_validate(run.to_dict(), context=STORED)


def public_receipt(receipt: Receipt) -> ReceiptPublic:
    return ReceiptPublic.model_validate(receipt.to_dict())
