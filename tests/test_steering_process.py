"""Steering across real server processes: a run waiting for its plan review survives a restart (it is
not relaunched, holds no lease) and continues when a person answers, days or seconds later."""

from __future__ import annotations

import json
import time
from collections import Counter
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


def test_done_means_review_restart_edit_fork_and_follow_up(servers: Servers, tmp_path: Path) -> None:
    """The issue's "done means", on real server processes: plan review across a restart, an edited plan,
    a fork from screen_evidence with one more query paying only for new calls, and a follow-up that reads
    none of the old sources again."""
    env = server_env(servers, tmp_path)
    with live_server(env) as (url, _), httpx.Client(base_url=url, timeout=10) as client:
        options = {"review_plan": True}
        run_id = client.post("/api/runs", json={"question": QUESTION, "options": options}).json()["run_id"]
        waiting = wait_for(client, run_id, lambda r: r["status"] not in ("queued", "running"))
    assert waiting["status"] == "waiting_for_input"
    plan = waiting["pending_input"]["plan"]
    with live_server(env) as (url, _), httpx.Client(base_url=url, timeout=10) as client:
        edit = {
            "sub_questions": plan["sub_questions"],
            "queries": [*plan["queries"][:2], "sqlite wal readers"],
        }
        assert (
            client.post(f"/api/runs/{run_id}/input", json={"action": "edit", "plan": edit}).status_code == 202
        )
        done = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed", "cancelled"))
        assert done["status"] == "completed", done["error"]
        assert client.get(f"/api/runs/{run_id}/report").status_code == 200
        searched = list(servers.search.calls)
        llm_bodies = [json.dumps(b["messages"], sort_keys=True) for b in servers.llm.calls]
        pages = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
        assert sorted(q for _, q in searched) == sorted(edit["queries"])

        screen = next(
            c
            for c in client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
            if c["stage"] == "screen_evidence"
        )
        extra = "heat pumps cold climate efficiency"
        body = {"checkpoint_id": screen["checkpoint_id"], "patch": {"add_queries": [extra]}}
        fork = client.post(f"/api/runs/{run_id}/fork", json=body).json()
        forked = wait_for(
            client, fork["run_id"], lambda r: r["status"] in ("completed", "failed", "cancelled")
        )
        assert forked["status"] == "completed", forked["error"]
        assert servers.search.calls == [*searched, ("generic", extra)]
        new_bodies = [json.dumps(b["messages"], sort_keys=True) for b in servers.llm.calls][len(llm_bodies) :]
        assert not set(new_bodies) & set(llm_bodies)  # the fork asked the model nothing it had asked
        for path, count in servers.site.hits.items():
            assert count == pages.get(path, count), path  # no page of the original fetched again

        fork_pages = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
        question = "How do SQLite checkpoints copy write-ahead log frames back into the database?"
        follow = client.post(
            f"/api/runs/{fork['run_id']}/follow-up",
            json={"question": question, "options": {"review_plan": True}},
        ).json()
        # a follow-up reviews its plan when asked to (it does not inherit review_plan)
        wait_for(client, follow["run_id"], lambda r: r["status"] == "waiting_for_input")
        assert (
            client.post(f"/api/runs/{follow['run_id']}/input", json={"action": "approve"}).status_code == 202
        )
        answered = wait_for(
            client, follow["run_id"], lambda r: r["status"] in ("completed", "failed", "cancelled")
        )
        assert answered["status"] == "completed", answered["error"]
        after = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
        assert all(after[p] == n for p, n in fork_pages.items())  # none of the old sources read again
