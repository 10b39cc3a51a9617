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
from typing import Any, TypeVar

from langgraph.config import get_stream_writer
from langgraph.runtime import RunControl

from deepresearch.options import RunBudget
from deepresearch.store import CancelRequested, Receipt, RunStore, args_hash

logger = logging.getLogger(__name__)

T = TypeVar("T")


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
        self._budget_lock = asyncio.Lock()  # parallel branches must not both take the last unit
        self._inflight: set[asyncio.Task[Any]] = set()
        # (receipt_key, args_hash) of the run's receipts, read once: only this execution adds receipts
        # while it holds the lease, so a call not in it has none and needs no lookup (a fresh run: none).
        # Forks and follow-ups copy receipts before their run's first execution; a takeover starts afresh.
        self._recorded: set[tuple[str, str]] | None = None
        self._recorded_lock = asyncio.Lock()

    async def call(
        self,
        *,
        stage: str,
        receipt_key: str,
        tool_name: str,
        args: dict[str, Any],
        run: Callable[[], Awaitable[T]],
        encode: Callable[[T], Any],
        decode: Callable[[Any], T],
        usage: Callable[[T], tuple[int, float]] = lambda _: (0, 0.0),
        summarize: Callable[[T], dict[str, Any]] = lambda _: {},
        label: str | None = None,
        still_valid: Callable[[T], bool] = lambda _: True,
        shown_args: dict[str, Any] | None = None,
        annotate: Callable[[T], dict[str, Any]] = lambda _: {},
        recorded_args: Callable[[], tuple[Any, dict[str, str]]] | None = None,
    ) -> CallOutcome:
        """Return the recorded result of this exact call, or make the call once and record it.

        ``annotate`` adds top-level fields to the call's ``tool_result`` event (e.g. an LLM step's
        ``fallback``), fresh or reused alike. ``recorded_args`` gives what the receipt keeps of the
        arguments when not all of them, and the texts to store once by hash with the receipt (field of the
        kept arguments -> text; a prompt's messages); the key is always the hash of all of ``args``."""
        hash_ = args_hash({"tool": tool_name, "args": args})
        shown = args if shown_args is None else shown_args  # events stay small; the receipt keeps all
        call_id = uuid.uuid4().hex[:16]
        base = {
            "stage": stage,
            "tool_name": tool_name,
            "call_id": call_id,
            "receipt_key": receipt_key,
            "label": label or tool_name,
        }
        receipt = await self._receipt(receipt_key, hash_)
        value_from_receipt = decode(receipt.result) if receipt and receipt.status == "succeeded" else None
        if receipt is not None and value_from_receipt is not None and still_valid(value_from_receipt):
            value = value_from_receipt
            emit({"event": "tool_call", **base, "args": shown, "reused": True})
            emit(
                {
                    "event": "tool_result",
                    **base,
                    "ok": True,
                    "reused": True,
                    "tokens": receipt.tokens,
                    "cost_usd": receipt.cost_usd,
                    "output": summarize(value),
                    **annotate(value),
                }
            )
            return CallOutcome(value, reused=True, tokens=receipt.tokens, cost_usd=receipt.cost_usd)

        self.cancel.raise_if_requested_here()
        async with self._budget_lock:
            await self._check_budget(tool_name)

        async def guarded() -> tuple[T, int, float]:
            # Everything from here runs as one shielded task: once a call has passed the cancel and
            # budget checks it is "in flight" and finishes, records its receipt and reports its result
            # even if the graph cancels the branch that asked for it (a sibling failed, or a cancel).
            # fenced: a process that lost the run's lease fails here, before making the call
            kept, texts = (args, {}) if recorded_args is None else recorded_args()
            try:
                await self.store.start_receipt(
                    self.run_id,
                    receipt_key,
                    hash_,
                    tool_name,
                    stage,
                    kept,
                    fence=self.fence,
                    texts=texts,
                    unless_cancelled=True,  # the cancel check, in the same transaction: no read first
                )
            except CancelRequested:
                self.cancel.request("cancel requested")
                raise RunCancelled(self.cancel.reason or "cancel requested") from None
            if self._recorded is not None:
                self._recorded.add((receipt_key, hash_))
            emit({"event": "tool_call", **base, "args": shown, "reused": False})
            started = time.monotonic()
            try:
                value = await run()
            except BaseException as exc:
                error = (
                    "cancelled while in flight"
                    if isinstance(exc, asyncio.CancelledError)
                    else f"{type(exc).__name__}: {exc}"
                )
                await self.store.fail_receipt(self.run_id, receipt_key, hash_, error, fence=self.fence)
                emit(
                    {
                        "event": "tool_result",
                        **base,
                        "ok": False,
                        "reused": False,
                        "error": error,
                        "duration_ms": round((time.monotonic() - started) * 1000),
                    }
                )
                raise
            tokens, cost = usage(value)
            if self._spent is not None:
                self._spent["tokens"] += tokens
            await self.store.finish_receipt(
                self.run_id, receipt_key, hash_, encode(value), tokens, cost, fence=self.fence
            )
            emit(
                {
                    "event": "tool_result",
                    **base,
                    "ok": True,
                    "reused": False,
                    "tokens": tokens,
                    "cost_usd": cost,
                    "duration_ms": round((time.monotonic() - started) * 1000),
                    "output": summarize(value),
                    **annotate(value),
                }
            )
            return value, tokens, cost

        task = asyncio.ensure_future(guarded())
        self._inflight.add(task)
        task.add_done_callback(self._settled)
        value, tokens, cost = await asyncio.shield(task)
        return CallOutcome(value, reused=False, tokens=tokens, cost_usd=cost)

    async def _receipt(self, receipt_key: str, hash_: str) -> Receipt | None:
        if self.fence is None:
            # no lease, no exclusivity (LangGraph's server may run a thread twice at once): always look
            return await self.store.get_receipt(self.run_id, receipt_key, hash_)
        if self._recorded is None:
            async with self._recorded_lock:  # parallel branches' first calls: one read
                if self._recorded is None:
                    self._recorded = await self.store.receipt_keys(self.run_id)
        if (receipt_key, hash_) not in self._recorded:
            return None
        return await self.store.get_receipt(self.run_id, receipt_key, hash_)

    def _settled(self, task: asyncio.Task[Any]) -> None:
        self._inflight.discard(task)
        if not task.cancelled():
            # Mark a failure as seen: when the branch that asked for the call was cancelled meanwhile,
            # nobody awaits it any more, and its receipt and tool_result event already say it failed.
            task.exception()

    async def _check_budget(self, tool_name: str) -> None:
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
            spent: Counter[str] = Counter()
            for receipt in await self.store.list_receipts(self.run_id):
                if receipt.status != "failed":
                    spent[receipt.tool_name] += 1
                spent["tokens"] += receipt.tokens
            self._spent = spent
        limits = {
            "web.search": ("max_search_calls", budget.max_search_calls, "search calls"),
            "web.fetch": ("max_fetches", budget.max_fetches, "fetches"),
        }
        if tool_name in limits:
            name, limit, label = limits[tool_name]
            if limit is not None and self._spent[tool_name] >= limit:
                raise BudgetExceeded(
                    f"budget: {label} limit of {limit} reached; resume with a higher options.budget.{name}"
                )
        if (
            tool_name.startswith("llm.")
            and budget.max_llm_tokens is not None
            and self._spent["tokens"] >= budget.max_llm_tokens
        ):
            raise BudgetExceeded(
                f"budget: LLM token limit of {budget.max_llm_tokens} reached "
                f"({self._spent['tokens']} used); resume with a higher options.budget.max_llm_tokens"
            )
        self._spent[tool_name] += 1

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
