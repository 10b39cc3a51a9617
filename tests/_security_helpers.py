"""What the security test modules share (test_security*.py, and the API modules that sign users in):
tokens created and revoked in the database, the runner served as a bound host would serve it, a run
waited for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from config import Settings
from deepresearch.service.auth import Tokens
from deepresearch.store import open_persistence
from peers import serve_app
from runner import create_app
from tests.conftest import POLL_SECONDS

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"


async def _create_tokens(settings: Settings, *specs: tuple[str, bool]) -> list[str]:
    async with open_persistence(settings.resolved_database_url) as persistence:
        tokens = Tokens(persistence.store)
        return [(await tokens.create(name, admin=admin))[1] for name, admin in specs]


@contextmanager
def served(settings: Settings, bind_host: str = "127.0.0.1") -> Iterator[str]:
    """The runner as a server bound to `bind_host` would be (its policy), listening on loopback only."""
    with serve_app(create_app(settings, bind_host=bind_host), lifespan="on") as base_url:
        yield base_url


def wait_finished(client: httpx.Client, run_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"run {run_id} did not finish")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _revoke(settings: Settings, name: str) -> None:
    async with open_persistence(settings.resolved_database_url) as persistence:
        await Tokens(persistence.store).revoke(name)
