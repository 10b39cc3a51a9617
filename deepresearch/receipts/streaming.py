"""A model's text streamed into the event log while it is written (the report stage)."""

from __future__ import annotations

import time

from deepresearch.receipts.runtime import CancelSignal, RunCancelled, emit

STREAM_BATCH_CHARS = 200
STREAM_BATCH_SECONDS = 0.25


class DeltaStream:
    """Batches streamed text into ``report_delta`` events (a few per second, not one per token) and
    checks for a cancel at every batch: the stream stops at once instead of running to its end."""

    def __init__(self, stage: str, step: str, cancel: CancelSignal) -> None:
        self.stage, self.step, self.cancel = stage, step, cancel
        self._pending: list[str] = []
        self._attempt = 1
        self._offset = 0
        self._last = time.monotonic()

    async def send(self, piece: str, attempt: int) -> None:
        if attempt != self._attempt:  # the re-ask: the text starts again
            await self.flush()
            self._attempt, self._offset = attempt, 0
        self._pending.append(piece)
        if sum(map(len, self._pending)) >= STREAM_BATCH_CHARS or (
            time.monotonic() - self._last >= STREAM_BATCH_SECONDS
        ):
            await self.flush()

    async def flush(self) -> None:
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            emit(
                {
                    "event": "report_delta",
                    "stage": self.stage,
                    "step": self.step,
                    "attempt": self._attempt,
                    "offset": self._offset,
                    "delta": text,
                }
            )
            self._offset += len(text)
            self._last = time.monotonic()
        if await self.cancel.is_set():
            raise RunCancelled(f"{self.cancel.reason} (while the model was writing; asked again on resume)")
