"""A live `deepresearch serve` in a subprocess, configured only through environment variables.

The process is forked from the test worker's pre-imported zygote (peers/launch.py), which saves the ~2 s of
CPU an interpreter spends importing before it serves; `fresh_interpreter=True` starts it the way a user
does (`python -m agent serve`), so a broken start-up still fails a test."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from peers import free_port, launch
from peers.servers import server_env as server_env  # the tests take it from here with live_server
from tests.conftest import POLL_SECONDS

ROOT = Path(__file__).resolve().parent.parent
_START_ATTEMPTS = 3


def _listens(pid: int, port: int) -> bool:
    """Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux /proc), so a ready
    answer there is this server's and not another test worker's that took the port first."""
    wanted = f"0100007F:{port:04X}"
    inodes = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[1] == wanted and fields[3] == "0A":  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):  # closed meanwhile
            if os.readlink(fd) in inodes:
                return True
    return False


@contextmanager
def live_server(
    env: dict[str, str], port: int | None = None, cwd: Path | None = None, *, fresh_interpreter: bool = False
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    # A port picked here may be taken by another test worker before the server binds it: then the server
    # exits saying so, and (when the caller did not choose the port) it starts again on another one.
    for attempt in range(1, _START_ATTEMPTS + 1):
        start = subprocess.Popen if fresh_interpreter else launch.Popen
        process = start(
            [sys.executable, "-m", "agent", "serve", "--port", str(chosen := port or free_port())],
            cwd=cwd or ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            if _wait_ready(process, chosen, retry=port is None and attempt < _START_ATTEMPTS):
                break
        except BaseException:
            _stop(process)
            raise
    try:
        yield f"http://127.0.0.1:{chosen}", process
    except BaseException as failure:
        # the server's own log says what a 500 or a stall was (it is on a pipe no one reads meanwhile)
        _stop(process)
        if process.stdout is not None and not process.stdout.closed:
            log = process.stdout.read().decode(errors="replace")
            failure.add_note(f"log of the server on port {chosen} (its end):\n{log[-6000:]}")
        raise
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], port: int, *, retry: bool) -> bool:
    """True once the server answers /readyz from its own socket; False when it exited because the port was
    taken and `retry` allows another; RuntimeError otherwise (60 s at most: an interpreter's start takes
    seconds of CPU, more while parallel test workers share the cores)."""
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            output = process.stdout.read().decode() if process.stdout else ""
            if retry and "already in use" in output.lower():
                return False
            raise RuntimeError(f"server exited with {process.returncode}: {output[-2000:]}")
        try:
            ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
        except httpx.HTTPError:
            ready = False
        if ready and _listens(process.pid, port):
            return True
        if time.monotonic() > deadline:
            raise RuntimeError("server did not become ready in 60 s")
        time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def wait_for(client: httpx.Client, run_id: str, predicate: Any, timeout: float = 60) -> dict[str, Any]:
    """Poll the run until `predicate(run detail)` holds (AssertionError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    run: dict[str, Any] = {}
    while time.monotonic() < deadline:
        run = client.get(f"/api/runs/{run_id}").json()
        if predicate(run):
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"run {run_id} never satisfied the condition; last: {run.get('status')}")
