"""The HTTP runner over real HTTP: lifecycle, SSE contract and replay, cancel/resume, errors."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest

from tests.api import wait_status
from tests.conftest import Servers
from tests.sse import collect_until, iter_sse

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def test_run_lifecycle_and_event_contract(api: httpx.Client, servers: Servers) -> None:
    created = api.post("/api/runs", json={"question": QUESTION, "options": {"queries_per_round": 2}})
    assert created.status_code == 201, created.text
    run = created.json()
    assert (
        run["run_id"]
        and run["thread_id"].endswith(run["run_id"])
        and run["options"]["queries_per_round"] == 2
    )
    events = list(iter_sse(api, f"/api/runs/{run['run_id']}/events"))  # closes after the terminal end
    assert events[-1].type == "end" and events[-1].data["status"] == "completed"
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    for event in events:
        assert {"seq", "run_id", "type", "ts", "stage"} <= set(event.data)
    # per stage: tool_call -> sub-tool pairs -> checkpoint -> tool_result
    stage_events = [
        e
        for e in events
        if e.type in ("tool_call", "tool_result", "checkpoint")
        and e.data.get("parent_call_id") is None
        and e.data.get("indexed") is not False
    ]
    by_stage: dict[str, list[str]] = {}
    for event in stage_events:
        by_stage.setdefault(event.data["stage"], []).append(event.type)
    for stage, kinds in by_stage.items():
        assert kinds[0] == "tool_call" and kinds[-2:] == ["checkpoint", "tool_result"], (stage, kinds)
    results = [e for e in events if e.type == "tool_result" and "langgraph_checkpoint_id" in e.data]
    checkpoints = {e.data["checkpoint_id"] for e in events if e.type == "checkpoint"}
    for result in results:
        assert result.data["ok"] is True and result.data["receipt_key"].startswith("deepresearch:")
        assert result.data["langgraph_checkpoint_id"] in checkpoints and result.data["artifact_path"]
    for sub in (e for e in events if e.type == "tool_result" and "parent_call_id" in e.data):
        assert sub.data["call_id"] in {c.data["call_id"] for c in events if c.type == "tool_call"}

    detail = api.get(f"/api/runs/{run['run_id']}").json()
    assert detail["status"] == "completed" and detail["usage"]["tokens"] > 0
    assert [s["status"] for s in detail["stages"]] == ["done"] * 7
    assert detail["report_path"] == "deepresearch-report.md"
    # the end event names the report as the run detail does: an artifact path, never the server's path
    (end,) = [e.data for e in events if e.type == "end"]
    assert end["report_path"] == detail["report_path"]
    assert api.get(f"/api/runs/{run['run_id']}/artifacts/{end['report_path']}").status_code == 200
    cps = api.get(f"/api/runs/{run['run_id']}/checkpoints").json()["checkpoints"]
    assert [c["stage"] for c in cps] == [
        "plan_research",
        "search_web",
        "fetch_sources",
        "screen_evidence",
        "analyze_findings",
        "critic_review",
        "write_report",
    ]
    ref = cps[0]["framework_ref"]["langgraph"]
    assert ref["thread_id"] == run["thread_id"] and ref["checkpoint_id"] == cps[0]["checkpoint_id"]
    assert all(c["stage"] and c["status"] == "completed" for c in cps)
    receipts = api.get(f"/api/runs/{run['run_id']}/receipts", params={"status": "succeeded"}).json()[
        "receipts"
    ]
    assert {r["receipt_key"] for r in receipts} >= {"deepresearch:plan:v1", "deepresearch:report:v1"}
    artifacts = {a["path"] for a in api.get(f"/api/runs/{run['run_id']}/artifacts").json()["artifacts"]}
    assert {"deepresearch-report.md", "sources.json", "evidence.json", "plan.json"} <= artifacts
    md = api.get(f"/api/runs/{run['run_id']}/report")
    assert md.status_code == 200 and md.text.startswith("# ")
    html = api.get(f"/api/runs/{run['run_id']}/report", params={"format": "html"})
    assert "default-src 'none'" in html.headers["content-security-policy"] and "<script" not in html.text
    assert api.get(f"/api/runs/{run['run_id']}/artifacts/sources.json").json()["sources"]
    for escape in ("../../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "/etc/passwd"):
        assert api.get(f"/api/runs/{run['run_id']}/artifacts/{escape}").status_code == 404
    listed = api.get("/api/runs", params={"status": "completed"}).json()
    assert [r["run_id"] for r in listed["runs"]] == [run["run_id"]]
    assert api.get("/api/runs", params={"status": "running"}).json()["runs"] == []

    assert api.delete(f"/api/runs/{run['run_id']}").status_code == 204
    assert api.get(f"/api/runs/{run['run_id']}").status_code == 404
    assert api.get(f"/api/runs/{run['run_id']}/checkpoints").status_code == 404


@pytest.mark.parametrize("api", [{"stage_delay_seconds": 0.3}], indirect=True)
def test_cancel_after_fetch_then_resume_repeats_no_call(api: httpx.Client, servers: Servers) -> None:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    url = f"/api/runs/{run_id}/events"
    seen = collect_until(api, url, lambda e: e.type == "checkpoint" and e.data["stage"] == "fetch_sources")
    assert api.post(f"/api/runs/{run_id}/resume", json={}).status_code == 409  # still active: cancel first
    cancel = api.post(f"/api/runs/{run_id}/cancel", json={})
    assert cancel.status_code == 202
    assert api.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202  # idempotent
    rest = collect_until(api, url, lambda e: e.type == "end", last_event_id=seen[-1].id)
    assert rest[-1].data["status"] == "cancelled"
    wait_status(api, run_id, {"cancelled"})
    searches = len(servers.search.calls)
    hits = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
    plans = servers.llm.calls_by_prompt()["plan/v1"]

    cps = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    assert [c["stage"] for c in cps][:3] == ["plan_research", "search_web", "fetch_sources"]
    assert all(c["resumable"] for c in cps)
    latest = cps[-1]
    preview = api.get(f"/api/runs/{run_id}/checkpoints/{latest['checkpoint_id']}/preview").json()
    assert preview["skipped_stages"][:3] == ["plan_research", "search_web", "fetch_sources"]
    assert preview["stages_to_run"][0] == cps[-1]["next"][0] or preview["stages_to_run"]
    assert preview["fork"] is False and preview["duplicate_risk"]["level"] == "none"

    resumed = api.post(f"/api/runs/{run_id}/resume", json={})
    assert resumed.status_code == 202 and resumed.json()["run_id"] == run_id
    after = collect_until(api, url, lambda e: e.type == "end", last_event_id=rest[-1].id)
    assert after[-1].data["status"] == "completed"
    started = [e.data["stage"] for e in after if e.type == "tool_call" and "title" in e.data]
    assert not {"plan_research", "search_web", "fetch_sources"} & set(started)
    assert len(servers.search.calls) == searches
    assert Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")}) == hits
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans
    assert len(api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]) > len(cps)


def test_sse_replay_from_any_last_event_id(api: httpx.Client) -> None:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    full = list(iter_sse(api, f"/api/runs/{run_id}/events"))
    n = len(full)
    for k in (0, 1, n // 3, n // 2, n - 1, n):
        replay = list(iter_sse(api, f"/api/runs/{run_id}/events", last_event_id=k))
        assert [e.id for e in replay] == list(range(k + 1, n + 1))
        assert [e.data for e in replay] == [e.data for e in full[k:]]
    by_query = list(iter_sse(api, f"/api/runs/{run_id}/events?after={n - 2}"))
    assert [e.id for e in by_query] == [n - 1, n]


def test_client_disconnect_does_not_cancel(api: httpx.Client) -> None:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    collect_until(api, f"/api/runs/{run_id}/events", lambda e: e.id >= 2)
    assert wait_status(api, run_id, {"completed", "failed", "cancelled"})["status"] == "completed"


def test_fork_from_older_checkpoint_over_http(api: httpx.Client, servers: Servers) -> None:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    list(iter_sse(api, f"/api/runs/{run_id}/events"))
    assert api.post(f"/api/runs/{run_id}/resume", json={}).status_code == 409  # completed, no checkpoint
    cps = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    screen = next(c for c in cps if c["stage"] == "screen_evidence")
    preview = api.get(f"/api/runs/{run_id}/checkpoints/{screen['checkpoint_id']}/preview").json()
    assert preview["fork"] is True and preview["receipts_reused_count"] > 0
    calls = len(servers.llm.calls)
    assert (
        api.post(f"/api/runs/{run_id}/resume", json={"checkpoint_id": screen["checkpoint_id"]}).status_code
        == 202
    )
    wait_status(api, run_id, {"completed", "failed"})
    assert len(servers.llm.calls) == calls
    after = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    assert len(after) > len(cps)
    forks = [c for c in after if c["fork_of"]]
    assert len(forks) == 1 and forks[0]["fork_of"] == screen["checkpoint_id"]
    assert forks[0]["stage"] == "analyze_findings"


def test_client_errors_are_4xx_with_messages(api: httpx.Client) -> None:
    assert api.get("/api/runs/nope").json() == {"detail": "Run not found"}
    for method, path in [
        ("get", "/api/runs/nope/events"),
        ("post", "/api/runs/nope/cancel"),
        ("post", "/api/runs/nope/resume"),
        ("get", "/api/runs/nope/checkpoints"),
        ("get", "/api/runs/nope/receipts"),
        ("get", "/api/runs/nope/report"),
        ("delete", "/api/runs/nope"),
    ]:
        body = {"json": {}} if method == "post" else {}  # a POST without a JSON body is refused first (403)
        assert getattr(api, method)(path, **body).status_code == 404, path
    bad_bodies: list[Any] = [
        {"question": ""},
        {"question": "   "},
        {"question": "x" * 5000},
        {},
        {"question": "q", "options": {"max_research_loops": 0}},
        {"question": "q", "options": {"reviewers": ["nobody"]}},
        {"question": "q", "options": {"surprise": 1}},
        {"question": "q", "options": {"corpus_dir": "/no/such/folder"}},
    ]
    for body in bad_bodies:
        response = api.post("/api/runs", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["detail"]
    malformed = api.post("/api/runs", content=b"{not json", headers={"content-type": "application/json"})
    assert malformed.status_code == 422
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    list(iter_sse(api, f"/api/runs/{run_id}/events"))
    assert api.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "abc"}).status_code == 422
    other = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    list(iter_sse(api, f"/api/runs/{other}/events"))
    foreign = api.get(f"/api/runs/{other}/checkpoints").json()["checkpoints"][0]["checkpoint_id"]
    response = api.post(f"/api/runs/{run_id}/resume", json={"checkpoint_id": foreign})
    assert response.status_code == 404 and "not a checkpoint of run" in response.json()["detail"]
    assert api.get("/api/runs", params={"limit": 0}).status_code == 422
    assert api.get("/healthz").json() == {"status": "ok"}
    assert api.get("/readyz").json()["status"] == "ready"


def test_head_answers_like_get_without_a_body(api: httpx.Client) -> None:
    for path in ("/healthz", "/readyz", "/api/runs", "/research/config.json", "/docs"):
        got = api.get(path)
        head = api.head(path)
        assert (head.status_code, head.content) == (got.status_code, b""), path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers.get("content-length") == got.headers.get("content-length"), path
    assert api.head("/api/runs/nope").status_code == 404
    assert api.post("/healthz").status_code == 405  # only HEAD borrows GET
