"""The in-process runner on each backend, over real HTTP, for the API test modules (a pytest plugin of
tests/conftest.py), and the poll they share."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from peers import serve_app
from runner import create_app
from tests.conftest import POLL_SECONDS, Servers


@pytest.fixture
def api(
    servers: Servers, tmp_path: Path, database_url: str, request: pytest.FixtureRequest
) -> Iterator[httpx.Client]:
    """The runner on each backend (SQLite file, PostgreSQL); settings overrides by indirect parametrize."""
    overrides: dict[str, Any] = getattr(request, "param", {})
    settings = servers.settings(tmp_path, llm=True, database_url=database_url, **overrides)
    with (
        serve_app(create_app(settings), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30) as client,
    ):
        yield client


def wait_status(client: httpx.Client, run_id: str, statuses: set[str], timeout: float = 60) -> dict[str, Any]:
    """Poll the run until its status is one of `statuses` (AssertionError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] in statuses:
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"run {run_id} did not reach {statuses}")
