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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langgraph.config import get_stream_writer
from langgraph.runtime import RunControl

from .store import RunStore, args_hash

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RunCancelled(Exception):
    """Raised at a tool boundary once a cancel was requested; the run stops at its latest checkpoint."""

    def __init__(self, reason: str = "cancel requested") -> None:
        super().__init__(reason)
        self.reason = reason


class StageError(Exception):
    """A stage could not complete; the message says what failed and what to do. The run is resumable."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage
        self.message = message


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

    def __init__(self, run_id: str, store: RunStore, cancel: CancelSignal) -> None:
        self.run_id = run_id
        self.store = store
        self.cancel = cancel
        self._inflight: set[asyncio.Task[Any]] = set()
        self.calls_made = 0
        self.calls_reused = 0
        self.tokens_reused = 0
        self.cost_reused = 0.0

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
    ) -> CallOutcome:
        """Return the recorded result of this exact call, or make the call once and record it."""
        hash_ = args_hash({"tool": tool_name, "args": args})
        call_id = uuid.uuid4().hex[:16]
        base = {
            "stage": stage,
            "tool_name": tool_name,
            "call_id": call_id,
            "receipt_key": receipt_key,
            "label": label or tool_name,
        }
        receipt = await self.store.get_receipt(self.run_id, receipt_key, hash_)
        value_from_receipt = decode(receipt.result) if receipt and receipt.status == "succeeded" else None
        if receipt is not None and value_from_receipt is not None and still_valid(value_from_receipt):
            value = value_from_receipt
            self.calls_reused += 1
            self.tokens_reused += receipt.tokens
            self.cost_reused += receipt.cost_usd
            emit({"event": "tool_call", **base, "args": args, "reused": True})
            emit(
                {
                    "event": "tool_result",
                    **base,
                    "ok": True,
                    "reused": True,
                    "tokens": receipt.tokens,
                    "cost_usd": receipt.cost_usd,
                    "output": summarize(value),
                }
            )
            return CallOutcome(value, reused=True, tokens=receipt.tokens, cost_usd=receipt.cost_usd)

        await self.cancel.raise_if_set()
        await self.store.start_receipt(self.run_id, receipt_key, hash_, tool_name, stage, args)
        emit({"event": "tool_call", **base, "args": args, "reused": False})
        started = time.monotonic()

        async def guarded() -> tuple[T, int, float]:
            try:
                value = await run()
            except asyncio.CancelledError:
                await self.store.fail_receipt(self.run_id, receipt_key, hash_, "cancelled while in flight")
                raise
            except Exception as exc:
                await self.store.fail_receipt(self.run_id, receipt_key, hash_, f"{type(exc).__name__}: {exc}")
                raise
            tokens, cost = usage(value)
            await self.store.finish_receipt(self.run_id, receipt_key, hash_, encode(value), tokens, cost)
            return value, tokens, cost

        task = asyncio.ensure_future(guarded())
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)
        try:
            # shield: if the graph cancels this branch (a sibling failed, or a cancel), the call still
            # finishes and records its receipt, so a resume will not pay for it twice.
            value, tokens, cost = await asyncio.shield(task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            emit(
                {
                    "event": "tool_result",
                    **base,
                    "ok": False,
                    "reused": False,
                    "error": f"{type(exc).__name__}: {exc}",
                    "duration_ms": round((time.monotonic() - started) * 1000),
                }
            )
            raise
        self.calls_made += 1
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
            }
        )
        return CallOutcome(value, reused=False, tokens=tokens, cost_usd=cost)

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
