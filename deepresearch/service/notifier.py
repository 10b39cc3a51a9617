"""In-process delivery of a run's new events to its SSE tails."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from deepresearch.store import EventRecord

# events a slow tail may fall behind by before it reads the log instead (its memory stays bounded)
BUFFER_LIMIT = 1000


class Subscription:
    """One SSE tail of a run: a wake-up, and the events this process appended since the tail last looked.

    Events appended here are handed over in memory, so a tail of a run executing in this process reads
    the log only to replay what came before it connected, or after a gap. A bare wake-up (an event
    appended by another replica, announced by PostgreSQL's NOTIFY) makes the next :meth:`take` say
    "read the log"."""

    def __init__(self, limit: int = BUFFER_LIMIT) -> None:
        self.wake = asyncio.Event()
        self._events: deque[EventRecord] = deque()
        self._limit = limit
        self._stale = False
        self._newest_seen = 0  # the highest seq pushed or announced so far

    def push(self, event: EventRecord) -> None:
        if len(self._events) >= self._limit:
            self._events.clear()
            self._stale = True  # fallen too far behind: the log has everything
        else:
            self._events.append(event)
        self._newest_seen = max(self._newest_seen, event.seq)
        self.wake.set()

    def poke(self, seq: int | None = None) -> None:
        """An event was appended elsewhere (``seq`` when the announcement says which one)."""
        if seq is None or seq > self._newest_seen:
            self._stale = True
            if seq is not None:
                self._newest_seen = seq
        self.wake.set()

    def take(self, after: int) -> list[EventRecord] | None:
        """The events after seq ``after`` that were handed over, in order and without a gap; ``[]`` when
        nothing new is known here; None when only the log can tell (a gap, an overflow, a bare wake-up)."""
        self._newest_seen = max(self._newest_seen, after)  # what the tail replayed: its echo is no news
        while self._events and self._events[0].seq <= after:
            self._events.popleft()
        if self._stale:
            self._stale = False
            self._events.clear()
            return None
        taken: list[EventRecord] = []
        expected = after + 1
        while self._events and self._events[0].seq == expected:
            taken.append(self._events.popleft())
            expected += 1
        if not taken and self._events:
            return None  # the next one is not here (appended out of order): the log has it
        return taken


class EventNotifier:
    """Hands a run's new events to its SSE tails in this process (other processes' tails poll the log,
    or wake on NOTIFY).

    One Subscription per tail, never a shared Condition: a thousand clients that go away at once must not
    be able to leave a lock held that every later publish() waits for."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}

    @contextmanager
    def subscribe(self, run_id: str) -> Iterator[Subscription]:
        subscription = Subscription()
        self._subscribers.setdefault(run_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            subscribers = self._subscribers.get(run_id)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._subscribers[run_id]

    def publish(self, event: EventRecord) -> None:
        """An event this process appended (and committed)."""
        for subscription in self._subscribers.get(event.run_id, ()):
            subscription.push(event)

    def notify(self, announcement: str) -> None:
        """A wake-up from the database: ``run_id`` or ``run_id seq`` (NOTIFY's payload)."""
        run_id, _, seq = announcement.partition(" ")
        for subscription in self._subscribers.get(run_id, ()):
            subscription.poke(int(seq) if seq.isdigit() else None)
