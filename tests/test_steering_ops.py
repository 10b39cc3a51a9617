"""/metrics (parsed with prometheus-client's own text parser) and its access rule, over real HTTP."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from peers import serve_app
from runner import create_app
from tests._security_helpers import _create_tokens, bearer
from tests.api import wait_status
from tests.conftest import Servers
from tests.test_steering import QUESTION


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


class Receiver:
    """A loopback webhook receiver: records every request; answers `fail[path]` 5xx first."""

    def __init__(self, fail: dict[str, int]) -> None:
        self.fail = dict(fail)
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/{path:path}", self.hook, methods=["POST"])])

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        path = request.url.path
        with self._lock:
            self.requests.append((path, dict(request.headers), body))
            failing = self.fail.get(path, 0)
            if failing:
                self.fail[path] = failing - 1
        return Response(status_code=503 if failing else 204)

    def at(self, path: str) -> list[tuple[dict[str, str], dict[str, Any]]]:
        with self._lock:
            return [(h, json.loads(b)) for p, h, b in self.requests if p == path]

    def raw(self, *paths: str) -> list[tuple[dict[str, str], bytes]]:
        with self._lock:
            return [(h, b) for p, h, b in self.requests if p in paths]

    def wait(self, path: str, count: int, timeout: float = 20) -> list[tuple[dict[str, str], dict[str, Any]]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.at(path)) >= count:
                return self.at(path)
            time.sleep(0.02)
        raise AssertionError(f"{path}: {len(self.at(path))} requests, expected {count}")


def verified(secret: str, headers: dict[str, str], raw: bytes) -> bool:
    expected = hmac.new(
        secret.encode(), headers["x-deepresearch-timestamp"].encode() + b"." + raw, hashlib.sha256
    )
    return headers["x-deepresearch-signature"] == f"sha256={expected.hexdigest()}"


def test_webhooks_are_signed_retried_and_bounded(servers: Servers, tmp_path: Path) -> None:
    secret = "webhook-test-secret"
    receiver = Receiver({"/server": 2, "/broken": 100})
    with serve_app(receiver.app) as hook_url:
        host = hook_url.removeprefix("http://")
        settings = servers.settings(
            tmp_path,
            llm=True,
            webhook_url=f"{hook_url}/server",
            webhook_secret=secret,
            webhook_allow_hosts=[host],
            webhook_backoff_seconds=0.05,
            webhook_max_attempts=3,
        )
        with (
            serve_app(create_app(settings), lifespan="on") as url,
            httpx.Client(base_url=url, timeout=30) as api,
        ):
            for bad, words in [
                ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
                ("ftp://example.com/hook", "scheme"),
                ("http://127.0.0.1:9/hook", "127.0.0.1"),
            ]:
                refused = api.post("/api/runs", json={"question": QUESTION, "options": {"webhook_url": bad}})
                assert refused.status_code == 422 and words in refused.json()["detail"], refused.text
            options = {"review_plan": True, "webhook_url": f"{hook_url}/run"}
            run_id = api.post("/api/runs", json={"question": QUESTION, "options": options}).json()["run_id"]
            wait_status(api, run_id, {"waiting_for_input"})
            server_calls = receiver.wait("/server", 3)  # two 503s, then delivered
            run_calls = receiver.wait("/run", 1)
            assert [h["x-deepresearch-attempt"] for h, _ in server_calls] == ["1", "2", "3"]
            assert len({h["x-deepresearch-delivery"] for h, _ in server_calls}) == 1
            for _, payload in [*server_calls, *run_calls]:
                assert payload["event"] == "run.waiting_for_input" and payload["run_id"] == run_id
                assert payload["pending_input"]["kind"] == "plan_review"
            raws = receiver.raw("/server", "/run")
            assert all(verified(secret, h, b) for h, b in raws)
            assert not verified("another-secret", *raws[0])
            api.post(f"/api/runs/{run_id}/input", json={"action": "approve"})
            wait_status(api, run_id, {"completed", "failed"})
            assert receiver.wait("/run", 2)[-1][1]["event"] == "run.completed"
            assert receiver.wait("/server", 4)[-1][1]["event"] == "run.completed"
            # a receiver that never answers 2xx gets exactly max_attempts calls per event, then no more
            other = api.post(
                "/api/runs", json={"question": QUESTION, "options": {"webhook_url": f"{hook_url}/broken"}}
            ).json()["run_id"]
            wait_status(api, other, {"completed", "failed"})
            receiver.wait("/broken", 3)
            time.sleep(0.5)
            assert len(receiver.at("/broken")) == 3


def test_no_webhook_without_a_secret(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    with serve_app(create_app(settings), lifespan="on") as url, httpx.Client(base_url=url, timeout=30) as api:
        refused = api.post(
            "/api/runs", json={"question": QUESTION, "options": {"webhook_url": "https://hooks.example/x"}}
        )
    assert refused.status_code == 422 and "DEEPRESEARCH_WEBHOOK_SECRET" in refused.json()["detail"]
