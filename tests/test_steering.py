"""Steering over real HTTP (docs/steering.md): plan review with interrupt()/Command(resume=...), counted
at the scripted search, model and web servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepresearch.contracts import EVENT_MODELS
from runner import create_app
from tests.conftest import Servers
from tests.scripted import serve_app
from tests.sse import iter_sse

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


@pytest.fixture
def api(servers: Servers, tmp_path: Path) -> Iterator[httpx.Client]:
    settings = servers.settings(tmp_path, llm=True, database_url=f"sqlite:///{tmp_path / 'runs.db'}")
    with (
        serve_app(create_app(settings), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30) as client,
    ):
        yield client


def wait_status(client: httpx.Client, run_id: str, statuses: set[str], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] in statuses:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not reach {statuses}")


def start_reviewed(api: httpx.Client) -> dict[str, Any]:
    created = api.post("/api/runs", json={"question": QUESTION, "options": {"review_plan": True}})
    assert created.status_code == 201, created.text
    return wait_status(api, created.json()["run_id"], {"waiting_for_input", "failed", "completed"})


def test_plan_review_approved(api: httpx.Client, servers: Servers) -> None:
    run = start_reviewed(api)
    run_id = run["run_id"]
    assert run["status"] == "waiting_for_input" and run["active_here"] is False
    assert run["lease_owner"] is None  # it holds nothing while it waits
    pending = run["pending_input"]
    assert pending["kind"] == "plan_review" and pending["plan"]["queries"] and pending["since"]
    assert pending["plan"]["outline"][0] == "Summary" and len(pending["plan"]["sub_questions"]) >= 1
    assert servers.search.calls == []  # nothing searched before the person answered
    events = list(iter_sse(api, f"/api/runs/{run_id}/events"))  # the stream closes: nothing runs
    waiting = [e for e in events if e.type == "input_requested"]
    assert len(waiting) == 1 and waiting[0].data["plan"] == pending["plan"]
    assert events[-1].type == "end" and events[-1].data["status"] == "waiting_for_input"
    assert "input_requested" in {m.model_fields["type"].annotation.__args__[0] for m in EVENT_MODELS}  # type: ignore[union-attr]
    assert not [e for e in events if e.type == "checkpoint" and e.data["stage"] != "plan_research"]
    listed = api.get("/api/runs", params={"status": "waiting_for_input"}).json()["runs"]
    assert [r["run_id"] for r in listed] == [run_id] and listed[0]["pending_input"]["waiting_seconds"] >= 0
    assert api.post(f"/api/runs/{run_id}/resume", json={}).status_code == 409  # answer it instead
    plans = servers.llm.calls_by_prompt()["plan/v1"]

    answered = api.post(f"/api/runs/{run_id}/input", json={"action": "approve"})
    assert answered.status_code == 202, answered.text
    assert answered.json()["pending_input"] is None
    done = wait_status(api, run_id, {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans  # the plan is not asked for again
    searched = [q for _, q in servers.search.calls]
    assert searched[: len(pending["plan"]["queries"])] == pending["plan"]["queries"] or set(
        pending["plan"]["queries"]
    ) <= set(searched)
    assert api.post(f"/api/runs/{run_id}/input", json={"action": "approve"}).status_code == 409


def test_plan_review_edited(api: httpx.Client, servers: Servers) -> None:
    run = start_reviewed(api)
    run_id, plan = run["run_id"], run["pending_input"]["plan"]
    bad = [
        ({"action": "edit"}, "plan"),
        ({"action": "edit", "plan": {"sub_questions": ["A?"], "queries": []}}, "queries"),
        ({"action": "edit", "plan": {"sub_questions": ["A?"], "queries": ["x", "X"]}}, "listed twice"),
        ({"action": "edit", "plan": {"sub_questions": [], "queries": ["x"]}}, "sub_questions"),
        ({"action": "approve", "plan": {"sub_questions": ["A?"], "queries": ["x"]}}, "takes no plan"),
        ({"action": "maybe"}, "action"),
    ]
    for body, words in bad:
        answer = api.post(f"/api/runs/{run_id}/input", json=body)
        assert answer.status_code == 422 and words in answer.json()["detail"], (body, answer.text)
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "waiting_for_input"
    # reorder and reword the sub-questions, drop every planned query but one, add one of our own
    sub_questions = [f"{q} (edited)" for q in reversed(plan["sub_questions"])]
    queries = ["sqlite write-ahead log readers writers", plan["queries"][0]]
    edit = {"action": "edit", "plan": {"sub_questions": sub_questions, "queries": queries}}
    assert api.post(f"/api/runs/{run_id}/input", json=edit).status_code == 202
    done = wait_status(api, run_id, {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    first_round = [q for _, q in servers.search.calls][:2]
    assert sorted(first_round) == sorted(queries)
    assert not set(plan["queries"][1:]) & {q for _, q in servers.search.calls}
    stored = api.get(f"/api/runs/{run_id}/artifacts/plan.json").json()
    assert stored["queries"] == queries and stored["sub_questions"] == sub_questions
    # the model screened the edited sub-questions (and only those)
    screened = [
        str(body["messages"]) for body in servers.llm.calls if "Sub-question:" in str(body["messages"])
    ]
    assert screened and all(any(q in text for q in sub_questions) for text in screened)


def test_plan_review_rejected(api: httpx.Client, servers: Servers) -> None:
    run_id = start_reviewed(api)["run_id"]
    reject = {"action": "reject", "reason": "the question is about PostgreSQL, not SQLite"}
    assert api.post(f"/api/runs/{run_id}/input", json=reject).status_code == 202
    done = wait_status(api, run_id, {"completed", "failed", "cancelled"})
    assert done["status"] == "cancelled" and "about PostgreSQL" in done["error"]
    assert servers.search.calls == [] and servers.site.total_hits == 0
    assert done["pending_input"] is None


def test_cancel_while_waiting_stops_waiting(api: httpx.Client, servers: Servers) -> None:
    run_id = start_reviewed(api)["run_id"]
    assert api.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
    run = api.get(f"/api/runs/{run_id}").json()
    assert run["status"] == "cancelled" and run["pending_input"] is None
    assert servers.search.calls == []
