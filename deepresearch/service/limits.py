"""Per-user limits of one runner process: run starts per minute, runs active at once, open event streams.

Counted in memory (per replica) except active runs, which are counted in the database (every replica
sees the same number). Each limit answers 429 with the limit it hit and the setting that raises it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from deepresearch.errors import TooManyRequests


class StartRate:
    """At most `per_minute` run starts per user in any sliding minute."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._starts: dict[str, deque[float]] = {}

    def check(self, user: str) -> None:
        now = time.monotonic()
        starts = self._starts.setdefault(user, deque())
        while starts and now - starts[0] >= 60:
            starts.popleft()
        if len(starts) >= self.per_minute:
            wait = 60 - (now - starts[0])
            raise TooManyRequests(
                f"at most {self.per_minute} runs may be started per minute "
                f"(DEEPRESEARCH_MAX_RUNS_PER_MINUTE); try again in {wait:.0f} s",
                retry_after=max(1, round(wait)),
            )
        starts.append(now)

    def forget(self, user: str) -> None:
        """Take back the last start counted for `user` (the start was refused after all)."""
        starts = self._starts.get(user)
        if starts:
            starts.pop()


class ActiveRuns:
    """At most `limit` runs of one user queued or running at once, counted by the caller in the database."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def check(self, user: str, active: int) -> None:
        if active >= self.limit:
            raise TooManyRequests(
                f"{user} has {active} runs queued or running, the most allowed at once "
                "(DEEPRESEARCH_MAX_ACTIVE_RUNS_PER_USER); wait for one to finish or cancel one",
                retry_after=10,
            )


class StreamSlots:
    """At most `per_client` event streams open at once per client (a user, or an address without token)."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._open: dict[str, int] = {}

    def open_count(self) -> int:
        """Streams open now, all clients together (/metrics)."""
        return sum(self._open.values())

    def acquire(self, client: str) -> Callable[[], None]:
        """Take a slot (TooManyRequests if none is free); returns its release, which may be called often."""
        if self._open.get(client, 0) >= self.per_client:
            raise TooManyRequests(
                f"at most {self.per_client} event streams may be open at once per client "
                "(DEEPRESEARCH_MAX_STREAMS_PER_CLIENT); close some first",
                retry_after=5,
            )
        self._open[client] = self._open.get(client, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._open[client] - 1
            if left:
                self._open[client] = left
            else:
                del self._open[client]

        return release
