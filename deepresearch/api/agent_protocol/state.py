"""A research's LangGraph state as the Agent Protocol shows it: ThreadState (values, next, checkpoint,
tasks, interrupts) for GET /threads/{id}/state and /history, and JSON-safe values for the streams.

The checkpoints are the research's own (its LangGraph thread, `deepresearch-<run_id>`); the protocol's
`checkpoint.thread_id` is the protocol thread's id, and the metadata names the business stage a
checkpoint ends (the index of /api/runs/{id}/checkpoints)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from langgraph.types import StateSnapshot
from pydantic import BaseModel

from deepresearch.api.agent_protocol.models import CheckpointRef, Interrupt, ThreadState, ThreadTask
from deepresearch.engine.core import graph_config
from deepresearch.errors import ArtifactNotFound, RunNotFound
from deepresearch.service.runs import RunService
from deepresearch.store import CheckpointRecord, RunRecord


def _plain(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def jsonable(value: Any) -> Any:
    """The value as JSON has it (sets as sorted lists, models as dicts, anything else as text)."""
    return json.loads(json.dumps(value, default=_plain, ensure_ascii=False))


def interrupts_of(snapshot: StateSnapshot) -> list[Interrupt]:
    return [Interrupt(value=jsonable(i.value), id=str(i.id)) for i in snapshot.interrupts]


def _ref(thread_id: str, config: Mapping[str, Any] | None) -> CheckpointRef | None:
    configurable = (config or {}).get("configurable") or {}
    if not configurable.get("checkpoint_id"):
        return None
    return CheckpointRef(
        thread_id=thread_id,
        checkpoint_ns=configurable.get("checkpoint_ns", ""),
        checkpoint_id=configurable["checkpoint_id"],
    )


def thread_state(
    thread_id: str, snapshot: StateSnapshot, stages: Mapping[str, CheckpointRecord] | None = None
) -> ThreadState:
    checkpoint = _ref(thread_id, snapshot.config) or CheckpointRef(thread_id=thread_id)
    record = (stages or {}).get(checkpoint.checkpoint_id or "")
    metadata = jsonable(dict(snapshot.metadata or {}))
    if record is not None:  # a business safety point: a client may count, preview and resume from it
        metadata |= {"stage": record.stage, "title": record.title, "summary": record.summary}
    return ThreadState(
        values=jsonable(dict(snapshot.values or {})),
        next=list(snapshot.next),
        checkpoint=checkpoint,
        metadata=metadata,
        created_at=snapshot.created_at,
        parent_checkpoint=_ref(thread_id, snapshot.parent_config),
        tasks=[
            ThreadTask(
                id=str(task.id),
                name=task.name,
                error=str(task.error) if task.error else None,
                interrupts=[Interrupt(value=jsonable(i.value), id=str(i.id)) for i in task.interrupts],
            )
            for task in snapshot.tasks
        ],
        interrupts=interrupts_of(snapshot),
    )


def empty_state(thread_id: str) -> ThreadState:
    """A thread whose research has not started."""
    return ThreadState(
        values={}, next=[], checkpoint=CheckpointRef(thread_id=thread_id), metadata={}, created_at=None
    )


async def snapshot(
    service: RunService, research: RunRecord, checkpoint_id: str | None = None
) -> StateSnapshot:
    config = (
        graph_config(research.thread_id, checkpoint_id) if checkpoint_id else graph_config(research.thread_id)
    )
    return await service.engine.state(config)


async def stage_index(service: RunService, research: RunRecord) -> dict[str, CheckpointRecord]:
    return {c.checkpoint_id: c for c in await service.views.checkpoint_records(research.run_id)}


async def history(
    service: RunService, thread_id: str, research: RunRecord, limit: int, before: str | None
) -> list[ThreadState]:
    """The research's checkpoints, newest first (a completed research keeps its business checkpoints and
    its final state: docs/durability.md)."""
    stages = await stage_index(service, research)
    before_config = graph_config(research.thread_id, before) if before else None
    states: list[ThreadState] = []
    async for past in service.engine.state_history(
        graph_config(research.thread_id), limit=limit, before=before_config
    ):
        states.append(thread_state(thread_id, past, stages))
    return states


def values_with_interrupts(snapshot: StateSnapshot) -> dict[str, Any]:
    """The `values` stream part: the state, and `__interrupt__` while it waits for a person."""
    values = jsonable(dict(snapshot.values or {}))
    if snapshot.interrupts:
        values["__interrupt__"] = [i.model_dump() for i in interrupts_of(snapshot)]
    return values


CONVERSATION_LIMIT = 50
"""Earlier researches (follow-ups asked on a thread) whose messages a thread's `messages` show."""


async def _report_text(service: RunService, research: RunRecord) -> str | None:
    try:
        path = await service.views.artifact_file(research, "deepresearch-report.md")
    except ArtifactNotFound:
        return None
    try:
        return await asyncio.to_thread(path.read_text, "utf-8")
    except FileNotFoundError:
        return None  # not written (an earlier research that stopped before its report)


async def _conversation(service: RunService, research: RunRecord) -> list[RunRecord]:
    """The researches a chat on the thread went through, oldest first: each follow-up's original (a fork
    stands for the research it was forked from)."""
    chain, current = [research], research
    for _ in range(CONVERSATION_LIMIT):
        parent_id = current.follow_up_of or (current.forked_from or {}).get("run_id")
        if not parent_id:
            break
        try:
            parent = await service.views.record(str(parent_id))
        except RunNotFound:
            break
        if current.follow_up_of:
            chain.insert(0, parent)
        current = parent
    return chain


async def with_messages(service: RunService, research: RunRecord, values: dict[str, Any]) -> dict[str, Any]:
    """The values with `messages` as chat clients (agent-chat-ui) render them: the question, and the
    checked report once it is written - after those of the follow-ups' earlier researches."""
    messages: list[dict[str, Any]] = []
    for past in await _conversation(service, research):
        messages.append({"type": "human", "id": f"{past.run_id}-question", "content": past.question})
        # an earlier research is finished: its report file is read if it has one
        written = past is not research or (values.get("report") or {}).get("report_path")
        text = await _report_text(service, past) if written else None
        if text is not None:
            messages.append({"type": "ai", "id": f"{past.run_id}-report", "content": text})
    return {**values, "messages": messages}
