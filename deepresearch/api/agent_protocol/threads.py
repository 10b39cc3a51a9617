"""The Agent Protocol's threads: create, read, patch (metadata), delete, search, state and history.
A thread is one research; its state and checkpoints are the research's (state.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from deepresearch.api.access import request_principal
from deepresearch.api.agent_protocol.deps import ProtocolDep, ThreadDep
from deepresearch.api.agent_protocol.models import (
    HistoryRequest,
    StateUpdate,
    StateUpdated,
    Thread,
    ThreadCreate,
    ThreadList,
    ThreadPatch,
    ThreadSearch,
    ThreadState,
    ThreadStateList,
)
from deepresearch.api.agent_protocol.state import (
    empty_state,
    history,
    jsonable,
    snapshot,
    stage_index,
    thread_state,
    with_messages,
)
from deepresearch.api.agent_protocol.updates import update_state as fork_state
from deepresearch.api.errors import error_responses
from deepresearch.errors import CheckpointNotFound, RunConflict

threads = APIRouter(
    prefix="/threads",
    tags=["agent protocol"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)
_READ = error_responses(404, 422)
_CHANGE = error_responses(403, 404, 409, 422)


@threads.post("", response_model=Thread, responses=error_responses(403, 409, 422))
async def create_thread(body: ThreadCreate, proto: ProtocolDep) -> Thread:
    """An empty thread (yours); its first run starts its research."""
    return await proto.public_thread(await proto.create_thread(body.thread_id, body.metadata, body.if_exists))


@threads.post("/search", response_model=ThreadList, responses=error_responses(403, 422))
async def search_threads(body: ThreadSearch, proto: ProtocolDep) -> list[Thread]:
    """Your threads (an admin: everyone's), newest first, filtered by metadata, ids and status."""
    owner = None if proto.principal.admin else proto.principal.user
    found: list[Thread] = []
    ids = set(body.ids) if body.ids is not None else None
    for thread in await proto.store.list_protocol_threads(owner):
        if ids is not None and thread.thread_id not in ids:
            continue
        if not all(thread.metadata.get(k) == v for k, v in (body.metadata or {}).items()):
            continue
        public = await proto.public_thread(thread)
        if body.status is None or public.status == body.status:
            found.append(public)
        if len(found) >= body.offset + body.limit:
            break
    if body.sort_order == "asc":
        found.reverse()
    return found[body.offset : body.offset + body.limit]


@threads.get("/{thread_id}", response_model=Thread, responses=_READ)
async def get_thread(thread: ThreadDep, proto: ProtocolDep) -> Thread:
    research = await proto.research(thread)
    if research is None:
        return await proto.public_thread(thread)
    latest = await snapshot(proto.service, research)
    values = await with_messages(proto.service, research, jsonable(dict(latest.values)))
    waiting = thread_state(thread.thread_id, latest).tasks
    interrupts = {task.id: task.interrupts for task in waiting if task.interrupts}
    return await proto.public_thread(thread, values, interrupts)


@threads.patch("/{thread_id}", response_model=Thread, responses=_CHANGE)
async def patch_thread(thread: ThreadDep, body: ThreadPatch, proto: ProtocolDep) -> Thread:
    """Merge `metadata` into the thread's."""
    metadata = thread.metadata | (body.metadata or {})
    await proto.store.update_protocol_thread(thread.thread_id, metadata=metadata)
    return await proto.public_thread(await proto.thread(thread.thread_id))


@threads.delete("/{thread_id}", status_code=204, response_class=Response, responses=_CHANGE)
async def delete_thread(thread: ThreadDep, proto: ProtocolDep) -> Response:
    """The thread and its research (checkpoints, receipts, artifacts); 409 while it runs: cancel first."""
    await proto.delete_thread(thread)
    return Response(status_code=204)


async def _state(thread: ThreadDep, proto: ProtocolDep, checkpoint_id: str | None) -> ThreadState:
    research = await proto.research(thread)
    if research is None:
        if checkpoint_id:
            raise CheckpointNotFound(f"thread {thread.thread_id} has no checkpoint {checkpoint_id}")
        return empty_state(thread.thread_id)
    found = await snapshot(proto.service, research, checkpoint_id)
    if checkpoint_id and not found.values:
        raise CheckpointNotFound(f"thread {thread.thread_id} has no checkpoint {checkpoint_id}")
    state = thread_state(thread.thread_id, found, await stage_index(proto.service, research))
    if checkpoint_id is None:  # the latest: with the chat clients' messages
        state.values = await with_messages(proto.service, research, state.values)
    return state


@threads.get("/{thread_id}/state", response_model=ThreadState, responses=_READ)
async def get_state(
    thread: ThreadDep, proto: ProtocolDep, subgraphs: Annotated[bool, Query()] = False
) -> ThreadState:
    """The research's latest state: values, next nodes, checkpoint, and interrupts while it waits."""
    return await _state(thread, proto, None)


@threads.get("/{thread_id}/state/{checkpoint_id}", response_model=ThreadState, responses=_READ)
async def get_state_at(
    thread: ThreadDep, checkpoint_id: str, proto: ProtocolDep, subgraphs: Annotated[bool, Query()] = False
) -> ThreadState:
    return await _state(thread, proto, checkpoint_id)


@threads.post("/{thread_id}/state/checkpoint", response_model=ThreadState, responses=_READ)
async def post_state_at(thread: ThreadDep, body: HistoryRequest, proto: ProtocolDep) -> ThreadState:
    checkpoint_id = (body.checkpoint or {}).get("checkpoint_id")
    return await _state(thread, proto, str(checkpoint_id) if checkpoint_id else None)


@threads.post("/{thread_id}/history", response_model=ThreadStateList, responses=_READ)
async def get_history(thread: ThreadDep, body: HistoryRequest, proto: ProtocolDep) -> list[ThreadState]:
    """The research's checkpoints, newest first; each business checkpoint's metadata names its stage."""
    research = await proto.research(thread)
    if research is None:
        return []
    before = body.before.get("checkpoint_id") if isinstance(body.before, dict) else body.before
    states = await history(proto.service, thread.thread_id, research, body.limit, before)
    wanted = body.metadata or {}
    return [s for s in states if all(s.metadata.get(k) == v for k, v in wanted.items())]


@threads.post("/{thread_id}/state", response_model=StateUpdated, responses=_CHANGE)
async def update_state(thread: ThreadDep, body: StateUpdate, proto: ProtocolDep) -> StateUpdated:
    """Update the state as a node: a fork of the research at `checkpoint_id` (or its latest checkpoint)
    with the changed `values` (the plan's sub_questions, queries and rationale, options, fewer sources),
    not started; the thread is then the fork, and a run with input null continues it, paying only for
    the calls that changed (docs/agent-protocol.md)."""
    research = await proto.research(thread)
    if research is None:
        raise RunConflict(f"thread {thread.thread_id} has no research yet: start it with a run first")
    return StateUpdated(checkpoint=await fork_state(proto, thread.thread_id, research, body))
