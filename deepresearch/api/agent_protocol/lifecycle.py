"""What the Agent Protocol's threads and runs are in deepresearch terms, once for every route.

A thread is one research: our run (`research_id`), started by the thread's first protocol run with its
`input` {"question", "options"}. A protocol run is one execution of that research - the first start, a
continuation (`input: null`, from the latest or a named checkpoint) or an answer to its plan review
(`command: {"resume": ...}`) - and its events are the research's events after `after_seq`. Every command
goes through RunService (deepresearch/service/runs.py) and the steering service, so the rules, the
receipts, the leases and the ownership are the ones /api has.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any, cast

from pydantic import ValidationError

from deepresearch.api.agent_protocol.models import (
    AgentRunCreate,
    Interrupt,
    ResearchInput,
    Run,
    RunStatus,
    Thread,
    ThreadStatus,
)
from deepresearch.api.agent_protocol.queue import NEVER_RAN, TERMINAL, WAITING, WaitingRuns, spawn
from deepresearch.errors import InvalidInput, NotFound, RunConflict, RunNotFound
from deepresearch.graph.plan_edit import PlanDecision
from deepresearch.options import OptionsPatch
from deepresearch.service.auth import Principal
from deepresearch.service.runs import RunService
from deepresearch.service.steering import answer_plan_review, follow_up
from deepresearch.store import ACTIVE_STATUSES, RunRecord, utcnow
from deepresearch.store.steering import ProtocolRun, ProtocolThread

GRAPH_ID = "deepresearch"
ASSISTANT_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "deepresearch:assistant:deepresearch"))
"""The one assistant: the graph's default configuration (its id is stable, as LangGraph's server makes it)."""
_RUN_STATUS = {
    "queued": "pending",
    "running": "running",
    "completed": "success",
    "failed": "error",
    "cancelled": "interrupted",
    "interrupted": "interrupted",
    "waiting_for_input": "interrupted",
}
WAIT_SECONDS = 60.0
"""How long a command waits for a research to stop (cancel with wait, the `interrupt` strategy)."""
LINEAGE_LIMIT = 100
"""Researches a thread may have had (its forks and follow-ups), walked back when it is deleted."""


class ThreadNotFound(NotFound):
    def __init__(self, thread_id: str) -> None:
        super().__init__(f"thread {thread_id} not found")


class ProtocolRunNotFound(NotFound):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} not found on this thread")


def check_assistant(assistant_id: str) -> str:
    """The assistant's id: the graph id `deepresearch` names it too; anything else is 404."""
    if assistant_id not in (GRAPH_ID, ASSISTANT_ID):
        raise NotFound(f"assistant {assistant_id} not found: this server has one, {GRAPH_ID!r}")
    return ASSISTANT_ID


def _checked(model: type[Any], value: Any, field: str) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or field}: {e['msg']}" for e in exc.errors())
        raise InvalidInput(f"{field}: {problems}", field) from None


class Protocol:
    """The protocol's commands for one principal, on the run service."""

    def __init__(self, service: RunService, principal: Principal) -> None:
        self.service = service
        self.principal = principal
        self.store = service.protocol_store
        """The protocol's own tables (threads, their runs); the researches are read through service.views."""
        self.queue = WaitingRuns(service, self.store, self)
        """Enqueued runs (multitask_strategy enqueue) and threads deleted on completion."""

    # --- threads ---------------------------------------------------------------------------------
    async def thread(self, thread_id: str) -> ProtocolThread:
        """The thread, if this principal may see it: another user's thread is 404, like a missing one."""
        thread = await self.store.get_protocol_thread(thread_id)
        if thread is None or not (self.principal.admin or thread.owner == self.principal.user):
            raise ThreadNotFound(thread_id)
        return thread

    async def create_thread(
        self, thread_id: str | None, metadata: dict[str, Any] | None, if_exists: str
    ) -> ProtocolThread:
        thread_id = thread_id or str(uuid.uuid4())
        if await self.store.add_protocol_thread(thread_id, self.principal.user, metadata or {}):
            return await self.thread(thread_id)
        if if_exists == "do_nothing":
            return await self.thread(thread_id)  # someone else's: 404, not theirs to read
        raise RunConflict(f"thread {thread_id} exists already (if_exists: do_nothing returns it)")

    async def research(self, thread: ProtocolThread) -> RunRecord | None:
        if thread.research_id is None:
            return None
        try:
            return await self.service.views.record(thread.research_id)
        except RunNotFound:
            return None  # deleted through /api: the thread is empty again

    async def public_thread(
        self,
        thread: ProtocolThread,
        values: dict[str, Any] | None = None,
        interrupts: dict[str, list[Interrupt]] | None = None,
    ) -> Thread:
        research = await self.research(thread)
        return Thread(
            thread_id=thread.thread_id,
            created_at=thread.created_at,
            updated_at=research.updated_at if research else thread.updated_at,
            metadata=thread.metadata,
            status=thread_status(research),
            values=values,
            interrupts=interrupts or {},
        )

    async def delete_thread(self, thread: ProtocolThread) -> None:
        """The thread with every research it had (its first one, its forks and follow-ups)."""
        researches = await self._lineage(thread)
        for research in researches:
            if research.status in ACTIVE_STATUSES or self.service.is_active_here(research.run_id):
                raise RunConflict(
                    f"the thread's research {research.run_id} is {research.status}; cancel it first"
                )
        for research in researches:
            with contextlib.suppress(RunNotFound):
                await self.service.delete(research.run_id)
        await self.store.delete_protocol_thread(thread.thread_id)

    async def _lineage(self, thread: ProtocolThread) -> list[RunRecord]:
        """The thread's researches: the current one and those it came from (an update's fork, a chat's
        follow-up), and any its runs executed; only its owner's."""
        ids = [r.research_id for r in await self.store.list_protocol_runs(thread.thread_id)]
        found: dict[str, RunRecord] = {}
        step = thread.research_id
        for _ in range(LINEAGE_LIMIT):
            if step is None or step in found:
                break
            try:
                research = await self.service.views.record(step)
            except RunNotFound:
                break
            found[step] = research
            step = (research.forked_from or {}).get("run_id") or research.follow_up_of
        for research_id in ids:
            if research_id not in found:
                with contextlib.suppress(RunNotFound):
                    found[research_id] = await self.service.views.record(research_id)
        return [r for r in found.values() if r.owner == thread.owner]

    async def adopt(self, thread_id: str, before: str, research: RunRecord) -> None:
        """The thread is now `research` (a fork or a follow-up of `before`, its research until now)."""
        await self.store.update_protocol_thread(thread_id, research_id=research.run_id, replacing=before)
        if (await self.thread(thread_id)).research_id != research.run_id:
            # another command moved the thread meanwhile: the new research must not be left unseen
            try:
                await self.service.delete(research.run_id)
            except RunConflict:  # a follow-up executes already
                await self.service.cancel(research.run_id, f"thread {thread_id} moved to another research")
            raise RunConflict(f"thread {thread_id} changed meanwhile; read it again")

    # --- runs ------------------------------------------------------------------------------------
    async def run(self, thread: ProtocolThread, run_id: str) -> ProtocolRun:
        run = await self.store.get_protocol_run(run_id)
        if run is None or run.thread_id != thread.thread_id:
            raise ProtocolRunNotFound(run_id)
        return run

    async def status(self, run: ProtocolRun) -> RunStatus:
        """How the run's execution ended (the research's next `end` after the run began), else how the
        research stands now; a finished run's status is stored once known."""
        if run.status in TERMINAL:
            return cast(RunStatus, run.status)
        if run.after_seq < 0:
            found = await self.store.get_protocol_run(run.run_id)  # enqueued: started since?
            if found is None or found.after_seq < 0 or found.status in TERMINAL:
                return cast(RunStatus, found.status if found else "interrupted")
            run = found
        end = await self.store.end_after(run.research_id, run.after_seq)
        if end is not None:
            status = _RUN_STATUS.get(str(end.get("status")), "error")
            if end.get("status") == "cancelled" and str(end.get("error") or "").startswith(
                "budget: deadline"
            ):
                status = "timeout"  # stopped by its deadline budget (options.budget.deadline_seconds)
        else:
            try:
                research = await self.service.views.record(run.research_id)
            except RunNotFound:
                return "error"
            status = _RUN_STATUS.get(research.status, "error")
            if status in TERMINAL:
                status = "interrupted"  # stopped without an `end` of this execution: cut short, no result
        if status in TERMINAL:
            await self.store.set_protocol_run_status(run.run_id, status)
        return cast(RunStatus, status)

    async def public_run(self, run: ProtocolRun) -> Run:
        return Run(
            run_id=run.run_id,
            thread_id=run.thread_id,
            assistant_id=run.assistant_id,
            created_at=run.created_at,
            updated_at=run.updated_at,
            status=await self.status(run),
            metadata=run.metadata,
            multitask_strategy=run.multitask_strategy,  # type: ignore[arg-type]
            kwargs=run.kwargs,
        )

    async def start(self, thread: ProtocolThread, body: AgentRunCreate) -> ProtocolRun:
        """Start the thread's research, continue it, or answer its plan review: one new protocol run."""
        assistant_id = check_assistant(body.assistant_id)
        _refuse_unsupported(body)
        research = await self.research(thread)
        after_seq = 0
        if research is None:
            research = await self._first(thread, body)
        elif research.status in ACTIVE_STATUSES and body.multitask_strategy == "enqueue":
            after_seq = WAITING  # started once the research stops, by whoever sees that first (_start_queued)
        else:
            research, after_seq = await self._next(thread, research, body)
        now = utcnow()
        run = ProtocolRun(
            run_id=str(uuid.uuid4()),
            thread_id=thread.thread_id,
            research_id=research.run_id,
            assistant_id=assistant_id,
            status="pending",
            metadata=body.metadata or {},
            kwargs={
                "input": body.input,
                "command": body.command,
                "stream_mode": body.modes(),
                "checkpoint_id": body.checkpoint_id,
            },
            multitask_strategy=body.multitask_strategy,
            after_seq=after_seq,
            created_at=now,
            updated_at=now,
        )
        await self.store.add_protocol_run(run)
        if after_seq < 0:
            spawn(self.queue.wait_and_start(run), f"protocol-queue-{run.run_id}")
        return run

    async def _next(
        self, thread: ProtocolThread, research: RunRecord, body: AgentRunCreate
    ) -> tuple[RunRecord, int]:
        """A run on a thread that has a research: make room (multitask_strategy), then continue it, answer
        it, or ask it a follow-up. The research it runs on, and the seq its events start after."""
        if _asks(body) and research.status != "completed":  # refused before anything is stopped
            raise RunConflict(
                f"this thread's research is {research.status}: a new question becomes a follow-up once "
                'it has completed; send input null (or only {"options": ...}, e.g. a higher budget) '
                "to continue it, or start a new thread"
            )
        earlier = await self.store.list_protocol_runs(thread.thread_id)
        # settled from the research as it stands, before it moves on
        running = [r for r in earlier if await self.status(r) not in TERMINAL]
        if research.status in ACTIVE_STATUSES and body.multitask_strategy != "reject":
            for queued in (r for r in running if r.after_seq == WAITING):  # must not start after the stop
                await self.store.start_protocol_run(queued.run_id, NEVER_RAN, "interrupted")
        await self._make_room(research, body.multitask_strategy)
        for run in earlier:
            await self.status(run)
        if body.multitask_strategy == "rollback" and research.status in ACTIVE_STATUSES:
            for run in running:  # as LangGraph does: the interrupted runs are gone
                await self.store.delete_protocol_run(run.run_id)
        return await self.advance(thread.thread_id, research, body)

    async def advance(
        self, thread_id: str, research: RunRecord, body: AgentRunCreate
    ) -> tuple[RunRecord, int]:
        """Continue the research, answer it, or ask it a follow-up (a new question once it has completed,
        which the thread then is): the research that runs, and the seq its events start after."""
        if _asks(body) and research.status == "completed":
            given = _checked(ResearchInput, body.input, "input")
            patch = _checked(OptionsPatch, given.options or {}, "input.options")
            new = await follow_up(self.service, research.run_id, str(given.question), patch, self.principal)
            await self.adopt(thread_id, research.run_id, new)
            return new, 0
        after_seq = await self.store.last_event_seq(research.run_id)
        await self._continue(research, body)
        return research, after_seq

    async def _first(self, thread: ProtocolThread, body: AgentRunCreate) -> RunRecord:
        if body.command is not None or body.input is None:
            raise RunConflict(
                f"thread {thread.thread_id} has no research yet: its first run needs "
                'input {"question": ..., "options": {...}}'
            )
        given = _checked(ResearchInput, body.input, "input")
        patch = _checked(OptionsPatch, given.options or {}, "input.options")
        research = await self.service.start(str(given.question), patch, self.principal)
        await self.store.update_protocol_thread(
            thread.thread_id, research_id=research.run_id, replacing=thread.research_id
        )
        if (await self.thread(thread.thread_id)).research_id != research.run_id:
            # another first run won the thread meanwhile: this research must not run unseen
            await self.service.cancel(research.run_id, "another run started this thread first")
            raise RunConflict(f"thread {thread.thread_id} was started by another run meanwhile")
        return research

    async def _make_room(self, research: RunRecord, strategy: str) -> None:
        """multitask_strategy, when the research is executing: reject, or stop it first."""
        if research.status not in ACTIVE_STATUSES:
            return
        if strategy == "reject":
            raise RunConflict(
                f"the thread's research is {research.status}; wait for its run, cancel it, or send "
                "multitask_strategy interrupt"
            )
        await self.service.cancel(research.run_id, f"a new run on its thread ({strategy})")
        await self.stopped(research.run_id)

    async def _continue(self, research: RunRecord, body: AgentRunCreate) -> None:
        if body.command is not None:
            if set(body.command) - {"resume"}:
                raise InvalidInput(
                    "command: only resume is supported (the answer to a plan review)", "command"
                )
            decision = _checked(PlanDecision, body.command.get("resume"), "command.resume")
            await answer_plan_review(self.service, research.run_id, decision, self.principal)
            return
        patch = None
        if body.input is not None:
            if set(body.input) != {"options"}:
                raise RunConflict(
                    f"this thread's research is {research.status}: a new question becomes a follow-up once "
                    'it has completed; send input null (or only {"options": ...}, e.g. a higher budget) '
                    "to continue it, or start a new thread"
                )
            patch = _checked(OptionsPatch, body.input["options"] or {}, "input.options")
        checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
        await self.service.resume(research.run_id, checkpoint_id, patch, principal=self.principal)

    async def stopped(self, research_id: str) -> RunRecord:
        """The research once it is not executing (polled: it may execute on another replica)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            research = await self.service.views.record(research_id)
            if research.status not in ACTIVE_STATUSES and not self.service.is_active_here(research_id):
                return research
            if time.monotonic() > deadline:
                raise RunConflict(
                    f"run {research_id} did not stop within {WAIT_SECONDS:.0f} s; it is stopping"
                )
            await asyncio.sleep(0.05)

    async def cancel(self, run: ProtocolRun, *, wait: bool, action: str) -> None:
        status = await self.status(run)
        if status in TERMINAL:
            return
        if run.after_seq == WAITING:
            if await self.store.start_protocol_run(run.run_id, NEVER_RAN, "interrupted"):
                if action == "rollback":  # enqueued, never started: it simply goes
                    await self.store.delete_protocol_run(run.run_id)
                return
            run = await self.store.get_protocol_run(run.run_id) or run  # it started meanwhile
        await self.service.cancel(run.research_id, f"cancelled by a protocol client ({action})")
        if wait or action == "rollback":
            await self.stopped(run.research_id)
            await self.status(run)
        if action == "rollback":
            # LangGraph drops a rolled-back run; its research keeps every checkpoint and receipt, so a
            # later run continues without paying again for what this one completed
            await self.store.delete_protocol_run(run.run_id)


def thread_status(research: RunRecord | None) -> ThreadStatus:
    if research is None:
        return "idle"
    if research.status in ACTIVE_STATUSES:
        return "busy"
    if research.status == "waiting_for_input":
        return "interrupted"
    return "error" if research.status == "failed" else "idle"


def _refuse_unsupported(body: AgentRunCreate) -> None:
    """Options whose meaning this server cannot honour are refused, never silently ignored."""
    if body.interrupt_before or body.interrupt_after:
        raise InvalidInput(
            "interrupt_before/interrupt_after are not supported: the run stops for review with the option "
            "review_plan, and can be cancelled and continued at any of its checkpoints",
            "interrupt_before",
        )
    if body.webhook:
        raise InvalidInput("webhook: this server's webhooks are configured by its operator", "webhook")
    if body.after_seconds:
        raise InvalidInput("after_seconds is not supported: a run starts at once", "after_seconds")


def _asks(body: AgentRunCreate) -> bool:
    """The body asks a question (or sends a chat's human message): its input is more than options."""
    return body.command is None and body.input is not None and set(body.input) != {"options"}
