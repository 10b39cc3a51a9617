"""Steering over real HTTP (docs/steering.md): plan review with interrupt()/Command(resume=...), counted
at the scripted search, model and web servers."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import httpx

from deepresearch.service.contracts import EVENT_MODELS
from tests.api import wait_status
from tests.conftest import POLL_SECONDS, Servers
from tests.sse import iter_sse

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def start_reviewed(api: httpx.Client) -> dict[str, Any]:
    created = api.post("/api/runs", json={"question": QUESTION, "options": {"review_plan": True}})
    assert created.status_code == 201, created.text
    return wait_status(api, created.json()["run_id"], {"waiting_for_input", "failed", "completed"})


def wait_released(api: httpx.Client, run_id: str, timeout: float = 30) -> dict[str, Any]:
    """The run once its execution has ended here and returned its lease (AssertionError after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}").json()
        if run["lease_owner"] is None and run["active_here"] is False:
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"run {run_id} still holds its lease after {timeout}s")


def test_plan_review_approved(api: httpx.Client, servers: Servers) -> None:
    run_id = start_reviewed(api)["run_id"]
    # the status flips when the engine concludes; the execution then hands its lease back (its finally):
    # once that is done it holds nothing while it waits
    run = wait_released(api, run_id)
    assert run["status"] == "waiting_for_input" and run["active_here"] is False
    assert run["lease_owner"] is None
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


def test_the_plan_read_is_the_plan_sent_back(api: httpx.Client, servers: Servers) -> None:
    """Issue 22 item 11: pending_input.plan, edited and sent back whole (rationale and outline included),
    was refused with 422 "Extra inputs are not permitted"."""
    run = start_reviewed(api)
    run_id, plan = run["run_id"], run["pending_input"]["plan"]
    assert {"rationale", "outline"} <= set(plan)
    edited = {**plan, "queries": [*plan["queries"], "sqlite write-ahead log readers writers"]}
    answer = api.post(f"/api/runs/{run_id}/input", json={"action": "edit", "plan": edited})
    assert answer.status_code == 202, answer.text
    done = wait_status(api, run_id, {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    stored = api.get(f"/api/runs/{run_id}/artifacts/plan.json").json()
    assert stored["queries"] == edited["queries"] and stored["sub_questions"] == plan["sub_questions"]
    assert stored["rationale"].startswith("Edited by a person at plan review.")
    assert plan["rationale"] in stored["rationale"]  # the planner's rationale, sent back unchanged, is kept
    searched = {q for _, q in servers.search.calls}
    assert "sqlite write-ahead log readers writers" in searched

    # a changed rationale is the plan's; the outline is read only (it follows the sub-questions)
    run = start_reviewed(api)
    run_id, plan = run["run_id"], run["pending_input"]["plan"]
    changed = {**plan, "rationale": "Our own reason.", "outline": ["Anything"]}
    assert api.post(f"/api/runs/{run_id}/input", json={"action": "edit", "plan": changed}).status_code == 202
    wait_status(api, run_id, {"completed", "failed", "cancelled"})
    stored = api.get(f"/api/runs/{run_id}/artifacts/plan.json").json()
    assert stored["rationale"] == "Edited by a person at plan review. Our own reason."
    too_long = {**plan, "outline": ["x"] * 21}
    run_id = start_reviewed(api)["run_id"]
    refused = api.post(f"/api/runs/{run_id}/input", json={"action": "edit", "plan": too_long})
    assert refused.status_code == 422 and "outline" in refused.text


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


def repeated_calls(servers: Servers) -> dict[str, list[Any]]:
    """Calls a scripted peer answered more than once with exactly the same request."""
    llm = Counter(json.dumps(body.get("messages"), sort_keys=True) for body in servers.llm.calls)
    return {
        "llm": [m[:200] for m, n in llm.items() if n > 1],
        "search": [q for q, n in Counter(servers.search.calls).items() if n > 1],
        "fetch": [p for p, n in servers.site.hits.items() if n > 1 and p.startswith("/articles/")],
    }


def finished_run(api: httpx.Client) -> str:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    assert wait_status(api, run_id, {"completed", "failed"})["status"] == "completed"
    return run_id


def test_fork_with_one_more_query_pays_only_for_what_changed(api: httpx.Client, servers: Servers) -> None:
    run_id = finished_run(api)
    before = {
        "run": api.get(f"/api/runs/{run_id}").json(),
        "checkpoints": api.get(f"/api/runs/{run_id}/checkpoints").json(),
        "events": len(list(iter_sse(api, f"/api/runs/{run_id}/events"))),
        "report": api.get(f"/api/runs/{run_id}/report").text,
        "receipts": api.get(f"/api/runs/{run_id}/receipts").json(),
    }
    screen = next(c for c in before["checkpoints"]["checkpoints"] if c["stage"] == "screen_evidence")
    searched = [q for _, q in servers.search.calls]
    extra = "heat pumps cold climate efficiency"
    body = {"checkpoint_id": screen["checkpoint_id"], "patch": {"add_queries": [extra]}}
    bad = [
        ({"checkpoint_id": "nope", "patch": {}}, 404),
        ({**body, "patch": {"add_queries": [searched[0]]}}, 422),
        ({**body, "patch": {"drop_sources": ["https://elsewhere.example/x"]}}, 422),
        ({**body, "patch": {"options": {"reviewers": ["nobody"]}}}, 422),
    ]
    for wrong, status in bad:
        answer = api.post(f"/api/runs/{run_id}/fork", json=wrong)
        assert answer.status_code == status, (wrong, answer.text)
    preview = api.post(f"/api/runs/{run_id}/fork/preview", json=body)
    assert preview.status_code == 200, preview.text
    assert preview.json()["kept_through"] == "plan_research" and preview.json()["receipts_reusable"] > 0
    assert preview.json()["stages_to_run"][0] == "search_web"
    assert len(api.get("/api/runs").json()["runs"]) == 1  # a preview creates nothing

    forked = api.post(f"/api/runs/{run_id}/fork", json=body)
    assert forked.status_code == 201, forked.text
    fork = forked.json()
    assert fork["run_id"] != run_id
    assert fork["forked_from"] == {"run_id": run_id, "checkpoint_id": screen["checkpoint_id"]}
    done = wait_status(api, fork["run_id"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    assert [q for _, q in servers.search.calls] == [*searched, extra]  # only the new query is searched
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    # the new source changes what every later step reads: each of those is a new call, none a repeat
    assert done["usage"]["calls"] > 0
    sources = api.get(f"/api/runs/{fork['run_id']}/artifacts/sources.json").json()["sources"]
    assert any("heat-pumps" in s["url"] for s in sources)
    # the original is untouched: record, checkpoints, log, report, receipts
    assert api.get(f"/api/runs/{run_id}").json() == before["run"]
    assert api.get(f"/api/runs/{run_id}/checkpoints").json() == before["checkpoints"]
    assert len(list(iter_sse(api, f"/api/runs/{run_id}/events"))) == before["events"]
    assert api.get(f"/api/runs/{run_id}/report").text == before["report"]
    assert api.get(f"/api/runs/{run_id}/receipts").json() == before["receipts"]
    assert "heat" not in before["report"].lower()

    # a second fork, from fetch_sources, with one reviewer fewer: screening and the two reviewers left read
    # exactly what they read before (answered from receipts); the critic reads other findings (a new call)
    fetched = next(c for c in before["checkpoints"]["checkpoints"] if c["stage"] == "fetch_sources")
    calls = {
        "search": len(servers.search.calls),
        "llm": len(servers.llm.calls),
        "site": servers.site.total_hits,
    }
    reviewers = {"reviewers": ["fact_reviewer", "risk_reviewer"]}
    body = {"checkpoint_id": fetched["checkpoint_id"], "patch": {"options": reviewers}}
    second = api.post(f"/api/runs/{run_id}/fork", json=body).json()
    done = wait_status(api, second["run_id"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed" and done["options"]["reviewers"] == reviewers["reviewers"]
    assert len(servers.search.calls) == calls["search"] and servers.site.total_hits == calls["site"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    new_llm = len(servers.llm.calls) - calls["llm"]
    assert done["usage"]["reused_calls"] >= 4 and new_llm > 0  # (usage.calls counts file writes too)

    # a third, from the earliest checkpoint (plan_research) with one more query: every planned query is
    # searched again by the graph, and answered from receipts - the search server sees only the new one
    plan_cp = before["checkpoints"]["checkpoints"][0]
    assert plan_cp["stage"] == "plan_research"
    searched = [q for _, q in servers.search.calls]
    body = {"checkpoint_id": plan_cp["checkpoint_id"], "patch": {"add_queries": ["sqlite wal busy readers"]}}
    third = api.post(f"/api/runs/{run_id}/fork", json=body).json()
    assert third["preview"]["kept_through"] == "plan_research"
    done = wait_status(api, third["run_id"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    assert [q for _, q in servers.search.calls] == [*searched, "sqlite wal busy readers"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    assert done["usage"]["reused_calls"] >= len(searched)


def test_follow_up_reads_none_of_the_old_sources_again(api: httpx.Client, servers: Servers) -> None:
    run_id = finished_run(api)
    original = api.get(f"/api/runs/{run_id}/artifacts/sources.json").json()["sources"]
    searched = [q for _, q in servers.search.calls]
    hits = dict(servers.site.hits)
    assert api.post(f"/api/runs/{run_id}/follow-up", json={"question": "  "}).status_code == 422
    asked = api.post(
        f"/api/runs/{run_id}/follow-up",
        json={"question": "How do SQLite checkpoints copy write-ahead log frames back into the database?"},
    )
    assert asked.status_code == 201, asked.text
    follow = asked.json()
    assert follow["follow_up_of"] == run_id and follow["run_id"] != run_id
    done = wait_status(api, follow["run_id"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
    sources = api.get(f"/api/runs/{follow['run_id']}/artifacts/sources.json").json()["sources"]
    assert {s["url"] for s in original} <= {s["url"] for s in sources}
    # none of the original's pages was fetched again; searches are only queries it never ran
    for path, count in servers.site.hits.items():
        if path.startswith("/articles/") and path in hits:
            assert count == hits[path], path
    new_queries = [q for _, q in servers.search.calls][len(searched) :]
    assert not set(new_queries) & set(searched)
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    plan = api.get(f"/api/runs/{follow['run_id']}/artifacts/plan.json").json()
    # the follow-up's own question is answered by a page the original read: not searched again
    assert plan["queries"][0] not in new_queries and len(new_queries) < len(plan["queries"])
    events = list(iter_sse(api, f"/api/runs/{follow['run_id']}/events"))
    assert any("covered by the" in e.data.get("text", "") for e in events if e.type == "message")
    assert api.get(f"/api/runs/{run_id}").json()["follow_up_of"] is None
    running = api.post("/api/runs", json={"question": QUESTION, "options": {"review_plan": True}}).json()
    wait_status(api, running["run_id"], {"waiting_for_input"})
    refused = api.post(f"/api/runs/{running['run_id']}/follow-up", json={"question": "Why?"})
    assert refused.status_code == 409 and "completed" in refused.json()["detail"]


def test_a_follow_up_does_not_inherit_plan_review(api: httpx.Client) -> None:
    """Asked from a report, a follow-up of a run that waited for its plan review used to wait too."""
    reviewed = start_reviewed(api)
    run_id = reviewed["run_id"]
    assert api.post(f"/api/runs/{run_id}/input", json={"action": "approve"}).status_code == 202
    assert wait_status(api, run_id, {"completed", "failed"})["status"] == "completed"
    asked = api.post(f"/api/runs/{run_id}/follow-up", json={"question": "What limits SQLite WAL readers?"})
    assert asked.status_code == 201, asked.text
    assert asked.json()["options"]["review_plan"] is False
    done = wait_status(api, asked.json()["run_id"], {"completed", "failed", "waiting_for_input"})
    assert done["status"] == "completed", done["status"]
    # asked for, it still waits
    again = api.post(
        f"/api/runs/{run_id}/follow-up",
        json={"question": "How large may the WAL grow?", "options": {"review_plan": True}},
    )
    assert again.status_code == 201 and again.json()["options"]["review_plan"] is True
    waiting = wait_status(api, again.json()["run_id"], {"completed", "failed", "waiting_for_input"})
    assert waiting["status"] == "waiting_for_input"


def test_a_follow_up_keeps_its_texts_when_the_original_is_deleted(api: httpx.Client) -> None:
    """Texts are stored once and shared by hash: a follow-up refers to the original's, so deleting the
    original keeps them (its pages can still be read, without fetching them again)."""
    run_id = finished_run(api)
    urls = [s["url"] for s in api.get(f"/api/runs/{run_id}/artifacts/sources.json").json()["sources"]]
    asked = api.post(f"/api/runs/{run_id}/follow-up", json={"question": "What limits SQLite WAL readers?"})
    follow = asked.json()["run_id"]
    assert wait_status(api, follow, {"completed", "failed"})["status"] == "completed"
    assert api.delete(f"/api/runs/{run_id}").status_code == 204
    for url in urls:
        text = api.get(f"/api/runs/{follow}/source-text", params={"url": url})
        assert text.status_code == 200 and text.json()["chars"] > 0, text.text
