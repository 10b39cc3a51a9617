"""docs/security.md, the operator's side, against live servers and the CLI on loopback: token commands
and `serve` refusing to listen off loopback without one, pruning old runs (by command and on a schedule),
and the limits that answer 429 naming the setting to raise."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from config import Settings
from deepresearch.store import open_persistence
from peers import launch
from tests._security_helpers import QUESTION, served, wait_finished
from tests.conftest import Servers
from tests.live import ROOT, server_env
from tests.sse import iter_sse


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return launch.run(
        [sys.executable, "-m", "agent", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.long
def test_token_commands_and_serve_refusing_without_a_token(servers: Servers, tmp_path: Path) -> None:
    env = server_env(servers, tmp_path)
    refused = _cli(["serve", "--host", "0.0.0.0", "--port", "9"], env)
    assert refused.returncode == 2
    assert "deepresearch token create NAME --admin" in refused.stderr and "Serving" not in refused.stdout
    required = _cli(["serve", "--port", "9"], env | {"DEEPRESEARCH_REQUIRE_TOKEN": "true"})
    assert required.returncode == 2 and "without an API token" in required.stderr

    created = _cli(["token", "create", "alice", "--admin"], env)
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip().splitlines()[-1]
    assert token.startswith("drt_") and len(token) == 56
    listed = _cli(["token", "list"], env)
    assert "alice" in listed.stdout and "admin" in listed.stdout and token not in listed.stdout
    assert token[4:12] in listed.stdout  # the public id
    bad = _cli(["token", "create", "Local Admin"], env)
    assert bad.returncode == 2 and "invalid user name" in bad.stderr
    assert _cli(["token", "create", "local"], env).returncode == 2
    assert "Revoked token" in _cli(["token", "revoke", token[4:12]], env).stdout
    again = _cli(["token", "revoke", "alice"], env)
    assert again.returncode == 2 and "no active token" in again.stderr


def test_prune_removes_everything_of_an_old_run_and_nothing_of_a_newer_one(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path)
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        old, new = (client.post("/api/runs", json={"question": QUESTION}).json()["run_id"] for _ in range(2))
        for run_id in (old, new):
            assert wait_finished(client, run_id)["status"] == "completed"
        old_dir = settings.workspace_dir / client.get(f"/api/runs/{old}").json()["artifact_dir"]
        new_dir = settings.workspace_dir / client.get(f"/api/runs/{new}").json()["artifact_dir"]
    counts_before = asyncio.run(_backdate_and_count(settings, old, old, new))
    assert all(count > 0 for count in counts_before[old].values())

    pruned = _cli(["prune", "--older-than", "30d"], server_env(servers, tmp_path))
    assert pruned.returncode == 0, pruned.stderr
    assert "Deleted 1 run(s)" in pruned.stdout and "Database:" in pruned.stdout
    counts = asyncio.run(_backdate_and_count(settings, None, old, new))
    assert all(count == 0 for count in counts[old].values()), counts[old]
    assert counts[new] == counts_before[new]
    assert not old_dir.exists() and new_dir.is_dir()
    assert _cli(["prune", "--older-than", "soon"], server_env(servers, tmp_path)).returncode == 2


async def _backdate_and_count(
    settings: Settings, backdate: str | None, *run_ids: str
) -> dict[str, dict[str, int]]:
    """Backdate the run `backdate` by 31 days (if given); count what the database holds of each run."""
    async with open_persistence(settings.resolved_database_url) as persistence:
        if backdate:
            old = (datetime.now(UTC) - timedelta(days=31)).isoformat(timespec="milliseconds")
            await persistence.store.update_run(backdate, finished_at=old)
        return {run_id: await _count(persistence, run_id) for run_id in run_ids}


async def _count(persistence: Any, run_id: str) -> dict[str, int]:
    store = persistence.store
    thread = f"deepresearch-{run_id}"
    checkpoints = [c async for c in persistence.checkpointer.alist({"configurable": {"thread_id": thread}})]
    return {
        "runs": len([r for r in await store.list_runs(limit=100) if r.run_id == run_id]),
        "events": len(await store.list_events(run_id)),
        "checkpoint_index": len(await store.list_checkpoints(run_id)),
        "receipts": len(await store.list_receipts(run_id)),
        "checkpoints": len(checkpoints),
    }


def test_limits_answer_429_with_the_setting_to_raise(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(
        tmp_path,
        max_runs_per_minute=3,
        max_active_runs_per_user=2,
        max_streams_per_client=2,
        stage_delay_seconds=3,  # the runs stay active while the limits are tried
    )
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        first, second = (client.post("/api/runs", json={"question": QUESTION}) for _ in range(2))
        assert first.status_code == second.status_code == 201
        busy = client.post("/api/runs", json={"question": QUESTION})
        assert busy.status_code == 429 and "DEEPRESEARCH_MAX_ACTIVE_RUNS_PER_USER" in busy.json()["detail"]
        run_id = first.json()["run_id"]
        # two streams held open; a third is refused until one closes
        with (
            client.stream("GET", f"/api/runs/{run_id}/events") as one,
            client.stream("GET", f"/api/runs/{run_id}/events") as two,
        ):
            assert one.status_code == two.status_code == 200
            third = client.get(f"/api/runs/{run_id}/events")
            assert third.status_code == 429, third.text
            assert "DEEPRESEARCH_MAX_STREAMS_PER_CLIENT" in third.json()["detail"]
            assert third.headers["retry-after"] == "5"
        for run in (first.json(), second.json()):
            assert client.post(f"/api/runs/{run['run_id']}/cancel", json={}).status_code == 202
            wait_finished(client, run["run_id"])
        # the slots were given back when the streams closed
        assert [e.type for e in iter_sse(client, f"/api/runs/{run_id}/events")][-1] == "end"
        third_start = client.post("/api/runs", json={"question": QUESTION})
        assert third_start.status_code == 201
        rate = client.post("/api/runs", json={"question": QUESTION})
        assert rate.status_code == 429 and "DEEPRESEARCH_MAX_RUNS_PER_MINUTE" in rate.json()["detail"]
        assert int(rate.headers["retry-after"]) >= 1


def test_serve_prunes_on_a_schedule(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        old, new = (client.post("/api/runs", json={"question": QUESTION}).json()["run_id"] for _ in range(2))
        for run_id in (old, new):
            wait_finished(client, run_id)
    asyncio.run(_backdate_and_count(settings, old))
    keeping = settings.model_copy(update={"retention_days": 30.0})
    with served(keeping) as base, httpx.Client(base_url=base, timeout=30) as client:
        deadline = time.monotonic() + 20
        while client.get(f"/api/runs/{old}").status_code != 404:
            assert time.monotonic() < deadline, "the old run was not pruned at start-up"
            time.sleep(0.1)
        assert client.get(f"/api/runs/{new}").status_code == 200
