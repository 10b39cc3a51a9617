"""Two runners on one database (SQLite file, PostgreSQL): leases, takeover after kill -9, cancel across
replicas. Real processes, real signals; the scripted model, search and web servers count every call."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from peers import launch
from tests.conftest import Servers
from tests.live import ROOT, live_server, server_env, wait_for
from tests.sse import SSEEvent, iter_sse

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def repeated_calls(servers: Servers) -> dict[str, list[Any]]:
    """Calls any scripted peer answered more than once with exactly the same request."""
    llm = Counter(json.dumps(body.get("messages"), sort_keys=True) for body in servers.llm.calls)
    search = Counter(servers.search.calls)
    return {
        "llm": [m[:120] for m, n in llm.items() if n > 1],
        "search": [q for q, n in search.items() if n > 1],
        "fetch": [p for p, n in servers.site.hits.items() if n > 1 and p.startswith("/articles/")],
    }


def test_a_replica_killed_mid_run_is_taken_over_by_the_other_one(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    """The issue's "done means": B streams while A, executing, is killed; B finishes the run, the stream
    has no gap and no duplicate, and no completed call was made twice."""
    env = server_env(
        servers,
        tmp_path,
        DEEPRESEARCH_DATABASE_URL=database_url,
        DEEPRESEARCH_STAGE_DELAY_SECONDS="0.6",
        DEEPRESEARCH_TAKEOVER_SCAN_SECONDS="0.5",
    )
    with (
        live_server(env) as (url_a, process_a),
        live_server(env) as (url_b, _),
        httpx.Client(base_url=url_a, timeout=10) as client_a,
        httpx.Client(base_url=url_b, timeout=30) as client_b,
    ):
        run_id = client_a.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        events: list[SSEEvent] = []
        streaming = threading.Thread(
            target=lambda: events.extend(iter_sse(client_b, f"/api/runs/{run_id}/events", timeout=90)),
            daemon=True,
        )
        streaming.start()
        running = wait_for(client_b, run_id, lambda r: r["checkpoint_count"] >= 2)
        assert running["lease_owner"] and running["lease_owner"].split(":")[2] == str(process_a.pid)
        # B will not take over a run A still holds, even when asked to
        refused = client_b.post(f"/api/runs/{run_id}/resume", json={"takeover": True})
        assert refused.status_code == 409 and "another process" in refused.json()["detail"]
        process_a.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        process_a.wait(timeout=10)
        taken = wait_for(
            client_b, run_id, lambda r: r["lease_owner"] and str(process_a.pid) not in r["lease_owner"]
        )
        takeover_seconds = time.monotonic() - killed_at
        final = wait_for(client_b, run_id, lambda r: r["status"] in ("completed", "failed"), timeout=90)
        streaming.join(timeout=30)
    assert final["status"] == "completed", final["error"]
    assert final["attempts"] == 2 and taken["attempts"] == 2
    assert takeover_seconds < 10, takeover_seconds
    # the stream from B: every seq once, in order, through A's events and B's, to the end
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert events[-1].type == "end" and events[-1].data["status"] == "completed"
    assert any(e.type == "message" and "stopped answering" in e.data.get("text", "") for e in events)
    stages = [e.data["stage"] for e in events if e.type == "checkpoint"]
    assert len(stages) == len(set(stages)) == 7, stages  # no business stage twice
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    print(f"takeover after kill -9: {takeover_seconds:.2f} s")


def test_start_up_recovery_leaves_a_run_another_process_executes(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    """A replica starting while another executes a run does not start a second execution of it."""
    # slow stages: the run is still going when the second replica has started (a few seconds, more on a
    # loaded machine: at 2 s a stage the run could end before it, with more test processes than cores)
    env = server_env(
        servers, tmp_path, DEEPRESEARCH_DATABASE_URL=database_url, DEEPRESEARCH_STAGE_DELAY_SECONDS="4"
    )
    with live_server(env) as (url_a, process_a), httpx.Client(base_url=url_a, timeout=10) as client_a:
        run_id = client_a.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        running = wait_for(client_a, run_id, lambda r: r["checkpoint_count"] >= 1)
        assert running["lease_owner"].split(":")[2] == str(process_a.pid)
        with live_server(env) as (url_b, _), httpx.Client(base_url=url_b, timeout=10) as client_b:
            # cancel on B: A, which executes the run, stops it; B writes no `end` of its own
            assert client_b.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
            final = wait_for(client_b, run_id, lambda r: r["status"] not in ("queued", "running"))
            events = list(iter_sse(client_b, f"/api/runs/{run_id}/events"))
    assert final["status"] == "cancelled" and final["attempts"] == 1
    assert [e.type for e in events].count("end") == 1
    assert not any(e.data.get("orphaned") for e in events)
    assert servers.llm.calls_by_prompt()["plan/v1"] == 1


@pytest.mark.long
def test_random_kills_of_the_executing_replica(database_url: str, tmp_path: Path) -> None:
    """bench/replica_soak.py with 10 kills at random moments (the bench runs 100): every run completes with
    its report and a gap-free log, no call is made more than twice, and no more calls twice than kills."""
    argv = [sys.executable, "bench/replica_soak.py", "--kills", "10", "--seed", "7"]
    if database_url.startswith("postgres"):
        argv += ["--database", database_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPRESEARCH_", "OPENAI_"))}
    # the soak and its replicas are forked from this worker's zygote (peers/launch.py)
    env[launch.ADDRESS_VARIABLE] = launch.address()
    done = launch.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    assert summary["kills"] == 10 and summary["takeovers"] == 10
    assert summary["completed"] == summary["runs"] == summary["events_in_order"]
    assert summary["calls_seen_more_than_twice"] == 0


def test_a_checkpoint_saved_but_never_announced_is_announced_on_resume(
    servers: Servers, tmp_path: Path
) -> None:
    """The window a kill -9 can hit: LangGraph saved a stage's checkpoint, the process died before it
    indexed and announced it. The next execution announces it (`recovered`): no `checkpoint` is lost."""
    env = server_env(servers, tmp_path, DEEPRESEARCH_RECOVER_RUNS_ON_STARTUP="false")
    with (
        live_server(env | {"DEEPRESEARCH_CRASH_AFTER_CHECKPOINT": "search_web"}) as (url, process),
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        assert process.wait(timeout=60) == -signal.SIGKILL
    with live_server(env) as (url, _), httpx.Client(base_url=url, timeout=30) as client:
        before = client.get(f"/api/runs/{run_id}").json()
        assert [c["stage"] for c in client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]] == [
            "plan_research"
        ]
        assert client.post(f"/api/runs/{run_id}/resume", json={"takeover": True}).status_code == 202
        events = list(iter_sse(client, f"/api/runs/{run_id}/events"))
        final = client.get(f"/api/runs/{run_id}").json()
    assert before["status"] == "running" and final["status"] == "completed", final["error"]
    checkpoints = [e for e in events if e.type == "checkpoint"]
    assert sorted(e.data["stage"] for e in checkpoints) == sorted(
        [
            "plan_research",
            "search_web",
            "fetch_sources",
            "screen_evidence",
            "analyze_findings",
            "critic_review",
            "write_report",
        ]
    )
    recovered = [e.data["stage"] for e in checkpoints if e.data.get("recovered")]
    assert recovered == ["search_web"] and final["checkpoint_count"] == 7
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert servers.search.calls and len(servers.search.calls) == len(set(servers.search.calls))
