"""/metrics (parsed with prometheus-client's own text parser) and its access rule, over real HTTP."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from runner import create_app
from tests.conftest import Servers
from tests.scripted import serve_app
from tests.test_security import _create_tokens, bearer
from tests.test_steering import QUESTION, wait_status


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: dict[Any, float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_parse_and_count_runs_calls_and_waits(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True, llm_input_cost_per_mtok=1.0)
    with serve_app(create_app(settings), lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as api:
        run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_status(api, run_id, {"completed", "failed"})
        checkpoints = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
        fork = api.post(f"/api/runs/{run_id}/fork", json={"checkpoint_id": checkpoints[1]["checkpoint_id"]})
        wait_status(api, fork.json()["run_id"], {"completed", "failed"})
        waiting = api.post("/api/runs", json={"question": QUESTION, "options": {"review_plan": True}})
        wait_status(api, waiting.json()["run_id"], {"waiting_for_input"})
        time.sleep(0.3)
        response = api.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)
    assert value(found, "deepresearch_runs", status="completed") == 2
    assert value(found, "deepresearch_runs", status="waiting_for_input") == 1
    assert value(found, "deepresearch_runs", status="running") == 0
    assert value(found, "deepresearch_oldest_waiting_run_age_seconds") >= 0.3
    made_search = value(found, "deepresearch_tool_calls_total", tool="web.search", reused="false")
    assert made_search == len(servers.search.calls) > 0
    assert value(found, "deepresearch_tool_calls_total", tool="llm.structured", reused="true") > 0
    llm_made = value(found, "deepresearch_tool_calls_total", tool="llm.structured", reused="false") + value(
        found, "deepresearch_tool_calls_total", tool="llm.complete", reused="false"
    )
    assert llm_made == len(servers.llm.calls)
    assert (
        value(found, "deepresearch_llm_tokens_total") > 0 and value(found, "deepresearch_cost_usd_total") > 0
    )
    assert value(found, "deepresearch_llm_tokens_saved_total") > 0
    assert value(found, "deepresearch_stage_duration_seconds_count", stage="plan_research") == 2  # run, wait
    assert value(found, "deepresearch_sse_clients") == 0


def test_metrics_need_an_admin_token_where_tokens_are_required(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    admin, member = asyncio.run(_create_tokens(settings, ("ops", True), ("member", False)))
    app = create_app(settings, bind_host="0.0.0.0")
    with serve_app(app, lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/metrics").status_code == 401
        refused = client.get("/metrics", headers=bearer(member))
        assert refused.status_code == 403 and "admin token" in refused.json()["detail"]
        assert client.get("/metrics", headers=bearer(admin)).status_code == 200
