"""A protocol run's stream, in the SSE format LangGraph's SDKs parse: `metadata` first (run_id, attempt),
then a part per requested mode for each of the research's events after the run's `after_seq`, until the
research's next `end`, then `end` (or `error` for a failed run).

- `values`: the state at every business checkpoint, and at the end (with `__interrupt__` while waiting);
- `updates`: {stage: what the stage changed in the state} at every business checkpoint, keyed by the
  business stage names; {"__interrupt__": [...]} when the run stops for plan review;
- `custom`: our events as they are logged (tool_call, tool_result, checkpoint, message, ...);
- `messages-tuple` / `messages`: the report's text while a model writes it (report_delta);
- `checkpoints`: every checkpoint the research wrote (LangGraph's payload: config, parent_config, values,
  metadata, next, tasks); `tasks`: each stage's task as it starts and ends; `debug`: both, wrapped;
- with `stream_subgraphs`, the `custom` parts that a subgraph stage (search_web, analyze_findings) sent
  from inside are named as LangGraph names a subgraph's parts: `custom|search_web:<task id>`.

Every part's SSE id is the seq of the research event behind it, so a client reconnecting with
Last-Event-ID resumes after it. The log is read, not process memory: a run executing on another replica
streams the same way (polled every second, or woken when this process appends)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from sse_starlette import ServerSentEvent

from deepresearch.api.agent_protocol.state import (
    jsonable,
    snapshot,
    stage_index,
    thread_state,
    values_with_interrupts,
    with_messages,
)
from deepresearch.errors import RunNotFound
from deepresearch.service.runs import RunService
from deepresearch.store import EventRecord, RunRecord
from deepresearch.store.steering import ProtocolRun

_NOT_CUSTOM = frozenset({"end", "report_delta"})
_CHECKPOINTS = frozenset({"checkpoint", "graph_checkpoint"})
_TASK_EVENTS = {"tool_call": "task", "tool_result": "task_result"}
_IDLE_LIMIT = 3600
"""Polls of one second with nothing new before a stream whose research never ends is closed."""


def _sse(event: str, data: Any, seq: int | None = None) -> ServerSentEvent:
    text = json.dumps(data, ensure_ascii=False, default=str)
    return ServerSentEvent(data=text, event=event, id=str(seq) if seq is not None else None)


class RunStream:
    """The parts of one protocol run, for the modes asked."""

    def __init__(
        self,
        service: RunService,
        run: ProtocolRun,
        modes: list[str],
        started: Callable[[ProtocolRun], Awaitable[ProtocolRun]] | None = None,
        subgraphs: bool = False,
    ) -> None:
        self.service = service
        self.run = run
        self.started = started
        """Waits for an enqueued run to start (lifecycle.Protocol.started)."""
        self.subgraphs = set(service.engine.subgraph_names()) if subgraphs else set[str]()
        self._step = 0
        """The latest checkpoint's step (the `debug` parts' step)."""
        self.modes = set(modes)
        self._report: dict[str, str] = {}
        self._research: RunRecord | None = None

    async def events(self, last_event_id: int | None) -> AsyncIterator[ServerSentEvent]:
        if last_event_id is None:
            yield _sse("metadata", {"run_id": self.run.run_id, "attempt": 1})
        if self.run.after_seq < 0 and self.started is not None:
            self.run = await self.started(self.run)  # enqueued: its events begin once it starts
        if self.run.after_seq < 0:
            # it never ran: cancelled while it waited, or its continuation was refused when its turn came
            if self.run.status == "error":
                yield _sse("error", {"error": "RunFailed", "message": "the enqueued run could not start"})
            yield _sse("end", None)
            return
        last = max(self.run.after_seq, last_event_id or 0)
        async for event in self._tail(last):
            async for part in self._parts(event):
                yield part
            if event.type == "end":
                return
        yield _sse("end", None)  # the research went away (deleted) before its end

    async def _tail(self, last: int) -> AsyncIterator[EventRecord]:
        """The research's events after `last`, through the first `end`."""
        run_id = self.run.research_id
        with self.service.notifier.subscribe(run_id) as subscription:
            for _ in range(_IDLE_LIMIT):
                subscription.wake.clear()
                try:
                    batch = await self.service.views.events(run_id, after=last, limit=500)
                except RunNotFound:
                    return
                for event in batch:
                    last = event.seq
                    yield event
                    if event.type == "end":
                        return
                if len(batch) == 500:
                    continue
                # on a timeout: another replica's events (SQLite has no NOTIFY) are read from the log again
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(subscription.wake.wait(), timeout=1.0)

    async def _parts(self, event: EventRecord) -> AsyncIterator[ServerSentEvent]:
        seq = event.seq
        if event.type == "checkpoint" and event.stage and ({"values", "updates"} & self.modes):
            research = await self._get_research()
            now = await snapshot(self.service, research, event.data.get("checkpoint_id"))
            if "updates" in self.modes:
                before = event.data.get("parent_checkpoint_id")
                earlier = await snapshot(self.service, research, before) if before else None
                yield _sse(
                    "updates", {event.stage: _changed(earlier.values if earlier else {}, now.values)}, seq
                )
            if "values" in self.modes:
                yield _sse(
                    "values", await with_messages(self.service, research, jsonable(dict(now.values))), seq
                )
        if event.type == "input_requested" and "updates" in self.modes:
            pending = jsonable(event.data)
            yield _sse(
                "updates", {"__interrupt__": [{"value": pending, "id": f"{self.run.run_id}:{seq}"}]}, seq
            )
        if event.type == "report_delta":
            async for part in self._message(event):
                yield part
        if event.type in _CHECKPOINTS and ({"checkpoints", "debug"} & self.modes):
            async for part in self._checkpoint(event):
                yield part
        if event.type in _TASK_EVENTS and "parent_call_id" not in event.data:  # a stage's own task
            async for part in self._task(event):
                yield part
        if "custom" in self.modes and event.type not in _NOT_CUSTOM:
            parent = event.data.get("parent_call_id")
            name = "custom"
            if event.stage in self.subgraphs and parent:  # sent from inside a subgraph: its namespace
                name = f"custom|{event.stage}:{parent}"
            yield _sse(
                name, {"event": event.type, "stage": event.stage, "seq": seq, **jsonable(event.data)}, seq
            )
        if event.type == "end":
            async for part in self._end(event):
                yield part

    async def _checkpoint(self, event: EventRecord) -> AsyncIterator[ServerSentEvent]:
        """LangGraph's `checkpoints` payload (and `debug`'s checkpoint) for a checkpoint of the research."""
        research = await self._get_research()
        found = await snapshot(self.service, research, event.data.get("checkpoint_id"))
        if not found.values:
            return
        state = thread_state(self.run.thread_id, found, await stage_index(self.service, research))

        def config(ref: Any) -> dict[str, Any] | None:
            return {"configurable": ref.model_dump()} if ref is not None else None

        payload = {
            "config": config(state.checkpoint),
            "parent_config": config(state.parent_checkpoint),
            "values": state.values,
            "metadata": state.metadata,
            "next": state.next,
            "tasks": [t.model_dump(exclude_none=True) for t in state.tasks],
        }
        self._step = int(state.metadata.get("step") or self._step)
        if "checkpoints" in self.modes:
            yield _sse("checkpoints", payload, event.seq)
        if "debug" in self.modes:
            yield _sse("debug", self._debug("checkpoint", event, payload), event.seq)

    async def _task(self, event: EventRecord) -> AsyncIterator[ServerSentEvent]:
        """LangGraph's `tasks` payloads for a stage's task: when it starts, and when it ends. The stage's
        input and result are the checkpoints' values (the `values`, `updates`, `checkpoints` modes)."""
        if not ({"tasks", "debug"} & self.modes) or event.stage is None:
            return
        task_id = str(event.data.get("call_id"))
        payload: dict[str, Any] = {"id": task_id, "name": event.stage}
        if event.type == "tool_call":
            payload |= {"input": None, "triggers": [f"branch:to:{event.stage}"]}
        else:
            error = event.data.get("error") if not event.data.get("ok", True) else None
            payload |= {"error": error, "result": {}, "interrupts": []}
        if "tasks" in self.modes:
            yield _sse("tasks", payload, event.seq)
        if "debug" in self.modes:
            yield _sse("debug", self._debug(_TASK_EVENTS[event.type], event, payload), event.seq)

    def _debug(self, kind: str, event: EventRecord, payload: dict[str, Any]) -> dict[str, Any]:
        step = self._step if kind == "checkpoint" else self._step + 1  # a task runs in the next step
        return {"type": kind, "timestamp": event.ts, "step": step, "payload": payload}

    async def _message(self, event: EventRecord) -> AsyncIterator[ServerSentEvent]:
        step = str(event.data.get("step", "report"))
        key = f"{step}:{event.data.get('attempt', 1)}"
        delta = str(event.data.get("delta", ""))
        self._report[key] = self._report.get(key, "") + delta
        message_id = f"{self.run.research_id}-{key}"
        meta = {"langgraph_node": event.stage or "write_report", "run_id": self.run.run_id}
        if "messages-tuple" in self.modes:
            chunk = {"type": "AIMessageChunk", "id": message_id, "content": delta}
            yield _sse("messages", [chunk, meta], event.seq)
        if "messages" in self.modes:
            message = {"type": "ai", "id": message_id, "content": self._report[key]}
            yield _sse("messages/partial", [message], event.seq)

    async def _end(self, event: EventRecord) -> AsyncIterator[ServerSentEvent]:
        status = event.data.get("status")
        if status == "failed":
            yield _sse("error", {"error": "RunFailed", "message": str(event.data.get("error"))}, event.seq)
            return
        if "values" in self.modes:
            research = await self._get_research()
            values = values_with_interrupts(await snapshot(self.service, research))
            yield _sse("values", await with_messages(self.service, research, values), event.seq)
        yield _sse("end", None, event.seq)

    async def _get_research(self) -> RunRecord:
        if self._research is None:
            self._research = await self.service.views.record(self.run.research_id)
        return self._research


def _changed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What a stage wrote: the state's keys whose values it changed (reducers merged them already)."""
    return jsonable({key: value for key, value in after.items() if before.get(key) != value})
