"""A real `deepresearch serve` process: e2e_http.py against it, kill -9 mid-stage, SIGTERM and recovery."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from peers import launch
from tests.conftest import Servers
from tests.live import ROOT, live_server, server_env, wait_for

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def test_e2e_http_script_passes_against_a_live_server(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    env = server_env(
        servers, tmp_path, DEEPRESEARCH_STAGE_DELAY_SECONDS="0.4", DEEPRESEARCH_DATABASE_URL=database_url
    )
    # on SQLite, the server starts as a user starts it (a fresh interpreter), not from the zygote
    with live_server(env, fresh_interpreter=database_url.startswith("sqlite")) as (base_url, _):
        result = launch.run(
            [sys.executable, "e2e_http.py", "--timeout", "120"],
            cwd=ROOT,
            env={**env, "LONG_TASK_E2E_BASE_URL": base_url},
            capture_output=True,
            text=True,
            timeout=150,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert summary["ok"] is True and summary["checkpoints_before_cancel"][:2] == [
        "plan_research",
        "search_web",
    ]
    assert not set(summary["stages_run_after_resume"]) & set(summary["skipped_on_resume"])


def test_e2e_http_reports_failure_as_json(tmp_path: Path) -> None:
    result = launch.run(
        [sys.executable, "e2e_http.py", "--base-url", "http://127.0.0.1:9", "--timeout", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["ok"] is False


def test_kill_9_in_flight_reruns_without_repeating_receipted_calls(servers: Servers, tmp_path: Path) -> None:
    default = servers.search.default_results
    slow_url = f"{servers.site_url}/slow?delay=4"

    def with_slow_page(query: str, n: int) -> list[dict[str, Any]]:
        return [*default(query, n), {"title": "Slow page", "url": slow_url, "snippet": "slow"}]

    servers.search.results_for = with_slow_page
    env = server_env(
        servers, tmp_path, DEEPRESEARCH_SOURCES_TO_FETCH="4", DEEPRESEARCH_RECOVER_RUNS_ON_STARTUP="false"
    )
    with live_server(env) as (base_url, process), httpx.Client(base_url=base_url, timeout=10) as client:
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            receipts = client.get(
                f"/api/runs/{run_id}/receipts", params={"receipt_key": "deepresearch:web_fetch:v1"}
            ).json()["receipts"]
            done = [r for r in receipts if r["status"] == "succeeded"]
            if len(done) >= 2 and any(r["status"] == "started" for r in receipts):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("fetches never reached the state to kill in")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    article_hits = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
    searches, plans = len(servers.search.calls), servers.llm.calls_by_prompt()["plan/v1"]

    with live_server(env) as (base_url, _), httpx.Client(base_url=base_url, timeout=10) as client:
        run = client.get(f"/api/runs/{run_id}").json()
        assert run["status"] == "running"  # the dead process never got to say otherwise
        assert client.post(f"/api/runs/{run_id}/resume", json={}).status_code == 409
        latest = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"][-1]
        risk = client.get(f"/api/runs/{run_id}/checkpoints/{latest['checkpoint_id']}/preview").json()
        assert risk["duplicate_risk"]["level"] == "possible"
        assert [c["args"]["url"] for c in risk["duplicate_risk"]["calls_in_doubt"]] == [slow_url]
        # nobody executes this run any more: a cancel stops it at once, then it resumes here
        assert client.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
        assert client.get(f"/api/runs/{run_id}").json()["status"] == "cancelled"
        assert client.post(f"/api/runs/{run_id}/resume", json={}).status_code == 202
        final = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed", "cancelled"))
        assert final["status"] == "completed", final["error"]
    # every fetch that had a receipt was not repeated; only the one in flight at the kill ran again
    after = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
    assert after == article_hits
    assert len(servers.search.calls) == searches
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans
    assert servers.site.hits["/slow"] == 2


@contextmanager
def run_past_first_checkpoint(
    servers: Servers, tmp_path: Path
) -> Iterator[tuple[dict[str, str], subprocess.Popen[bytes], httpx.Client, str]]:
    """A live server (recovery off, slow stages) with a run that has just passed its first checkpoint."""
    env = server_env(
        servers,
        tmp_path,
        DEEPRESEARCH_STAGE_DELAY_SECONDS="0.5",
        DEEPRESEARCH_RECOVER_RUNS_ON_STARTUP="false",
    )
    with live_server(env) as (base_url, process), httpx.Client(base_url=base_url, timeout=10) as client:
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_for(client, run_id, lambda r: r["checkpoint_count"] >= 1)
        yield env, process, client, run_id


def test_sigterm_interrupts_and_restart_recovers(servers: Servers, tmp_path: Path) -> None:
    with run_past_first_checkpoint(servers, tmp_path) as (env, process, _, run_id):
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then re-raises the signal so the exit status says SIGTERM
        assert process.wait(timeout=30) in (0, -signal.SIGTERM)
    plans = servers.llm.calls_by_prompt()["plan/v1"]
    with live_server(env) as (base_url, _), httpx.Client(base_url=base_url, timeout=10) as client:
        assert client.get(f"/api/runs/{run_id}").json()["status"] == "interrupted"
    with (
        live_server({**env, "DEEPRESEARCH_RECOVER_RUNS_ON_STARTUP": "true"}) as (base_url, _),
        httpx.Client(base_url=base_url, timeout=10) as client,
    ):
        final = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed"))
        assert final["status"] == "completed", final["error"]
        events = client.get(f"/api/runs/{run_id}/events", params={"after": 0}).text
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans
    assert "The runner restarted" in events


def test_takeover_over_http_after_kill_9(servers: Servers, tmp_path: Path) -> None:
    """The API offers what the CLI's --takeover does: the same service rule, the same message."""
    with run_past_first_checkpoint(servers, tmp_path) as (env, process, client, run_id):
        here = client.post(f"/api/runs/{run_id}/resume", json={"takeover": True})
        assert here.status_code == 409 and "in this process" in here.json()["detail"]  # never a 2nd run
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    plans = servers.llm.calls_by_prompt()["plan/v1"]
    with live_server(env) as (base_url, _), httpx.Client(base_url=base_url, timeout=10) as client:
        refused = client.post(f"/api/runs/{run_id}/resume", json={})
        assert refused.status_code == 409 and "takeover" in refused.json()["detail"]
        taken = client.post(f"/api/runs/{run_id}/resume", json={"takeover": True})
        assert taken.status_code == 202, taken.text
        final = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed", "cancelled"))
        assert final["status"] == "completed", final["error"]
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans  # the plan's receipt was reused


def test_two_runners_on_one_database_resume_a_run_once(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    """Resumes sent to two replicas at the same moment: one 202 in all, one execution, no stage twice."""
    env = server_env(
        servers,
        tmp_path,
        DEEPRESEARCH_STAGE_DELAY_SECONDS="0.4",
        DEEPRESEARCH_RECOVER_RUNS_ON_STARTUP="false",
        DEEPRESEARCH_DATABASE_URL=database_url,
    )
    with (
        live_server(env) as (url_a, _),
        live_server(env) as (url_b, _),
        httpx.Client(base_url=url_a, timeout=10) as client,
    ):
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_for(client, run_id, lambda r: r["checkpoint_count"] >= 1)
        client.post(f"/api/runs/{run_id}/cancel", json={})
        wait_for(client, run_id, lambda r: r["status"] == "cancelled")
        plans = servers.llm.calls_by_prompt()["plan/v1"]

        async def resume_everywhere() -> list[int]:
            async with httpx.AsyncClient(timeout=30) as session:
                answers = await asyncio.gather(
                    *(session.post(f"{url}/api/runs/{run_id}/resume", json={}) for url in [url_a, url_b] * 3)
                )
            return sorted(a.status_code for a in answers)

        assert asyncio.run(resume_everywhere()) == [202, 409, 409, 409, 409, 409]
        final = wait_for(client, run_id, lambda r: r["status"] in ("completed", "failed", "cancelled"))
        assert final["status"] == "completed", final["error"]
        stages = [c["stage"] for c in client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]]
    assert len(stages) == len(set(stages)), stages  # no stage checkpointed twice
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans
