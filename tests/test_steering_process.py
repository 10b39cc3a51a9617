"""Steering across real server processes: a run waiting for its plan review survives a restart (it is
not relaunched, holds no lease) and continues when a person answers, days or seconds later."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.conftest import Servers
from tests.live import live_server, server_env, wait_for

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def test_a_plan_review_wait_spans_a_server_restart(servers: Servers, tmp_path: Path) -> None:
    env = server_env(
        servers, tmp_path, DEEPRESEARCH_TAKEOVER_SCAN_SECONDS="0.2", DEEPRESEARCH_LEASE_SECONDS="1"
    )
    with live_server(env) as (url, _), httpx.Client(base_url=url, timeout=10) as client:
        created = client.post("/api/runs", json={"question": QUESTION, "options": {"review_plan": True}})
        run_id = created.json()["run_id"]
        waiting = wait_for(client, run_id, lambda r: r["status"] != "queued" and r["status"] != "running")
    assert waiting["status"] == "waiting_for_input", waiting.get("error")
    plans = servers.llm.calls_by_prompt()["plan/v1"]
    assert plans == 1 and servers.search.calls == []

    with live_server(env) as (url, _), httpx.Client(base_url=url, timeout=10) as client:
        time.sleep(1.5)  # start-up recovery and several takeover scans (lease 1 s) have looked at it
        run = client.get(f"/api/runs/{run_id}").json()
        assert run["status"] == "waiting_for_input" and run["lease_owner"] is None
        assert run["pending_input"] == {
            **waiting["pending_input"],
            "waiting_seconds": run["pending_input"]["waiting_seconds"],
        }
        assert run["pending_input"]["waiting_seconds"] >= 1.5
        assert servers.search.calls == [] and run["attempts"] == waiting["attempts"]
        answered = client.post(f"/api/runs/{run_id}/input", json={"action": "approve"})
        assert answered.status_code == 202, answered.text
        done = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed", "cancelled"))
    assert done["status"] == "completed", done["error"]
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans  # the plan was not asked for again
    assert set(waiting["pending_input"]["plan"]["queries"]) <= {q for _, q in servers.search.calls}
