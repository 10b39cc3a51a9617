"""A small, strict SSE reader for tests (real HTTP via httpx)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class SSEEvent:
    id: int
    type: str
    data: dict[str, Any]


def iter_sse(
    client: httpx.Client, url: str, *, last_event_id: int | None = None, timeout: float = 60.0
) -> Iterator[SSEEvent]:
    """Yield events until the server closes the stream (or `timeout` seconds pass: then fail)."""
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    deadline = time.monotonic() + timeout
    with client.stream("GET", url, headers=headers, timeout=httpx.Timeout(timeout, read=timeout)) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        for line in response.iter_lines():
            if time.monotonic() > deadline:
                raise AssertionError(f"SSE stream {url} still open after {timeout}s")
            if line.startswith(":"):
                continue  # heartbeat comment
            if not line:
                if "data" in fields:
                    yield SSEEvent(
                        int(fields["id"]), fields.get("event", "message"), json.loads(fields["data"])
                    )
                fields = {}
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")


def collect_until(
    client: httpx.Client,
    url: str,
    stop: Callable[[SSEEvent], bool],
    *,
    last_event_id: int | None = None,
    timeout: float = 60.0,
) -> list[SSEEvent]:
    """Read events until `stop(event)` is true for one (inclusive), then close the connection."""
    events = []
    for event in iter_sse(client, url, last_event_id=last_event_id, timeout=timeout):
        events.append(event)
        if stop(event):
            return events
    raise AssertionError(f"stream closed before the expected event; got {[e.type for e in events][-5:]}")
