"""How many requests one LLM endpoint gets at once, from this process (DEEPRESEARCH_LLM_MAX_CONCURRENCY).

A local server usually computes one answer at a time: llama.cpp's server has one slot unless started with
``--parallel``, Ollama on a CPU answers one request per model by default. Requests beyond its slots wait in
the *server's* queue while the client's timeout runs, so three reviewers asked at once of a one-slot server
time out one after the other, each retried. Queued here instead - before the request is sent - the wait
does not count against the request's timeout, a cancel can still take a request that never left, and the
server is never asked for more than it can do. The default is therefore 1 for an endpoint on a loopback,
private or link-local address (or a host name without a dot, as container networks name services) and 4
for everything else (hosted APIs and GPU servers such as vLLM batch many requests; their rate limits still
come back as 429 and are retried). The limit holds per process: replicas each have their own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

LOCAL_DEFAULT = 1
REMOTE_DEFAULT = 4
_LOCAL_NAMES = ("localhost", "host.docker.internal", "host.containers.internal")


def default_limit(base_url: str) -> int:
    """1 for a server on this machine or the local network, 4 for anything else (see the module doc)."""
    host = (urlsplit(base_url).hostname or "").lower().rstrip(".")
    if not host:
        return REMOTE_DEFAULT  # no base URL: OpenAI
    if host in _LOCAL_NAMES or host.endswith((".localhost", ".local", ".internal", ".lan")):
        return LOCAL_DEFAULT
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return LOCAL_DEFAULT if "." not in host else REMOTE_DEFAULT
    local = address.is_loopback or address.is_private or address.is_link_local
    return LOCAL_DEFAULT if local else REMOTE_DEFAULT


class EndpointSlots:
    """A first-come, first-served limit of requests in flight. Not a Semaphore: a waiter must be able to
    leave the queue (a task cancelled) without losing or leaking a slot, and the queue length is worth
    logging."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def slot(self, check: Callable[[], None] | None = None) -> AsyncIterator[None]:
        """Hold one slot for the body. ``check`` is called before queueing and once the slot is granted,
        just before the request would be sent; what it raises (a cancel) gives the slot on and sends
        nothing. Not while waiting: the requests ahead - a cancelled run's own calls in flight among them -
        end first, so a stage never stops before the calls it sent have reported. Cancelling the waiting
        task leaves the queue."""
        await self._acquire(check)
        try:
            if check is not None:
                check()
            yield
        finally:
            self._release()

    async def _acquire(self, check: Callable[[], None] | None) -> None:
        if check is not None:
            check()
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        logger.debug(
            "LLM request queued for a free slot (%s in use, %s waiting)", self.in_use, len(self._waiters)
        )
        try:
            # bounded by the requests ahead: each holds its slot for at most its timeouts and retries
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._release()  # granted just as it left: hand the slot on
            else:
                self._discard(waiter)
            raise

    def _release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes straight to the next in line
                return
        self.in_use -= 1

    def _discard(self, waiter: asyncio.Future[None]) -> None:
        with suppress(ValueError):
            self._waiters.remove(waiter)


# one table per event loop: a slot's futures belong to the loop that made them (tests run several loops)
_TABLES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], EndpointSlots]] = (
    weakref.WeakKeyDictionary()
)


def slots_for(endpoint: str, limit: int) -> EndpointSlots:
    """The process's slots of ``endpoint`` (shared by every client of it on this event loop)."""
    table = _TABLES.setdefault(asyncio.get_running_loop(), {})
    return table.setdefault((endpoint, limit), EndpointSlots(limit))
