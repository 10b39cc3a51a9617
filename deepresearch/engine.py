"""Runs a research to the end (or to a cancel) and turns LangGraph's stream into the run's event log.

Shared by the CLI and the HTTP runner. Event contract per business stage:
``tool_call`` → the stage's sub-tool ``tool_call``/``tool_result`` pairs → ``checkpoint`` → ``tool_result``.
LangGraph reports a task's result before the checkpoint of its step, so stage results are buffered until
that checkpoint is out. Every event is persisted (and gets its ``seq``) before anyone sees it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphDrained
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RunnableConfig

from config import STORED, ResearchOptions, Settings
from deepresearch.store import (
    DATABASE_ERRORS,
    LOCAL_OWNER,
    CheckpointFences,
    CheckpointRecord,
    EventRecord,
    LeaseLost,
    RunRecord,
    RunStore,
    open_persistence,
    thread_id_for,
    utcnow,
)
from deepresearch.toolrun import BudgetExceeded, CancelSignal, RunCancelled, StageError, ToolRuntime
from deepresearch.workspace import run_artifact_dir
from stages import STAGES_BY_KEY
from tools import ResearchContext, open_research_tools
from workflow import build_graph

logger = logging.getLogger(__name__)

EventSink = Callable[[EventRecord], Awaitable[None] | None]
STREAM_MODES = ["tasks", "checkpoints", "custom"]


def graph_config(thread_id: str, checkpoint_id: str | None = None, checkpoint_ns: str = "") -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        configurable |= {"checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}
    return {"configurable": configurable}


@dataclass(slots=True)
class _Usage:
    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    reused_calls: int = 0
    tokens_saved: int = 0
    cost_saved_usd: float = 0.0
    by_stage: dict[str, dict[str, float]] = field(default_factory=dict)
    model_answers: int = 0
    unusable_answers: int = 0
    fallbacks: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _Usage:
        known = {
            k: data[k]
            for k in (
                "tokens",
                "cost_usd",
                "calls",
                "reused_calls",
                "tokens_saved",
                "cost_saved_usd",
                "by_stage",
                "model_answers",
                "unusable_answers",
                "fallbacks",
            )
            if k in data
        }
        return cls(**known)

    def add(self, event: dict[str, Any]) -> None:
        tokens, cost = int(event.get("tokens") or 0), float(event.get("cost_usd") or 0.0)
        fallback = event.get("fallback")
        if isinstance(fallback, dict) and fallback not in self.fallbacks:  # a reused one counts once
            self.fallbacks.append({"step": str(fallback.get("step")), "reason": str(fallback.get("reason"))})
        if event.get("reused"):
            self.reused_calls += 1
            self.tokens_saved += tokens
            self.cost_saved_usd += cost
            return
        self.calls += 1
        self.model_answers += int(event.get("answers") or 0)
        self.unusable_answers += int(event.get("unusable") or 0)
        self.tokens += tokens
        self.cost_usd += cost
        stage = self.by_stage.setdefault(event.get("stage") or "other", {"tokens": 0, "cost_usd": 0.0})
        stage["tokens"] += tokens
        stage["cost_usd"] += cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 6),
            "calls": self.calls,
            "reused_calls": self.reused_calls,
            "tokens_saved": self.tokens_saved,
            "cost_saved_usd": round(self.cost_saved_usd, 6),
            "by_stage": self.by_stage,
            "model_answers": self.model_answers,
            "unusable_answers": self.unusable_answers,
            "fallbacks": self.fallbacks,
        }


class RunExecution:
    """One pass of a run through the graph (a fresh start, a resume, or a fork)."""

    def __init__(
        self, store: RunStore, run: RunRecord, on_event: EventSink | None, fence: str | None = None
    ) -> None:
        self.run = run
        self.store = store
        self.on_event = on_event
        self.fence = fence
        """The lease owner this execution writes as (fencing: LeaseLost once another process took over)."""
        self.usage = _Usage.from_dict(run.usage)
        self._pending_results: list[dict[str, Any]] = []
        self._stage_calls: dict[str, str] = {}
        self.fork_of: str | None = None
        self.crash_after_checkpoint = ""
        """Fault injection (DEEPRESEARCH_CRASH_AFTER_CHECKPOINT): die here, like a kill -9."""

    async def emit(self, type_: str, stage: str | None, data: dict[str, Any]) -> EventRecord:
        record = await self.store.append_event(self.run.run_id, type_, stage, data, fence=self.fence)
        if self.on_event is not None:
            maybe = self.on_event(record)
            if maybe is not None:
                await maybe
        return record

    async def handle(self, namespace: tuple[str, ...], mode: str, payload: Any) -> None:
        if mode == "custom" and isinstance(payload, dict) and "event" in payload:
            data = {k: v for k, v in payload.items() if k not in ("event", "stage")}
            if payload["event"] in ("tool_call", "tool_result"):
                data["parent_call_id"] = self._stage_calls.get(payload.get("stage") or "")
            if payload["event"] == "tool_result":
                self.usage.add(payload)
            await self.emit(payload["event"], payload.get("stage"), data)
        elif mode == "tasks" and not namespace:
            await self._on_task(payload)
        elif mode == "checkpoints" and not namespace:
            await self._on_checkpoint(payload)

    async def _on_task(self, task: dict[str, Any]) -> None:
        name = task.get("name", "")
        stage = STAGES_BY_KEY.get(name)
        if "result" not in task and "error" not in task:  # a task starts
            await self.store.update_run(self.run.run_id, current_stage=name, fence=self.fence)
            if stage is not None:
                self._stage_calls[name] = task["id"]
                await self.emit(
                    "tool_call",
                    name,
                    {
                        "tool_name": stage.tool_name,
                        "call_id": task["id"],
                        "title": stage.title,
                        "receipt_key": stage.receipt_key,
                        "engine": self.run.engine,
                    },
                )
            return
        if stage is not None and task.get("error"):
            await self.emit(
                "tool_result",
                name,
                {
                    "tool_name": stage.tool_name,
                    "call_id": task["id"],
                    "ok": False,
                    "error": str(task["error"]),
                    # a pause is not a failure: the stage stopped at a tool boundary and will resume
                    "cancelled": isinstance(task["error"], RunCancelled),
                },
            )
            return
        self._pending_results.append(task)

    async def _on_checkpoint(self, snapshot: dict[str, Any]) -> None:
        configurable = snapshot["config"]["configurable"]
        checkpoint_id = configurable["checkpoint_id"]
        values = snapshot.get("values") or {}
        finished = self._pending_results
        self._pending_results = []
        stage_name = finished[-1]["name"] if finished else None
        parent = (snapshot.get("parent_config") or {}).get("configurable", {}).get("checkpoint_id")
        if stage_name not in STAGES_BY_KEY:
            # The input, the reflection loop, finalize: LangGraph's own checkpoints, not safety points a
            # client may count or resume from. They keep their own type so `checkpoint` stays the contract.
            await self.emit(
                "graph_checkpoint",
                stage_name or "start",
                {"checkpoint_id": checkpoint_id, "next": list(snapshot.get("next", []))},
            )
            return
        stage = STAGES_BY_KEY[stage_name]
        finished = [task for task in finished if task["name"] == stage.key]
        record = CheckpointRecord(
            run_id=self.run.run_id,
            checkpoint_id=checkpoint_id,
            stage=stage.key,
            title=stage.title,
            created_at=utcnow(),
            next=list(snapshot.get("next", [])),
            summary=(values.get("stage_notes") or {}).get(stage.key, ""),
            thread_id=configurable["thread_id"],
            checkpoint_ns=configurable.get("checkpoint_ns", ""),
            parent_checkpoint_id=parent,
            fork_of=self.fork_of,
        )
        self.fork_of = None  # only the first checkpoint of a forked execution marks the fork
        if self.crash_after_checkpoint == stage.key:
            # the window a kill -9 can hit: LangGraph saved the checkpoint, nobody indexed or announced it
            os.kill(os.getpid(), signal.SIGKILL)
        await self.store.add_checkpoint(record, fence=self.fence)
        await self.store.update_run(self.run.run_id, usage=self.usage.to_dict(), fence=self.fence)
        await self.emit("checkpoint", stage.key, {**record.to_dict(), "resumable": True, "indexed": True})
        artifact_dir = values.get("artifact_dir", "")
        artifact = (
            f"{artifact_dir}/{stage.artifact}"
            if stage.artifact
            else (values.get("report") or {}).get("report_path")
        )
        for task in finished:
            await self.emit(
                "tool_result",
                task["name"],
                {
                    "tool_name": stage.tool_name,
                    "call_id": task["id"],
                    "ok": True,
                    "receipt_key": stage.receipt_key,
                    "artifact_path": artifact,
                    "langgraph_checkpoint_id": checkpoint_id,
                    "summary": record.summary,
                },
            )


class ResearchEngine:
    """The engine of one process: settings, store, checkpointer and the compiled graph."""

    def __init__(
        self,
        settings: Settings,
        store: RunStore,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        fences: CheckpointFences | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.graph = graph
        self.fences = fences or CheckpointFences(store)

    async def create_run(
        self, question: str, options: ResearchOptions | None = None, owner: str = LOCAL_OWNER
    ) -> RunRecord:
        question = question.strip()
        if not question:
            raise ValueError("the question is empty")
        options = options or self.settings.default_options()
        run = await self.store.create_run(
            question, options.model_dump(), self.settings.engine_mode, owner=owner
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
        fence: str | None = None,
    ) -> RunRecord:
        """Run (or resume) to the end, a cancel or a failure; returns the final run record.

        With no ``checkpoint_config`` a run that has checkpoints resumes from its latest one; pass the
        ``config`` of an earlier StateSnapshot to fork from there. With ``fence`` (the lease owner this
        process executes the run as) every write of the execution checks that lease: once another process
        has taken the run over, this one writes nothing more and returns the run as the store has it.
        """
        thread_id = thread_id_for(run_id)
        if fence is not None:
            self.fences.hold(thread_id, run_id, fence)
        try:
            return await self._execute(run_id, checkpoint_config, cancel, on_event, fence)
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
    ) -> RunRecord:
        run = await self.store.get_run(run_id)
        execution = RunExecution(self.store, run, on_event, fence)
        execution.crash_after_checkpoint = self.settings.crash_after_checkpoint
        cancel = cancel or CancelSignal(run_id, self.store)
        resume_config = await self._resume_config(run, checkpoint_config)
        execution.fork_of = _checkpoint_id(resume_config)  # set only when addressing an older checkpoint
        options = ResearchOptions.model_validate(run.options, context=STORED)
        runtime = ToolRuntime(run_id, self.store, cancel, options.budget, run.started_at, fence)
        await self.store.update_run(
            run_id,
            fence=fence,
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
        status, error, detail = "completed", None, None
        torn_down = False
        try:
            async with open_research_tools(self.settings, options, runtime) as tools:
                context = ResearchContext(run_id=run_id, settings=self.settings, tools=tools, cancel=cancel)
                graph_input = (
                    None
                    if resume_config
                    else {
                        "run_id": run_id,
                        "question": run.question,
                        "options": options.model_dump(),
                        "engine": run.engine,
                        "artifact_dir": run.artifact_dir,
                    }
                )
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
        except DATABASE_ERRORS:
            # The database went away mid-run (a restart, a network cut): nothing can be recorded now, and
            # "failed" would be wrong. The run stays `running`; once its lease lapses, a takeover scan
            # (here or on another replica) resumes it from its latest checkpoint.
            raise
        except (RunCancelled, GraphDrained) as exc:
            status = "interrupted" if cancel.kind == "shutdown" else "cancelled"
            error = exc.reason if isinstance(exc, BudgetExceeded) else None
            logger.info("run %s cancelled: %s", run_id, exc)
        except StageError as exc:
            status, error, detail = "failed", str(exc), exc.detail
        except asyncio.CancelledError:
            # the process is being torn down (a second Ctrl-C, a task cancel): record the run as
            # interrupted - resumable - before letting the cancellation through
            status, error, torn_down = (
                "interrupted",
                "stopped abruptly; calls in flight may be made again",
                True,
            )
        except Exception as exc:  # any other failure must still leave a resumable, explained run
            logger.exception("run %s failed unexpectedly (resumable once the cause is fixed)", run_id)
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        if status == "completed" and await self._interrupted_by_cancel(run_id, cancel):
            status = "interrupted" if cancel.kind == "shutdown" else "cancelled"
        # The log gets its terminal events before the status flips, so a reader that sees a stopped run
        # (in any process) has already been able to read its `end`.
        if error:
            folded = {"detail": detail} if detail else {}
            await execution.emit("error", None, {"message": error, "resumable": True, **folded})
        await execution.emit("run_status", None, {"status": status, "engine": run.engine})
        await execution.emit(
            "end",
            None,
            {
                "status": status,
                "error": error,
                "usage": execution.usage.to_dict(),
                "report_path": await self.report_path(run, status),
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
        final = await self.store.update_run(run_id, fence=fence, **final_fields)
        if torn_down:
            raise asyncio.CancelledError
        return final

    async def _interrupted_by_cancel(self, run_id: str, cancel: CancelSignal) -> bool:
        # astream can end without raising when a drain lands between the last two steps
        snapshot = await self.graph.aget_state(graph_config((await self.store.get_run(run_id)).thread_id))
        return bool(snapshot.next) and cancel.reason is not None

    async def report_path(self, run: RunRecord, status: str) -> str | None:
        """Path of the finished report (None until the run is completed)."""
        if status != "completed":
            return None
        snapshot = await self.graph.aget_state(graph_config(run.thread_id))
        relative = (snapshot.values.get("report") or {}).get("report_path")
        return str(self.settings.workspace_dir / relative) if relative else None


def _checkpoint_id(config: RunnableConfig | None) -> str | None:
    return (config or {}).get("configurable", {}).get("checkpoint_id")


@asynccontextmanager
async def open_engine(settings: Settings) -> AsyncIterator[ResearchEngine]:
    """Open the store and checkpointer (set up, idempotent) and compile the graph on them."""
    async with open_persistence(settings.resolved_database_url) as persistence:
        graph = build_graph(persistence.checkpointer)
        yield ResearchEngine(settings, persistence.store, graph, persistence.fences)
