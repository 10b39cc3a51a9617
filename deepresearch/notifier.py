"""In-process wake-ups of a run's event streams."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager


class EventNotifier:
    """Wakes the SSE tails of a run when this process appends one of its events (others poll the log).

    One asyncio.Event per subscriber, never a shared Condition: a thousand clients that go away at once
    must not be able to leave a lock held that every later notify() waits for."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Event]] = {}

    @contextmanager
    def subscribe(self, run_id: str) -> Iterator[asyncio.Event]:
        wake = asyncio.Event()
        self._subscribers.setdefault(run_id, set()).add(wake)
        try:
            yield wake
        finally:
            subscribers = self._subscribers.get(run_id)
            if subscribers is not None:
                subscribers.discard(wake)
                if not subscribers:
                    del self._subscribers[run_id]

    def notify(self, run_id: str) -> None:
        for wake in self._subscribers.get(run_id, ()):
            wake.set()
