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
from deepresearch.errors import InvalidInput, NotFound, RunConflict, RunNotFound
from deepresearch.graph.plan_edit import PlanDecision
from deepresearch.options import OptionsPatch
from deepresearch.service.auth import Principal
from deepresearch.service.runs import RunService
from deepresearch.service.steering import answer_plan_review
from deepresearch.store import ACTIVE_STATUSES, RunRecord, utcnow
from deepresearch.store.steering import ProtocolRun, ProtocolSql, ProtocolThread

GRAPH_ID = "deepresearch"
ASSISTANT_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "deepresearch:assistant:deepresearch"))
"""The one assistant: the graph's default configuration (its id is stable, as LangGraph's server makes it)."""
TERMINAL: frozenset[str] = frozenset({"success", "error", "timeout", "interrupted"})
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
        self.store = cast(ProtocolSql, service.store)  # SqlRunStore: both backends have ProtocolSql

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
            return await self.service.store.get_run(thread.research_id)
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
        research = await self.research(thread)
        if research is not None:
            await self.service.delete(research.run_id)  # 409 while it runs: cancel it first
        await self.store.delete_protocol_thread(thread.thread_id)

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
        end = await self.store.end_after(run.research_id, run.after_seq)
        if end is not None:
            status = _RUN_STATUS.get(str(end.get("status")), "error")
            if end.get("status") == "cancelled" and str(end.get("error") or "").startswith(
                "budget: deadline"
            ):
                status = "timeout"  # stopped by its deadline budget (options.budget.deadline_seconds)
        else:
            try:
                research = await self.service.store.get_run(run.research_id)
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
        if research is None:
            research = await self._first(thread, body)
            after_seq = 0
        else:
            await self._make_room(research, body.multitask_strategy)
            for earlier in await self.store.list_protocol_runs(thread.thread_id):
                await self.status(earlier)  # settled from the research as it stands, before it moves on
            after_seq = await self.store.last_event_seq(research.run_id)
            await self._continue(research, body)
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
        return run

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
                    "this thread's research has its question already: send input null (or only "
                    '{"options": ...}, e.g. a higher budget) to continue it, or start a new thread'
                )
            patch = _checked(OptionsPatch, body.input["options"] or {}, "input.options")
        checkpoint_id = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
        await self.service.resume(research.run_id, checkpoint_id, patch, principal=self.principal)

    async def stopped(self, research_id: str) -> RunRecord:
        """The research once it is not executing (polled: it may execute on another replica)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            research = await self.service.store.get_run(research_id)
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
    if body.multitask_strategy == "enqueue":
        raise InvalidInput(
            "multitask_strategy enqueue is not supported: use reject (default), interrupt or rollback",
            "multitask_strategy",
        )
