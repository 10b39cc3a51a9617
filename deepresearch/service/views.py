"""The read models of runs: run detail, checkpoint index, resume preview, receipts and artifacts, as the
typed contracts both front ends return. RunService holds one (`RunService.views`), kept apart from the
lifecycle's rules: it reads the store and asks its host only which runs execute in this process. It is how
deepresearch/api/ reads runs: the API layer never holds the store (tests/test_architecture.py)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from langgraph.types import RunnableConfig

from config import Settings
from deepresearch.engine.workspace import Workspace, WorkspaceError
from deepresearch.errors import ArtifactNotFound, ArtifactNotYetWritten, CheckpointNotFound
from deepresearch.options import STORED
from deepresearch.service.contracts import (
    ArtifactPublic,
    CheckpointPublic,
    DuplicateRisk,
    PreviewPublic,
    ReceiptPublic,
    RunDetailPublic,
    RunPublic,
    StagePublic,
)
from deepresearch.service.preflight import ProvidersHealthPublic, ReadyPublic, llm_public, providers_health
from deepresearch.store import ACTIVE_STATUSES, CheckpointRecord, EventRecord, Receipt, RunRecord, RunStore
from stages import REFLECTION, REPORT_STAGES, STAGE_KEYS, get_stage, reflection_ahead, stages_after

REPORT_FILE = get_stage("write_report").artifact


class RunsHere(Protocol):
    """The runs this process executes (RunService): a run's task can outlive the moment its record says it
    stopped (its `end` is logged first)."""

    def is_active_here(self, run_id: str) -> bool: ...


class LatestCheckpoint(Protocol):
    """The graph's latest checkpoint of a run (ResearchEngine): a preview tells a fork from a resume."""

    async def latest_config(self, run: RunRecord) -> RunnableConfig | None: ...


@dataclass(frozen=True, slots=True)
class RunTally:
    """Every run on the database at a glance, whichever replica runs it (GET /metrics)."""

    by_status: dict[str, int]
    oldest_wait_seconds: float | None = None
    """How long the run waiting longest for a person has waited (None: none waits)."""


class RunViews:
    """What a client can read about a run."""

    def __init__(self, store: RunStore, settings: Settings, engine: LatestCheckpoint, host: RunsHere) -> None:
        self.store = store
        self.settings = settings
        self.engine = engine
        self.host = host

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
            **public_run(run, await self.queue_positions(run)).model_dump(),
            llm=await llm_public(self.settings, self.store) if run.engine == "llm" else None,
            stages=stages,
            checkpoint_count=len(checkpoints),
            artifacts=artifacts,
            report_path=report,
            active_here=self.host.is_active_here(run.run_id),
        )

    async def record(self, run_id: str) -> RunRecord:
        """The run as stored (RunNotFound if there is none); whose it is is the caller's check."""
        return await self.store.get_run(run_id)

    async def tally(self) -> RunTally:
        by_status = await self.store.count_runs_by_status()
        waiting = await self.store.list_runs(status="waiting_for_input", limit=1000)
        now = datetime.now(UTC)
        ages = [
            (
                now - datetime.fromisoformat(str((run.pending_input or {}).get("since") or run.updated_at))
            ).total_seconds()
            for run in waiting
        ]
        return RunTally(by_status, max(ages) if ages else None)

    async def queue_positions(self, *runs: RunRecord) -> dict[str, int]:
        """Places in the queue, read only when one of `runs` is waiting for a runner."""
        if any(run.status == "queued" and run.lease_owner is None for run in runs):
            return await self.store.queue_positions()
        return {}

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

    async def checkpoint_records(self, run_id: str) -> list[CheckpointRecord]:
        """The run's stage checkpoints as indexed, oldest first (none for a run that does not exist)."""
        return await self.store.list_checkpoints(run_id)

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

    async def events(self, run_id: str, after: int, limit: int) -> list[EventRecord]:
        """The run's events after seq `after`, oldest first."""
        return await self.store.list_events(run_id, after=after, limit=limit)

    async def caught_up(self, run_id: str, last: int) -> bool:
        """The run is not running anywhere and a client that has seq `last` has every event of it."""
        run = await self.store.get_run(run_id)
        if run.status in ACTIVE_STATUSES or self.host.is_active_here(run_id):
            return False
        return not await self.store.list_events(run_id, after=last, limit=1)

    async def ping(self) -> None:
        """Raises one of DATABASE_ERRORS when the database does not answer."""
        await self.store.ping()

    async def readiness(self) -> ReadyPublic:
        settings = self.settings
        return ReadyPublic(
            status="ready", engine=settings.engine_mode, llm=await llm_public(settings, self.store)
        )

    async def providers_health(self) -> ProvidersHealthPublic:
        """Which search providers and which model this server can reach now."""
        return await providers_health(self.settings, self.store)

    async def preview(self, run_id: str, checkpoint_id: str) -> PreviewPublic:
        """What resuming from this checkpoint would skip, run and reuse, and the risk of a duplicate."""
        run = await self.store.get_run(run_id)
        record = await self.checkpoint(run_id, checkpoint_id)
        latest = await self.engine.latest_config(run)
        is_latest = latest is not None and latest["configurable"].get("checkpoint_id") == checkpoint_id
        position = STAGE_KEYS.index(record.stage)
        will_run = stages_after(record.stage, run.options)
        receipts = await self.store.list_receipts(run_id)
        later = set(will_run) | {REFLECTION.key}
        reused = [public_receipt(r) for r in receipts if r.status == "succeeded" and r.stage in later]
        in_doubt = [public_receipt(r) for r in receipts if r.status == "started"]
        return PreviewPublic(
            run_id=run_id,
            checkpoint_id=checkpoint_id,
            stage=record.stage,
            fork=not is_latest,
            skipped_stages=list(STAGE_KEYS[: position + 1]),
            stages_to_run=will_run,
            may_loop_back_to_search=reflection_ahead(record.stage),
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

    async def artifact_file(self, run: RunRecord, relative: str) -> Path:
        """The artifact's absolute path; ArtifactNotFound for anything else (including escapes). Resolving
        follows symlinks (stat calls): off the event loop."""
        return await asyncio.to_thread(self._artifact_file, run, relative)

    def _artifact_file(self, run: RunRecord, relative: str) -> Path:
        root = self.artifact_root(run)
        if root is None:
            raise _missing(run, relative)
        try:
            target = Workspace(root).resolve(relative)
            found = target.is_file()
        except (WorkspaceError, OSError) as exc:  # an escape, or a name the file system refuses
            raise ArtifactNotFound(f"artifact not found: {exc}") from None
        if not found:
            raise _missing(run, relative)
        return target

    def artifact_root(self, run: RunRecord) -> Path | None:
        if not run.artifact_dir:
            return None
        return Workspace(self.settings.workspace_dir).resolve(run.artifact_dir)

    def _list_artifacts(self, run: RunRecord) -> list[ArtifactPublic]:
        root = self.artifact_root(run)
        if root is None or not root.is_dir():
            return []
        return [
            ArtifactPublic(path=path.relative_to(root).as_posix(), size=path.stat().st_size)
            for path in sorted(root.rglob("*"))
            if path.is_file() and not path.is_symlink() and not path.name.startswith(".")
        ]


def tree_bytes(root: Path) -> int:
    """Bytes of the files under `root` (symlinks not followed)."""
    total = 0
    for path in root.rglob("*") if root.is_dir() else ():
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
    return total


def download_stem(title: str) -> str:
    """A file name for a run's downloads, from its topic (its title or question): its first eight words,
    letters and digits only, joined by '-' (the report's downloads and the workbench's file links)."""
    words = re.findall(r"[A-Za-z0-9]+", title)[:8]
    return "-".join(words).lower()[:80] or "deepresearch-report"


def public_run(run: RunRecord, queue: Mapping[str, int] | None = None) -> RunPublic:
    """The run as clients see it; `queue`: places in the queue (RunStore.queue_positions)."""
    values = run.to_dict() | {
        "queue_position": (queue or {}).get(run.run_id),
        "download_stem": download_stem(run.title or run.question),
    }
    if values["options"].get("corpus"):
        # a named collection's folder on the server is the server's business: clients know it by name
        values["options"] = {**values["options"], "corpus_dir": None}
    if values.get("pending_input"):
        pending = values["pending_input"]
        values["pending_input"] = {**pending, "waiting_seconds": waited(pending)}
    return RunPublic.model_validate(values, context=STORED)


def waited(pending_input: dict[str, Any]) -> float:
    """Seconds since a run began to wait for input (0 when unknown)."""
    try:
        since = datetime.fromisoformat(str(pending_input.get("since")))
    except ValueError:
        return 0.0
    return round(max(0.0, (datetime.now(UTC) - since).total_seconds()), 3)


def public_receipt(receipt: Receipt) -> ReceiptPublic:
    return ReceiptPublic.model_validate(receipt.to_dict())


def _missing(run: RunRecord, relative: str) -> ArtifactNotFound:
    """404 for a completed run (it has all the files it will ever write); 409 for any other: the file may
    come once the run goes on (a report right after the run started, or after it stopped early)."""
    if run.status == "completed":
        return ArtifactNotFound(f"artifact {relative} not found")
    return ArtifactNotYetWritten(
        f"the run is {run.status} and has not written {relative}: wait for its end event, or resume it "
        "if it stopped"
    )
