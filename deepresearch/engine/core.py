"""Runs a research to the end (or to a cancel): the engine of one process, shared by the CLI and the HTTP
runner. The event log of one pass is deepresearch/engine/execution.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, RunnableConfig, StateSnapshot

from config import Settings
from deepresearch.cpu import CpuPool
from deepresearch.engine.execution import EventSink, RunExecution
from deepresearch.engine.workspace import run_artifact_dir
from deepresearch.graph.plan_edit import PlanRejected
from deepresearch.options import STORED, ResearchOptions
from deepresearch.receipts.runtime import BudgetExceeded, CancelSignal, RunCancelled, StageError, ToolRuntime
from deepresearch.store import (
    DATABASE_ERRORS,
    DATABASE_UNAVAILABLE,
    LOCAL_OWNER,
    CheckpointFences,
    CheckpointRecord,
    LeaseLost,
    RunRecord,
    RunStore,
    open_persistence,
    thread_id_for,
    utcnow,
)
from stages import STAGES_BY_KEY
from tools import ResearchContext, open_research_tools
from workflow import build_graph

logger = logging.getLogger(__name__)
REPORT_ARTIFACT = STAGES_BY_KEY["write_report"].artifact

STREAM_MODES = ["tasks", "checkpoints", "custom"]


def graph_config(thread_id: str, checkpoint_id: str | None = None, checkpoint_ns: str = "") -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        configurable |= {"checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}
    return {"configurable": configurable}


class ResearchEngine:
    """The engine of one process: settings, store, checkpointer and the compiled graph."""

    def __init__(
        self,
        settings: Settings,
        store: RunStore,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        fences: CheckpointFences | None = None,
        cpu: CpuPool | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.graph = graph
        self.fences = fences or CheckpointFences(store)
        self.cpu = cpu or CpuPool.for_setting(settings.cpu_workers)
        """Worker processes for the runs' CPU-bound work (extraction, ranking, rendering)."""

    async def create_run(
        self,
        question: str,
        options: ResearchOptions | None = None,
        owner: str = LOCAL_OWNER,
        active_limit: int | None = None,
    ) -> RunRecord:
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        options = options or self.settings.default_options()
        run = await self.store.create_run(
            question, options.model_dump(), self.settings.engine_mode, owner=owner, active_limit=active_limit
        )
        artifact_dir = run_artifact_dir(question, run.run_id)
        return await self.store.update_run(run.run_id, artifact_dir=artifact_dir)

    async def _announce_lost_checkpoints(self, run: RunRecord, execution: RunExecution) -> None:
        """A process killed between LangGraph saving a stage's checkpoint and announcing it (indexed or
        not) leaves a business checkpoint no client was told of: index it and announce it now, marked
        `recovered`, so no `checkpoint` event is ever lost. A checkpoint is a stage's when its parent's
        only next task was that stage."""
        announced = {
            e.data.get("checkpoint_id")
            for e in await self.store.list_events(run.run_id)
            if e.type == "checkpoint"
        }
        history = [s async for s in self.graph.aget_state_history(graph_config(run.thread_id))]
        by_id = {s.config["configurable"]["checkpoint_id"]: s for s in history}
        for snapshot in reversed(history):  # oldest first, as they were written
            configurable = snapshot.config["configurable"]
            parent_id = (snapshot.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            parent = by_id.get(parent_id) if parent_id else None
            if configurable["checkpoint_id"] in announced or parent is None or len(parent.next) != 1:
                continue
            stage = STAGES_BY_KEY.get(parent.next[0])
            if stage is None:
                continue
            record = CheckpointRecord(
                run_id=run.run_id,
                checkpoint_id=configurable["checkpoint_id"],
                stage=stage.key,
                title=stage.title,
                created_at=snapshot.created_at or utcnow(),
                next=list(snapshot.next),
                summary=(snapshot.values.get("stage_notes") or {}).get(stage.key, ""),
                thread_id=configurable["thread_id"],
                checkpoint_ns=configurable.get("checkpoint_ns", ""),
                parent_checkpoint_id=parent_id,
                fork_of=None,
            )
            # a no-op if it was indexed before the kill
            await self.store.add_checkpoint(record, fence=execution.fence)
            data = {**record.to_dict(), "resumable": True, "indexed": True, "recovered": True}
            await execution.emit("checkpoint", stage.key, data)

    # --- the graph's saved state, for readers and steering: the compiled graph stays behind this face ----
    async def state(self, config: RunnableConfig) -> StateSnapshot:
        """The state at a checkpoint (the thread's latest without a checkpoint_id)."""
        return await self.graph.aget_state(config)

    def state_history(
        self, config: RunnableConfig, limit: int | None = None, before: RunnableConfig | None = None
    ) -> AsyncIterator[StateSnapshot]:
        """The thread's saved states, newest first."""
        return self.graph.aget_state_history(config, limit=limit, before=before)

    async def update_state(
        self, config: RunnableConfig, values: dict[str, Any], as_node: str
    ) -> RunnableConfig:
        """A new checkpoint on the thread, as if ``as_node`` had written ``values`` (a fork's seed)."""
        return await self.graph.aupdate_state(config, values, as_node=as_node)

    async def delete_thread(self, thread_id: str) -> None:
        """Every checkpoint and pending write of the thread (a deleted run's)."""
        await self.graph.checkpointer.adelete_thread(thread_id)  # type: ignore[union-attr]

    def subgraph_names(self, namespace: str | None = None) -> list[str]:
        return [name for name, _ in self.graph.get_subgraphs(namespace=namespace)]

    def drawing(self, xray: bool | int) -> dict[str, Any]:
        """The graph as LangGraph draws it (nodes and edges, JSON)."""
        return self.graph.get_graph(xray=xray).to_json()

    async def latest_config(self, run: RunRecord) -> RunnableConfig | None:
        snapshot = await self.graph.aget_state(graph_config(run.thread_id))
        return snapshot.config if snapshot.values else None

    async def _resume_config(self, run: RunRecord, requested: RunnableConfig | None) -> RunnableConfig | None:
        """The config to continue from, or None for a fresh start.

        Continuing from the thread's latest checkpoint uses a config WITHOUT checkpoint_id: LangGraph then
        hands finished Send branches their saved writes back. Addressing a checkpoint by id is time travel:
        it forks, and every task after it runs again (receipts keep that free of repeated calls).
        """
        latest = await self.latest_config(run)
        if latest is None:
            return None
        if requested is None or _checkpoint_id(requested) == _checkpoint_id(latest):
            return graph_config(run.thread_id)
        return requested

    async def execute(
        self,
        run_id: str,
        *,
        checkpoint_config: RunnableConfig | None = None,
        cancel: CancelSignal | None = None,
        on_event: EventSink | None = None,
        resume: Any = None,
        fence: str | None = None,
    ) -> RunRecord:
        """Run (or resume) to the end, a cancel, a failure or a wait for input; returns the final record.

        With no ``checkpoint_config`` a run that has checkpoints resumes from its latest one; pass the
        ``config`` of an earlier StateSnapshot to fork from there. ``resume`` answers the `interrupt()`
        the run waits at (LangGraph's ``Command(resume=...)``). With ``fence`` (the lease owner this
        process executes the run as) every write of the execution checks that lease: once another process
        has taken the run over, this one writes nothing more and returns the run as the store has it.
        """
        thread_id = thread_id_for(run_id)
        if fence is not None:
            self.fences.hold(thread_id, run_id, fence)
        try:
            return await self._execute(run_id, checkpoint_config, cancel, on_event, fence, resume)
        except LeaseLost as lost:
            logger.warning("run %s: %s; its new owner continues it, this execution stops", run_id, lost)
            return await self.store.get_run(run_id)
        finally:
            self.fences.drop(thread_id)

    async def _execute(
        self,
        run_id: str,
        checkpoint_config: RunnableConfig | None,
        cancel: CancelSignal | None,
        on_event: EventSink | None,
        fence: str | None,
        resume: Any,
    ) -> RunRecord:
        run = await self.store.get_run(run_id)
        execution = RunExecution(self.store, run, on_event, fence)
        execution.crash_after_checkpoint = self.settings.crash_after_checkpoint
        cancel = cancel or CancelSignal(run_id, self.store)
        resume_config = await self._resume_config(run, checkpoint_config)
        execution.fork_of = _checkpoint_id(resume_config)  # set only when addressing an older checkpoint
        options = ResearchOptions.model_validate(run.options, context=STORED)
        await self._begin(run, execution, resume_config, checkpoint_config)
        ending = await self._stream(run, execution, options, cancel, resume_config, resume)
        final = await self._conclude(run, execution, cancel, ending)
        if ending.torn_down:
            raise asyncio.CancelledError
        return final

    async def _begin(
        self,
        run: RunRecord,
        execution: RunExecution,
        resume_config: RunnableConfig | None,
        checkpoint_config: RunnableConfig | None,
    ) -> None:
        """Mark the run running, say so in its log, and announce checkpoints a killed process left unsaid."""
        await self.store.update_run(
            run.run_id,
            fence=execution.fence,
            status="running",
            error=None,
            started_at=run.started_at or utcnow(),
            finished_at=None,
        )
        await execution.emit(
            "run_status",
            None,
            {
                "status": "running",
                "engine": run.engine,
                "resumed": resume_config is not None,
                "from_checkpoint": _checkpoint_id(checkpoint_config),
            },
        )
        if resume_config is not None:
            await self._announce_lost_checkpoints(run, execution)

    async def _stream(
        self,
        run: RunRecord,
        execution: RunExecution,
        options: ResearchOptions,
        cancel: CancelSignal,
        resume_config: RunnableConfig | None,
        resume: Any,
    ) -> _Ending:
        """Stream the graph from where the run stands until it ends, and say how it ended."""
        runtime = ToolRuntime(run.run_id, self.store, cancel, options.budget, run.started_at, execution.fence)

        async def indexing(done: int, total: int) -> None:  # the run's document folder, while it is long
            text = f"Indexing the documents: {done} of {total} files"
            await execution.emit("message", None, {"text": text, "indexed": done, "total": total})

        try:
            async with open_research_tools(self.settings, options, runtime, self.cpu, indexing) as tools:
                context = ResearchContext(
                    run_id=run.run_id, settings=self.settings, tools=tools, cancel=cancel
                )
                graph_input: Any = None  # continue from the latest checkpoint
                if resume is not None and resume_config:
                    graph_input = Command(resume=resume)  # the answer to the interrupt() it waits at
                elif not resume_config:
                    graph_input = {
                        "run_id": run.run_id,
                        "question": run.question,
                        "options": options.model_dump(),
                        "engine": run.engine,
                        "artifact_dir": run.artifact_dir,
                    }
                config = resume_config or graph_config(run.thread_id)
                try:
                    async for namespace, mode, payload in self.graph.astream(
                        graph_input,
                        config,
                        context=context,
                        stream_mode=STREAM_MODES,
                        subgraphs=True,
                        durability="sync",
                        control=cancel.control,
                    ):
                        await execution.handle(namespace, mode, payload)
                finally:
                    # shielded calls still in flight finish (and record their receipts) while their
                    # clients are open: the tools close when this block ends
                    await runtime.wait_inflight()
        except LeaseLost:
            raise  # another process owns the run now: nothing more is written here (see execute)
        except DATABASE_UNAVAILABLE:
            # The database went away mid-run (a restart, a network cut): nothing can be recorded now, and
            # "failed" would be wrong. The run stays `running`; once its lease lapses, a takeover scan
            # (here or on another replica) resumes it from its latest checkpoint.
            raise
        except (RunCancelled, GraphDrained) as exc:
            logger.info("run %s cancelled: %s", run.run_id, exc)
            reason = exc.reason if isinstance(exc, BudgetExceeded | PlanRejected) else None
            return _Ending("interrupted" if cancel.kind == "shutdown" else "cancelled", reason)
        except StageError as exc:
            return _Ending("failed", str(exc), exc.detail)
        except asyncio.CancelledError:
            # the process is being torn down (a second Ctrl-C, a task cancel): record the run as
            # interrupted - resumable - before letting the cancellation through
            return _Ending(
                "interrupted", "stopped abruptly; calls in flight may be made again", torn_down=True
            )
        except Exception as exc:  # any other failure must still leave a resumable, explained run
            logger.exception("run %s failed unexpectedly (resumable once the cause is fixed)", run.run_id)
            return _Ending("failed", f"{type(exc).__name__}: {exc}")
        return _Ending("completed")

    async def _conclude(
        self, run: RunRecord, execution: RunExecution, cancel: CancelSignal, ending: _Ending
    ) -> RunRecord:
        """Record how the execution ended: the log's terminal events, then the run's final fields."""
        status, error = ending.status, ending.error
        # the final state, read once (a checkpoint to load and decode) for the three questions below
        final_state = (
            await self.graph.aget_state(graph_config(run.thread_id)) if status == "completed" else None
        )
        pending_input = _pending_input(final_state) if final_state is not None else None
        if pending_input is not None:
            # stopped at interrupt(): nothing executes it until a person answers (no lease, no task)
            status = "waiting_for_input"
            await execution.emit("input_requested", None, pending_input)
        elif final_state is not None and final_state.next and cancel.reason is not None:
            # astream can end without raising when a drain lands between the last two steps
            status = "interrupted" if cancel.kind == "shutdown" else "cancelled"
        # The log gets its terminal events before the status flips, so a reader that sees a stopped run
        # (in any process) has already been able to read its `end`.
        if error:
            folded = {"detail": ending.detail} if ending.detail else {}
            await execution.emit("error", None, {"message": error, "resumable": True, **folded})
        await execution.emit("run_status", None, {"status": status, "engine": run.engine})
        await execution.emit(
            "end",
            None,
            {
                "status": status,
                "error": error,
                "usage": execution.usage.to_dict(),
                # the artifact path (GET …/artifacts/{path}), as in the run detail: not the server's path
                "report_path": REPORT_ARTIFACT
                if status == "completed" and self._report_path(final_state)
                else None,
            },
        )
        final_fields: dict[str, Any] = {
            "status": status,
            "error": error,
            "finished_at": utcnow(),
            "usage": execution.usage.to_dict(),
        }
        if status == "completed":
            final_fields["current_stage"] = None
        if pending_input is not None:
            final_fields["pending_input"] = pending_input
        if status == "completed":
            await self._compact(run, execution.fence)  # before the flip: a reader that sees it sees it all
        return await self.store.update_run(run.run_id, fence=execution.fence, **final_fields)

    async def _compact(self, run: RunRecord, fence: str | None) -> None:
        """A completed run keeps its business checkpoints and its final state; LangGraph's bookkeeping for
        resuming mid-way goes (store/savers.py). A failed compaction leaves a bigger database, no worse."""
        keep = [c.checkpoint_id for c in await self.store.list_checkpoints(run.run_id)]
        try:
            await self.store.compact_thread(run.run_id, run.thread_id, keep, fence=fence)
        except DATABASE_ERRORS:
            logger.warning("run %s: compacting its checkpoints failed; they stay", run.run_id, exc_info=True)

    async def report_path(self, run: RunRecord, status: str) -> str | None:
        """Path of the finished report (None until the run is completed)."""
        if status != "completed":
            return None
        return self._report_path(await self.graph.aget_state(graph_config(run.thread_id)))

    def _report_path(self, snapshot: StateSnapshot | None) -> str | None:
        relative = (snapshot.values.get("report") or {}).get("report_path") if snapshot else None
        return str(self.settings.workspace_dir / relative) if relative else None


@dataclass(frozen=True, slots=True)
class _Ending:
    """How streaming the graph ended, before the final state is looked at (core._conclude)."""

    status: str
    error: str | None = None
    detail: str | None = None
    """The raw failure behind a stage error's plain-words message."""
    torn_down: bool = False
    """The process is being torn down: the cancellation goes on once the run is recorded."""


def _pending_input(snapshot: StateSnapshot) -> dict[str, Any] | None:
    """The input the run's graph waits for at an `interrupt()` (kind, payload, since), or None."""
    for waiting in snapshot.interrupts:
        if isinstance(waiting.value, dict) and waiting.value.get("kind"):
            return {**waiting.value, "since": utcnow()}
    return None


def _checkpoint_id(config: RunnableConfig | None) -> str | None:
    return (config or {}).get("configurable", {}).get("checkpoint_id")


@asynccontextmanager
async def open_engine(settings: Settings) -> AsyncIterator[ResearchEngine]:
    """Open the store and checkpointer (set up, idempotent) and compile the graph on them."""
    async with open_persistence(
        settings.resolved_database_url,
        pool_size=settings.database_pool_size,
        pool_timeout=settings.database_pool_timeout_seconds,
    ) as persistence:
        graph = build_graph(persistence.checkpointer)
        engine = ResearchEngine(settings, persistence.store, graph, persistence.fences)
        try:
            yield engine
        finally:
            engine.cpu.close()
