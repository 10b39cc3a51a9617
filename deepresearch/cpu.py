"""CPU-bound work of a run — HTML extraction, passage ranking, report rendering — in worker processes.

Why processes: the event loop shares one GIL with every thread of the process. Extraction in worker
threads held it while the loop waited to hand out SSE events, commits and HTTP bytes; under ten runs at
once every socket call of the loop could wait a whole switch interval for the GIL (docs/profile.md). In
a process of its own the work costs the loop only the pickling of its arguments.

One pool per engine (per server or CLI process), started on first use: a process that never fetches a
page never starts a worker. ``workers=0`` runs the same functions in threads, as before.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

__all__ = ["CpuPool", "CpuWorkerLost", "default_workers"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# what every worker imports once at start, so the first page a run fetches does not pay for it
_PRELOAD = ("deepresearch.web.extract", "deepresearch.extractive.screening", "deepresearch.report.compose")


PARENT_CHECK_SECONDS = 0.5
"""How often a worker looks whether its server still runs (an orphan exits within this)."""


class CpuWorkerLost(RuntimeError):
    """A worker process died while it had the task (killed, out of memory, a crash in a C parser), twice."""


def default_workers() -> int:
    """Cores - 1, at least 2 and at most 4. On 2 cores, 2 workers finished 10 and 50 runs at once 4-5 %
    sooner than 1: pages arrive in bursts (every run of a batch fetches its round at the same moment),
    and one worker works through the queue alone."""
    return max(2, min(4, (os.cpu_count() or 2) - 1))


def _start_worker(parent: int) -> None:
    """A worker's initializer: import the modules, and exit once the server that started it is gone."""
    import importlib

    threading.Thread(target=_follow_parent, args=(parent,), name="follow-parent", daemon=True).start()
    for name in _PRELOAD:
        importlib.import_module(name)


def _follow_parent(parent: int) -> None:
    # A server killed with SIGKILL cannot stop its pool, and a worker never sees its task queue close (it
    # holds that pipe's write end too): without this it would wait for work forever, as an orphan.
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


class CpuPool:
    """Runs picklable top-level functions off the event loop: in ``workers`` processes, or in threads
    when ``workers`` is 0."""

    def __init__(self, workers: int) -> None:
        if workers < 0:
            raise ValueError("workers must be 0 (threads) or more")
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()  # close() may come from another thread than the loop's
        self._closed = False
        # Starting the pool and submitting to it may start worker processes (spawn: pipes, files, the
        # resource tracker): blocking calls, so they are made on this thread, never on the event loop. A
        # thread of its own: the loop's default executor may be busy with long file work.
        self._submitter = ThreadPoolExecutor(1, thread_name_prefix="cpu-submit")

    @classmethod
    def for_setting(cls, workers: int | None) -> CpuPool:
        """The pool DEEPRESEARCH_CPU_WORKERS asks for (unset: :func:`default_workers`)."""
        return cls(default_workers() if workers is None else workers)

    def _pool(self) -> Executor:
        with self._lock:
            if self._closed:
                raise RuntimeError("the CPU pool is closed")
            if self._executor is None:
                # spawn, not fork: the server has threads (aiosqlite, the loop's executor), and a forked
                # child would inherit their locks in whatever state they were
                self._executor = ProcessPoolExecutor(
                    self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(os.getpid(),),
                )
            return self._executor

    async def run(self, fn: Callable[..., T], *args: Any, trusted: bool = False) -> T:
        """``fn(*args)`` in a worker. A worker that dies takes every task of its pool down with it, not only
        its own: each is tried once more in a new pool, and a second loss raises :class:`CpuWorkerLost`.
        ``trusted``: the input is the run's own (ranking, rendering), not a page from the web, so after the
        second loss it runs in a thread instead - it is another task's page that kills the workers, and that
        must not fail this run's stage."""
        if not self.workers:
            return await asyncio.to_thread(fn, *args)
        loop = asyncio.get_running_loop()
        name = getattr(fn, "__name__", repr(fn))
        for attempt in (1, 2):
            if self._closed:  # (the submitting thread is gone too)
                raise RuntimeError("the CPU pool is closed")
            executor = await loop.run_in_executor(self._submitter, self._pool)
            try:
                future = await loop.run_in_executor(
                    self._submitter, functools.partial(executor.submit, fn, *args)
                )
                return await asyncio.wrap_future(future)
            except BrokenProcessPool:
                logger.warning(
                    "a CPU worker died while %s was queued or running (attempt %d); starting a new pool",
                    name,
                    attempt,
                    exc_info=True,
                )
                self._replace(executor)
        if trusted:
            return await asyncio.to_thread(fn, *args)
        raise CpuWorkerLost(f"a CPU worker died twice running {name}")

    def _replace(self, broken: Executor) -> None:
        with self._lock:
            if self._executor is broken:  # one of many failing tasks replaces the pool, the rest reuse it
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers; tasks still queued are cancelled. Idempotent."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        self._submitter.shutdown(wait=False)
