"""No blocking call of ours on the event loop (issue 22, item 14): whole research runs with blockbuster
watching every thread that runs a loop — the engine alone (both engines, SQLite) and a live server (start,
stream, cancel, resume, report over HTTP) — and every file-system, sleep or blocking-socket call made from our
code on a loop is a failure, named by the first frame of ours (bench/blocking_calls.py). LangGraph's own dev
server refuses such calls (`langgraph dev` without `--allow-blocking`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest

from bench.blocking_calls import recording_blocking_calls
from deepresearch.engine.core import open_engine
from peers import serve_app
from runner import create_app
from tests.conftest import Servers
from tests.sse import iter_sse

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def _listed(found: Counter[str]) -> str:
    return "blocking calls on the event loop:\n" + "\n".join(f"{n} × {where}" for where, n in found.items())


@pytest.mark.parametrize("llm", [False, True], ids=["extractive", "llm"])
async def test_a_whole_research_blocks_no_event_loop(servers: Servers, tmp_path: Path, llm: bool) -> None:
    settings = servers.settings(tmp_path / "fresh", llm=llm)  # folders that do not exist yet: mkdir too
    with recording_blocking_calls() as found:
        async with open_engine(settings) as engine:
            run = await engine.create_run(QUESTION)
            final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert not found, _listed(found)


def test_the_server_blocks_no_event_loop_through_cancel_resume_and_reading(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path / "fresh", stage_delay_seconds=0.2)
    with (
        recording_blocking_calls() as found,
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        assert client.get("/api/session").status_code == 200
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        for event in iter_sse(client, f"/api/runs/{run_id}/events"):
            if event.type == "checkpoint":
                assert client.post(f"/api/runs/{run_id}/cancel").status_code == 202
                break
        events = list(iter_sse(client, f"/api/runs/{run_id}/events"))
        assert events[-1].data["status"] == "cancelled"
        assert client.post(f"/api/runs/{run_id}/resume").status_code == 202
        last = events[-1].data["seq"]
        events = list(iter_sse(client, f"/api/runs/{run_id}/events", last_event_id=last))
        assert events[-1].data["status"] == "completed"
        for path in ("", "/checkpoints", "/artifacts", "/report", "/report?format=html", "/report.docx"):
            assert client.get(f"/api/runs/{run_id}{path}").status_code == 200, path
        assert client.get(f"/api/runs/{run_id}/artifacts/plan.json").status_code == 200
        assert client.get("/research/").status_code == 200
        assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert not found, _listed(found)
