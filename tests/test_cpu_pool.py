"""The CPU pool (deepresearch/cpu.py): work runs in real worker processes, a worker killed with SIGKILL
is replaced, and a task that kills its worker every time fails with a clear error instead of hanging."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deepresearch.cpu import CpuPool, CpuWorkerLost
from deepresearch.web.extract import extract_document
from deepresearch.web.fetch import WebFetcher
from peers.static_site import ARTICLES, article_html
from tests.conftest import Servers

SLUG = "durable-workflow-checkpoints"


async def test_work_runs_in_a_worker_process_and_threads_when_asked() -> None:
    pool = CpuPool(1)
    try:
        worker = await pool.run(os.getpid)
        assert worker != os.getpid()
        assert await pool.run(os.getpid) == worker  # the same worker, started once
        page = article_html(SLUG).encode()
        extracted = await pool.run(extract_document, page, "text/html", "utf-8", "http://x/a", 10_000)
        assert extracted.extractor == "trafilatura" and extracted.text
    finally:
        pool.close()
    threads = CpuPool(0)
    assert await threads.run(os.getpid) == os.getpid()


async def test_a_worker_killed_mid_task_is_replaced_and_the_task_runs_again() -> None:
    pool = CpuPool(1)
    try:
        worker = await pool.run(os.getpid)
        task = asyncio.ensure_future(pool.run(time.sleep, 1.0))
        await asyncio.sleep(0.3)  # the worker is inside time.sleep
        os.kill(worker, signal.SIGKILL)
        assert await asyncio.wait_for(task, timeout=30) is None  # ran again, in a new worker
        replacement = await pool.run(os.getpid)
        assert replacement not in (worker, os.getpid())
    finally:
        pool.close()


async def test_a_task_that_kills_its_worker_every_time_fails_clearly() -> None:
    pool = CpuPool(1)
    try:
        with pytest.raises(CpuWorkerLost, match="died twice running _exit"):
            await asyncio.wait_for(pool.run(os._exit, 3), timeout=60)
        assert await pool.run(sum, [1, 2]) == 3  # and the pool still works afterwards
    finally:
        pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        await pool.run(sum, [1])


async def test_the_fetcher_extracts_in_the_pool(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    pool = CpuPool(1)
    try:
        async with WebFetcher(settings, cpu=pool) as fetcher:
            page = await fetcher.fetch(f"{servers.site_url}/articles/{SLUG}")
        assert page.extractor == "trafilatura" and ARTICLES[SLUG][0] in page.title
    finally:
        pool.close()


async def test_a_page_that_kills_the_workers_does_not_fail_the_trusted_work_queued_with_it() -> None:
    """A dying worker breaks its whole pool: what was queued behind the killer is tried again, and the
    run's own work (ranking, rendering) finishes in a thread if the pool breaks twice."""
    pool = CpuPool(1)
    try:
        killer = asyncio.ensure_future(pool.run(os._exit, 3))
        await asyncio.sleep(0)  # queued first
        queued = asyncio.ensure_future(pool.run(sum, [1, 2, 3], trusted=True))
        assert await asyncio.wait_for(queued, timeout=60) == 6
        with pytest.raises(CpuWorkerLost):
            await asyncio.wait_for(killer, timeout=60)
    finally:
        pool.close()


def test_bad_worker_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="0 \\(threads\\) or more"):
        CpuPool(-1)
    assert CpuPool.for_setting(0).workers == 0
    assert 2 <= CpuPool.for_setting(None).workers <= 4


ORPHAN_SCRIPT = """
import asyncio, os, sys, time
from deepresearch.cpu import CpuPool
pool = CpuPool(1)
print(asyncio.run(pool.run(os.getpid)), flush=True)
time.sleep(60)
"""


def running(pid: int) -> bool:
    """The process exists and has not exited (a zombie, exited but not yet reaped, has no cmdline)."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_the_workers_of_a_killed_server_exit() -> None:
    """kill -9 of the process that owns the pool: its worker notices within a second and exits."""
    owner = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_SCRIPT],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None
        worker = int(owner.stdout.readline())
        assert worker != owner.pid and running(worker)
        owner.kill()
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while running(worker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(worker), f"worker {worker} outlived its killed owner"
    finally:
        if owner.poll() is None:
            owner.kill()
