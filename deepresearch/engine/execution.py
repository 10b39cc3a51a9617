"""One pass of a run through the graph: LangGraph's stream turned into the run's event log.

Event contract per business stage: ``tool_call`` → the stage's sub-tool ``tool_call``/``tool_result``
pairs → ``checkpoint`` → ``tool_result``. LangGraph reports a task's result before the checkpoint of its
step, so stage results are buffered until that checkpoint is out. Every event is persisted (and gets its
``seq``) before anyone sees it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from deepresearch.receipts.runtime import RunCancelled
from deepresearch.store import CheckpointRecord, EventRecord, RunRecord, RunStore, utcnow
from stages import STAGES_BY_KEY

EventSink = Callable[[EventRecord], Awaitable[None] | None]


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
        self._current_stage: str | None = None
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
            if name != self._current_stage:  # a stage's parallel branches: one update, not one each
                self._current_stage = name
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
        artifact = f"{values.get('artifact_dir', '')}/{stage.artifact}"
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
