"""The Agent Protocol's runs: on a thread (create, stream, wait, list, get, join, join the stream, cancel,
delete) and stateless (a new thread each). A run starts, continues or answers the thread's research
through lifecycle.Protocol; its stream is streaming.RunStream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from deepresearch.api.access import PrincipalDep, request_principal
from deepresearch.api.agent_protocol.deps import ProtocolDep, ThreadDep, ThreadId
from deepresearch.api.agent_protocol.lifecycle import TERMINAL, Protocol, ThreadNotFound
from deepresearch.api.agent_protocol.models import (
    AgentRunCreate,
    Run,
    RunList,
    RunStatus,
    StateValues,
    StreamMode,
)
from deepresearch.api.agent_protocol.state import snapshot, values_with_interrupts, with_messages
from deepresearch.api.agent_protocol.streaming import RunStream
from deepresearch.api.errors import error_responses
from deepresearch.errors import InvalidInput, RunConflict
from deepresearch.store.steering import ProtocolRun, ProtocolThread

runs = APIRouter(
    tags=["agent protocol"], dependencies=[Depends(request_principal)], responses=error_responses(401)
)
_START = error_responses(403, 404, 409, 422, 429)
_READ = error_responses(404, 422)
_SSE = {
    200: {
        "description": "Server-sent events as LangGraph's SDKs read them: `metadata`, then the requested "
        "modes' parts (`values`, `updates`, `custom`, `messages`), then `end` (or `error`).",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}
LastEventId = Annotated[str, Header(pattern=r"^[0-9]{0,18}$", description="Resume after this event id.")]


def _location(run: ProtocolRun) -> str:
    return f"/threads/{run.thread_id}/runs/{run.run_id}"


async def _thread_for(proto: Protocol, thread_id: str | None, body: AgentRunCreate) -> ProtocolThread:
    """The path's thread; a new one for a stateless run or when the body says if_not_exists: create."""
    if thread_id is None:
        return await proto.create_thread(None, {}, "raise")
    try:
        return await proto.thread(thread_id)
    except ThreadNotFound:
        if body.if_not_exists != "create":
            raise
        return await proto.create_thread(thread_id, {}, "do_nothing")


def _stream_response(
    request: Request,
    principal: PrincipalDep,
    stream: RunStream,
    last_event_id: int | None,
    resumable: bool,
    finally_: Callable[[], Awaitable[None]] | None = None,
) -> EventSourceResponse:
    address = request.client.host if request.client else "?"
    client = principal.user if principal.token_id else f"address {address}"
    release: Callable[[], None] = request.app.state.streams.acquire(client)  # 429 before the response

    async def parts() -> AsyncIterator[ServerSentEvent]:
        try:
            async for part in stream.events(last_event_id):
                yield part
        finally:
            release()
            if finally_ is not None:
                await finally_()

    headers = {"Content-Location": _location(stream.run)}
    if resumable:  # where the SDK reconnects (with Last-Event-ID) when the connection drops
        headers["Location"] = f"{_location(stream.run)}/stream"
    return EventSourceResponse(
        parts(),
        headers=headers,
        ping=request.app.state.settings.sse_heartbeat_seconds,
        background=BackgroundTask(release),
    )


async def _final(proto: Protocol, run: ProtocolRun) -> dict[str, Any]:
    """What /wait and /join answer: the thread's state values once the run has ended (`__error__` for a
    failed one), after following its stream to the end."""
    failure: dict[str, Any] | None = None
    stream = RunStream(proto.service, run, [], proto.queue.started)
    async for part in stream.events(None):
        if part.event == "error":
            failure = {"error": "RunFailed", "message": str(part.data)}
    if failure is not None:
        return {"__error__": failure}
    # the stream's run: an enqueued run knows its research once it has started (a follow-up's, maybe)
    research = await proto.service.views.record(stream.run.research_id)
    values = values_with_interrupts(await snapshot(proto.service, research))
    return await with_messages(proto.service, research, values)


# --- on a thread ---------------------------------------------------------------------------------
@runs.post("/threads/{thread_id}/runs", response_model=Run, responses=_START)
async def create_run(
    thread_id: ThreadId, body: AgentRunCreate, proto: ProtocolDep, response: Response
) -> Run:
    """Start (first run), continue (`input: null`) or answer (`command.resume`) the thread's research in
    the background."""
    run = await proto.start(await _thread_for(proto, thread_id, body), body)
    response.headers["Content-Location"] = _location(run)
    return await proto.public_run(run)


@runs.post(
    "/threads/{thread_id}/runs/stream", response_class=EventSourceResponse, responses={**_SSE, **_START}
)
async def stream_run(
    thread_id: ThreadId, body: AgentRunCreate, proto: ProtocolDep, request: Request, principal: PrincipalDep
) -> EventSourceResponse:
    run = await proto.start(await _thread_for(proto, thread_id, body), body)
    stream = RunStream(proto.service, run, body.modes(), proto.queue.started, body.stream_subgraphs)
    return _stream_response(request, principal, stream, None, body.stream_resumable)


@runs.post("/threads/{thread_id}/runs/wait", response_model=StateValues, responses=_START)
async def wait_run(
    thread_id: ThreadId, body: AgentRunCreate, proto: ProtocolDep, response: Response
) -> dict[str, Any]:
    run = await proto.start(await _thread_for(proto, thread_id, body), body)
    response.headers["Content-Location"] = _location(run)
    return await _final(proto, run)


@runs.get("/threads/{thread_id}/runs", response_model=RunList, responses=_READ)
async def list_runs(
    thread: ThreadDep,
    proto: ProtocolDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    status: RunStatus | None = None,
) -> list[Run]:
    """The thread's runs, newest first."""
    found = [await proto.public_run(r) for r in await proto.store.list_protocol_runs(thread.thread_id)]
    return [r for r in found if status is None or r.status == status][offset : offset + limit]


@runs.get("/threads/{thread_id}/runs/{run_id}", response_model=Run, responses=_READ)
async def get_run(thread: ThreadDep, run_id: str, proto: ProtocolDep) -> Run:
    return await proto.public_run(await proto.run(thread, run_id))


@runs.get("/threads/{thread_id}/runs/{run_id}/join", response_model=StateValues, responses=_READ)
async def join_run(thread: ThreadDep, run_id: str, proto: ProtocolDep) -> dict[str, Any]:
    """Wait for the run to end; the thread's state values then."""
    return await _final(proto, await proto.run(thread, run_id))


def _modes(given: list[str] | None) -> list[str]:
    modes = [m for m in given or [] if m]
    unknown = sorted(set(modes) - set(get_args(StreamMode)))
    if unknown:
        raise InvalidInput(f"stream_mode: unknown mode(s) {', '.join(unknown)}", "stream_mode")
    return modes or ["values"]


@runs.get(
    "/threads/{thread_id}/runs/{run_id}/stream",
    response_class=EventSourceResponse,
    responses={**_SSE, **_READ},
)
async def join_stream(
    thread: ThreadDep,
    run_id: str,
    proto: ProtocolDep,
    request: Request,
    principal: PrincipalDep,
    stream_mode: Annotated[list[str] | None, Query(max_length=11)] = None,
    cancel_on_disconnect: bool | Literal[""] = False,
    last_event_id: LastEventId = "",
) -> EventSourceResponse:
    """Follow a run's stream from its start, or after Last-Event-ID (a reconnect)."""
    run = await proto.run(thread, run_id)
    stream = RunStream(proto.service, run, _modes(stream_mode), proto.queue.started)
    return _stream_response(request, principal, stream, int(last_event_id) if last_event_id else None, True)


@runs.post(
    "/threads/{thread_id}/runs/{run_id}/cancel",
    status_code=202,
    response_model=Run,
    responses=error_responses(403, 404, 409, 422),
)
async def cancel_run(
    thread: ThreadDep,
    run_id: str,
    proto: ProtocolDep,
    wait: bool = False,
    action: Literal["interrupt", "rollback"] = "interrupt",
) -> Run:
    """Stop the run at its research's nearest checkpoint (`wait`: answer once it has stopped). rollback
    also forgets the run; the research keeps its checkpoints and receipts, so nothing paid is lost."""
    run = await proto.run(thread, run_id)
    await proto.cancel(run, wait=wait, action=action)
    public = await proto.public_run(run)
    return public if action == "interrupt" else public.model_copy(update={"status": "interrupted"})


@runs.delete(
    "/threads/{thread_id}/runs/{run_id}",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404, 409, 422),
)
async def delete_run(thread: ThreadDep, run_id: str, proto: ProtocolDep) -> Response:
    """Forget a finished run (its research and checkpoints stay with the thread); 409 while it runs."""
    run = await proto.run(thread, run_id)
    if (await proto.status(run)) not in TERMINAL:
        raise RunConflict(f"run {run_id} is still running; cancel it first")
    await proto.store.delete_protocol_run(run.run_id)
    return Response(status_code=204)


# --- stateless: a new thread each ------------------------------------------------------------------
@runs.post("/runs", response_model=Run, responses=_START)
async def create_stateless(body: AgentRunCreate, proto: ProtocolDep, response: Response) -> Run:
    """A new thread's research in the background (`on_completion: delete`: the thread goes at its end)."""
    run = await proto.start(await _thread_for(proto, None, body), body)
    response.headers["Content-Location"] = _location(run)
    public = await proto.public_run(run)
    if body.on_completion == "delete":
        await proto.queue.delete_when_done(run)
    return public


@runs.post("/runs/stream", response_class=EventSourceResponse, responses={**_SSE, **_START})
async def stream_stateless(
    body: AgentRunCreate, proto: ProtocolDep, request: Request, principal: PrincipalDep
) -> EventSourceResponse:
    """A new thread's research, streamed (the thread is kept - its report and checkpoints are worth it -
    unless `on_completion: delete`: then it goes once the run has ended)."""
    run = await proto.start(await _thread_for(proto, None, body), body)
    stream = RunStream(proto.service, run, body.modes(), proto.queue.started, body.stream_subgraphs)

    async def delete() -> None:
        await proto.queue.delete_when_done(run)

    done = delete if body.on_completion == "delete" else None
    return _stream_response(request, principal, stream, None, body.stream_resumable, done)


@runs.post("/runs/wait", response_model=StateValues, responses=_START)
async def wait_stateless(body: AgentRunCreate, proto: ProtocolDep, response: Response) -> dict[str, Any]:
    run = await proto.start(await _thread_for(proto, None, body), body)
    response.headers["Content-Location"] = _location(run)
    final = await _final(proto, run)
    if body.on_completion == "delete":
        await proto.queue.delete_when_done(run)
    return final
