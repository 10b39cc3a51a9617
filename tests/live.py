"""A live `deepresearch serve` in a subprocess, configured only through environment variables."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Servers

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(servers: Servers, tmp_path: Path, **extra: Any) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("DEEPRESEARCH_", "OPENAI_", "LONG_TASK_"))
    }
    env |= servers.env(tmp_path, llm=True) | {"DEEPRESEARCH_LOG_LEVEL": "WARNING"}
    env |= {key: str(value) for key, value in extra.items()}
    return env


@contextmanager
def live_server(
    env: dict[str, str], port: int | None = None, cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent", "serve", "--port", str(port)],
        cwd=cwd or ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"server exited with {process.returncode}: {output[-2000:]}")
            try:
                if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become ready in 30 s")
            time.sleep(0.1)
        yield base_url, process
    finally:
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
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never satisfied the condition; last: {run.get('status')}")
