"""Every external call goes through here: receipts, cancel checks and sub-tool events.

A call is keyed by (run, receipt_key, hash of normalised arguments). A succeeded receipt returns the recorded
result instead of calling again: resume, a node re-run after a crash, or a fork never repeat a completed
search, fetch, LLM call or file write. The call itself runs shielded, so a cancel that lands while it is in
flight lets it finish and write its receipt.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from langgraph.config import get_stream_writer
from langgraph.runtime import RunControl

from deepresearch.options import RunBudget
from deepresearch.receipts.specs import TOOL_SPECS, ReceiptId, ToolSpec
from deepresearch.store import CancelRequested, Receipt, RunStore

logger = logging.getLogger(__name__)

T = TypeVar("T")
TOKENS = "tokens"
"""The spent counter of LLM tokens (every receipt's, failed calls' included)."""


class RunCancelled(Exception):
    """Raised at a tool boundary once a cancel was requested; the run stops at its latest checkpoint."""

    def __init__(self, reason: str = "cancel requested") -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetExceeded(RunCancelled):
    """A per-run limit was reached: the run stops at its latest checkpoint; resume with a higher limit."""


class StageError(Exception):
    """A stage could not complete; the message says what failed and what to do. The run is resumable."""

    def __init__(self, stage: str, message: str, detail: str | None = None) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage
        self.message = message
        self.detail = detail
        """The raw failure behind a plain-words message (shown folded away: the error event's detail)."""


@dataclass(slots=True)
class CancelSignal:
    """Cancel intent: set locally (Ctrl-C, SIGTERM) or persisted in the store (HTTP cancel, replicas)."""

    run_id: str
    store: RunStore
    control: RunControl = field(default_factory=RunControl)
    reason: str | None = None
    kind: str = "cancel"
    """"cancel" (a person paused the run) or "shutdown" (the process is stopping: status interrupted)."""

    def request(self, reason: str = "cancel requested", *, kind: str = "cancel") -> None:
        if self.reason is None:
            self.reason, self.kind = reason, kind
        # Stops the graph before its next superstep, even if no tool boundary comes first.
        self.control.request_drain(reason)

    async def is_set(self) -> bool:
        if self.reason is None and await self.store.is_cancel_requested(self.run_id):
            self.request("cancel requested")
        return self.reason is not None

    async def raise_if_set(self) -> None:
        if await self.is_set():
            raise RunCancelled(self.reason or "cancel requested")

    def raise_if_requested_here(self) -> None:
        """The local half of raise_if_set, without a read: the store checks the persisted cancel in the
        transaction that starts a call's receipt (CancelRequested)."""
        if self.reason is not None:
            raise RunCancelled(self.reason)


def emit(event: dict[str, Any]) -> None:
    """Send a custom event to the graph stream (a no-op outside a running graph)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(event)


@dataclass(frozen=True, slots=True)
class CallOutcome:
    value: Any
    reused: bool
    tokens: int
    cost_usd: float


def _always(_: object) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class ToolCall(Generic[T]):
    """One call of a tool: the stage that makes it, its arguments and the call itself."""

    stage: str
    args: dict[str, Any]
    run: Callable[[], Awaitable[T]]
    label: str | None = None
    """Overrides the spec's label (a reviewer's name says more than the prompt's)."""
    still_valid: Callable[[T], bool] = _always
    """A recorded result is reused only while this holds (a written file is still there, byte for byte)."""


class ToolRuntime:
    """Runs one run's external calls with receipts. One instance per run execution."""

    def __init__(
        self,
        run_id: str,
        store: RunStore,
        cancel: CancelSignal,
        budget: RunBudget | None = None,
        started_at: str | None = None,
        fence: str | None = None,
    ) -> None:
        self.run_id = run_id
        self.store = store
        self.fence = fence
        """The lease owner this execution runs under: every receipt write checks it (LeaseLost)."""
        self.cancel = cancel
        self.budget = budget or RunBudget()
        self.started_at = datetime.fromisoformat(started_at) if started_at else datetime.now(UTC)
        self._spent: Counter[str] | None = None
        """Calls per budget counter (its option's name) and TOKENS, from the receipts and since."""
        self._budget_lock = asyncio.Lock()  # parallel branches must not both take the last unit
        self._inflight: set[asyncio.Task[Any]] = set()
        # (receipt_key, args_hash) of the run's receipts, read once: only this execution adds receipts
        # while it holds the lease, so a call not in it has none and needs no lookup (a fresh run: none).
        # Forks and follow-ups copy receipts before their run's first execution; a takeover starts afresh.
        self._recorded: set[tuple[str, str]] | None = None
        self._recorded_lock = asyncio.Lock()

    def receipt_id(self, spec: ToolSpec[Any], receipt_key: str, args: dict[str, Any]) -> ReceiptId:
        """The receipt of calling ``spec`` with ``args`` in this run under ``receipt_key``."""
        return ReceiptId.of(self.run_id, receipt_key, spec, args)

    async def call(self, spec: ToolSpec[T], identity: ReceiptId, tool_call: ToolCall[T]) -> CallOutcome:
        """Return the recorded result of this exact call, or make the call once and record it.

        ``spec`` is the tool (deepresearch/receipts/specs.py), ``identity`` the call's receipt
        (:meth:`receipt_id`), ``tool_call`` the stage's call itself."""
        if identity.tool != spec.name or identity.run_id != self.run_id:
            raise ValueError(f"receipt {identity} is not a {spec.name} call of run {self.run_id}")
        shown = _Shown(spec, identity, tool_call)
        receipt = await self._receipt(identity)
        if receipt is not None and receipt.status == "succeeded":
            value = spec.decode(receipt.result)
            if value is not None and tool_call.still_valid(value):
                shown.emit_reused(value, receipt.tokens, receipt.cost_usd)
                return CallOutcome(value, reused=True, tokens=receipt.tokens, cost_usd=receipt.cost_usd)

        self.cancel.raise_if_requested_here()
        async with self._budget_lock:
            await self._check_budget(spec)
        # Everything from here runs as one shielded task: once a call has passed the cancel and budget
        # checks it is "in flight" and finishes, records its receipt and reports its result even if the
        # graph cancels the branch that asked for it (a sibling failed, or a cancel).
        task = asyncio.ensure_future(self._make(spec, identity, tool_call, shown))
        self._inflight.add(task)
        task.add_done_callback(self._settled)
        value, tokens, cost = await asyncio.shield(task)
        return CallOutcome(value, reused=False, tokens=tokens, cost_usd=cost)

    async def _make(
        self, spec: ToolSpec[T], identity: ReceiptId, call: ToolCall[T], shown: _Shown[T]
    ) -> tuple[T, int, float]:
        """Start the receipt (fenced: a process that lost the run's lease fails here, before making the
        call), make the call, and record how it ended."""
        await self._start(spec, identity, call)
        shown.emit_call(reused=False)
        started = time.monotonic()
        try:
            value = await call.run()
        except BaseException as exc:
            error = (
                "cancelled while in flight"
                if isinstance(exc, asyncio.CancelledError)
                else f"{type(exc).__name__}: {exc}"
            )
            await self.store.fail_receipt(*identity.row, error, fence=self.fence)
            shown.emit_failed(error, started)
            raise
        tokens, cost = spec.usage(value)
        if self._spent is not None:
            self._spent[TOKENS] += tokens
        await self.store.finish_receipt(*identity.row, spec.encode(value), tokens, cost, fence=self.fence)
        shown.emit_made(value, tokens, cost, started)
        return value, tokens, cost

    async def _start(self, spec: ToolSpec[T], identity: ReceiptId, call: ToolCall[T]) -> None:
        kept, texts = spec.recorded(call.args)
        try:
            await self.store.start_receipt(
                *identity.row,
                identity.tool,
                call.stage,
                kept,
                fence=self.fence,
                texts=texts,
                unless_cancelled=True,  # the cancel check, in the same transaction: no read first
            )
        except CancelRequested:
            self.cancel.request("cancel requested")
            raise RunCancelled(self.cancel.reason or "cancel requested") from None
        if self._recorded is not None:
            self._recorded.add((identity.key, identity.args_hash))

    async def _receipt(self, identity: ReceiptId) -> Receipt | None:
        if self.fence is None:
            # no lease, no exclusivity (LangGraph's server may run a thread twice at once): always look
            return await self.store.get_receipt(*identity.row)
        if self._recorded is None:
            async with self._recorded_lock:  # parallel branches' first calls: one read
                if self._recorded is None:
                    self._recorded = await self.store.receipt_keys(self.run_id)
        if (identity.key, identity.args_hash) not in self._recorded:
            return None
        return await self.store.get_receipt(*identity.row)

    def _settled(self, task: asyncio.Task[Any]) -> None:
        self._inflight.discard(task)
        if not task.cancelled():
            # Mark a failure as seen: when the branch that asked for the call was cancelled meanwhile,
            # nobody awaits it any more, and its receipt and tool_result event already say it failed.
            task.exception()

    async def _check_budget(self, spec: ToolSpec[Any]) -> None:
        """Refuse a new call past a limit. Totals come from the receipts, so a resume counts earlier work."""
        budget = self.budget
        if budget.deadline_seconds is not None:
            elapsed = (datetime.now(UTC) - self.started_at).total_seconds()
            if elapsed > budget.deadline_seconds:
                raise BudgetExceeded(
                    f"budget: deadline of {budget.deadline_seconds:g}s reached "
                    f"({elapsed:.0f}s since the run started); resume with a later deadline"
                )
        if self._spent is None:
            self._spent = await self._spent_so_far()
        counter = spec.budget
        if counter is None:
            return
        limit: int | None = getattr(budget, counter.option)
        if counter.per == "token":  # checked before the call; its tokens count once it has answered
            if limit is not None and self._spent[TOKENS] >= limit:
                raise BudgetExceeded(
                    f"budget: {counter.label} limit of {limit} reached ({self._spent[TOKENS]} used); "
                    f"resume with a higher options.budget.{counter.option}"
                )
            return
        if limit is not None and self._spent[counter.option] >= limit:
            raise BudgetExceeded(
                f"budget: {counter.label} limit of {limit} reached; "
                f"resume with a higher options.budget.{counter.option}"
            )
        self._spent[counter.option] += 1

    async def _spent_so_far(self) -> Counter[str]:
        """What the run's receipts spent: calls per budget counter (failed calls spent none) and tokens."""
        spent: Counter[str] = Counter()
        for receipt in await self.store.list_receipts(self.run_id):
            spec = TOOL_SPECS.get(receipt.tool_name)
            if receipt.status != "failed" and spec is not None and spec.budget is not None:
                spent[spec.budget.option] += 1
            spent[TOKENS] += receipt.tokens
        return spent

    async def wait_inflight(self, limit_seconds: float = 60.0) -> None:
        """Let shielded calls finish writing their receipts before the process moves on."""
        pending = [task for task in self._inflight if not task.done()]
        if not pending:
            return
        logger.info("waiting for %s in-flight tool call(s) to record their receipts", len(pending))
        done, still = await asyncio.wait(pending, timeout=limit_seconds)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                logger.debug("in-flight call ended with %r", task.exception())
        if still:
            logger.warning(
                "%s tool call(s) still running after %.0fs; their receipts stay 'started'",
                len(still),
                limit_seconds,
            )


class _Shown(Generic[T]):
    """The ``tool_call`` and ``tool_result`` events of one call (its receipt is the record; these are
    what the event log and its readers see)."""

    def __init__(self, spec: ToolSpec[T], identity: ReceiptId, call: ToolCall[T]) -> None:
        self.spec = spec
        self.args = spec.shown(call.args)  # events stay small; the receipt keeps all
        self.base = {
            "stage": call.stage,
            "tool_name": spec.name,
            "call_id": uuid.uuid4().hex[:16],
            "receipt_key": identity.key,
            "label": call.label or spec.label(call.args),
        }

    def emit_call(self, *, reused: bool) -> None:
        emit({"event": "tool_call", **self.base, "args": self.args, "reused": reused})

    def emit_reused(self, value: T, tokens: int, cost_usd: float) -> None:
        self.emit_call(reused=True)
        emit(
            {
                "event": "tool_result",
                **self.base,
                "ok": True,
                "reused": True,
                "tokens": tokens,
                "cost_usd": cost_usd,
                "output": self.spec.summarize(value),
                **self.spec.annotate(value),
            }
        )

    def emit_failed(self, error: str, started: float) -> None:
        emit(
            {
                "event": "tool_result",
                **self.base,
                "ok": False,
                "reused": False,
                "error": error,
                "duration_ms": _since(started),
            }
        )

    def emit_made(self, value: T, tokens: int, cost_usd: float, started: float) -> None:
        emit(
            {
                "event": "tool_result",
                **self.base,
                "ok": True,
                "reused": False,
                "tokens": tokens,
                "cost_usd": cost_usd,
                "duration_ms": _since(started),
                "output": self.spec.summarize(value),
                **self.spec.annotate(value),
            }
        )


def _since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
