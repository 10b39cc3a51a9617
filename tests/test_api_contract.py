"""The HTTP contract: the acceptance flow a client writes from the README, typed responses, one error shape,
every status documented, and the bad input that used to reach a 500."""

from __future__ import annotations

import asyncio
import logging
import re
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from deepresearch.engine.core import open_engine
from deepresearch.service.contracts import EVENT_MODELS, RunEvent
from peers import serve_app
from runner import create_app
from stages import STAGE_KEYS
from tests.conftest import Servers
from tests.sse import iter_sse

QUESTION = "How do durable workflow checkpoints keep long-running jobs from repeating work?"
EVENTS = TypeAdapter(RunEvent)


@pytest.fixture
def api(
    servers: Servers, tmp_path: Path, database_url: str, request: pytest.FixtureRequest
) -> Iterator[httpx.Client]:
    overrides: dict[str, Any] = {"stage_delay_seconds": 0.3, **getattr(request, "param", {})}
    settings = servers.settings(tmp_path, llm=True, database_url=database_url, **overrides)
    with (
        serve_app(create_app(settings), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30) as client,
    ):
        yield client


def test_acceptance_flow_two_checkpoints_cancel_preview_resume_report(
    api: httpx.Client, servers: Servers
) -> None:
    """Exactly what the README tells a client to do, counting EVERY `checkpoint` event it receives."""
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    checkpoint_events: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    cancelled = False
    for event in iter_sse(api, f"/api/runs/{run_id}/events"):
        EVENTS.validate_python(event.data)  # every event matches its documented model
        seen.append(event.data)
        if event.type == "checkpoint":
            checkpoint_events.append(event.data)
            if len(checkpoint_events) == 2 and not cancelled:
                # body-less, as curl sends it (the README's flow): only browsers need to say where they are
                assert api.post(f"/api/runs/{run_id}/cancel").status_code == 202
                cancelled = True
        if event.type == "end":
            break
    assert cancelled and seen[-1]["status"] == "cancelled"
    # the two events the client counted were business safety points, and nothing else was a `checkpoint`
    assert [e["stage"] for e in checkpoint_events[:2]] == list(STAGE_KEYS[:2])
    assert all(e["stage"] in STAGE_KEYS for e in checkpoint_events)
    assert any(e["type"] == "graph_checkpoint" for e in seen), "LangGraph's own checkpoints keep a type"

    listed = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    assert [c["checkpoint_id"] for c in listed] == [e["checkpoint_id"] for e in checkpoint_events]
    latest = listed[-1]
    preview = api.get(f"/api/runs/{run_id}/checkpoints/{latest['checkpoint_id']}/preview")
    assert preview.status_code == 200, preview.text
    assert preview.json()["fork"] is False and preview.json()["skipped_stages"][-1] == latest["stage"]

    searches = len(servers.search.calls)
    plans = servers.llm.calls_by_prompt()["plan/v1"]
    resumed = api.post(f"/api/runs/{run_id}/resume")
    assert resumed.status_code == 202 and resumed.json()["resumed_from"] == "latest"
    after = list(iter_sse(api, f"/api/runs/{run_id}/events", last_event_id=seen[-1]["seq"]))
    assert after[-1].type == "end" and after[-1].data["status"] == "completed"
    restarted = {e.data["stage"] for e in after if e.type == "tool_call" and "title" in e.data}
    assert not restarted & set(preview.json()["skipped_stages"]), "a completed stage ran again"
    assert servers.llm.calls_by_prompt()["plan/v1"] == plans
    if latest["stage"] == "search_web":
        assert len(servers.search.calls) == searches, "a completed search was repeated"
    report = api.get(f"/api/runs/{run_id}/report")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/markdown")
    assert "# " in report.text


def test_the_readmes_event_list_is_every_event_type() -> None:
    """The README's event contract names every type a stream can carry (it left out input_requested)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
    listed = re.search(r"\*\*Event contract\.\*\* Types: (.*?)\(models", readme, re.S)
    assert listed, "the README's event contract moved"
    types = [m.model_fields["type"].annotation.__args__[0] for m in EVENT_MODELS]  # type: ignore[union-attr]
    assert re.findall(r"`(\w+)`", listed.group(1)) == types


def test_openapi_declares_every_response(api: httpx.Client) -> None:
    spec = api.get("/openapi.json").json()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            success = [code for code in responses if code.startswith("2")]
            assert success, (method, path)
            for code, response in responses.items():
                content = response.get("content", {})
                if code.startswith(("4", "5")):
                    assert content == {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorPublic"}}
                    }, (method, path, code)
                elif code != "204" and "application/json" in content:
                    schema = content["application/json"]["schema"]
                    assert "$ref" in schema, f"{method} {path} {code} has no response model: {schema}"
            if path.startswith("/api/runs/{run_id}"):
                assert "404" in responses, (method, path)
    events = spec["paths"]["/api/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]
    assert list(events) == ["text/event-stream"]
    kinds = {ref["$ref"].rsplit("/", 1)[-1] for ref in spec["components"]["schemas"]["RunEvent"]["oneOf"]}
    assert {"CheckpointEvent", "GraphCheckpointEvent", "EndEvent", "ToolCallEvent"} <= kinds
    report = spec["paths"]["/api/runs/{run_id}/report"]["get"]["responses"]["200"]["content"]
    assert set(report) == {"text/markdown", "text/html"}
    resume = spec["paths"]["/api/runs/{run_id}/resume"]["post"]["responses"]
    assert {"202", "404", "409", "422"} <= set(resume)
    question = spec["components"]["schemas"]["RunCreate"]["properties"]["question"]
    assert question["maxLength"] == 2000  # the server's configured limit, not a copy


def test_docs_work_offline(api: httpx.Client) -> None:
    page = api.get("/docs")
    assert page.status_code == 200
    assets = [part.split('"')[0] for part in page.text.split('src="')[1:]]
    assets += [part.split('"')[0] for part in page.text.split('href="')[1:] if ".css" in part]
    assert assets and all(a.startswith("/") for a in assets), assets  # no CDN
    for asset in assets:
        assert api.get(asset).status_code == 200, asset


def _raw_post(base: str, path: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{base}{path}", content=body, headers={"content-type": "application/json", **headers})


def assert_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text[:300])
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"], body
    assert set(body) <= {"detail", "errors"}, body
    return body


def test_bad_input_is_a_4xx_with_one_error_shape(api: httpx.Client) -> None:
    base = str(api.base_url).rstrip("/")
    assert_error(api.get("/api/runs", params={"offset": "9223372036854775808"}), 422)
    nan = _raw_post(base, "/api/runs", b'{"question":"abc","options":{"max_research_loops":NaN}}', {})
    assert_error(nan, 422)
    infinite = b'{"question":"abc","options":{"budget":{"deadline_seconds":Infinity}}}'
    assert_error(_raw_post(base, "/api/runs", infinite, {}), 422)
    surrogate = _raw_post(base, "/api/runs", b'{"question":"\\ud800 x"}', {})
    assert assert_error(surrogate, 422)["detail"].startswith("question:")
    unknown_key = _raw_post(base, "/api/runs", b'{"question":"q","\\udc00":1}', {})
    assert_error(unknown_key, 422)
    for question in ("\u200b\u200b\u200b", "\x00\x01\x02", "\u2028 \t", "abc\x00def"):
        assert_error(api.post("/api/runs", json={"question": question}), 422)
    # the service's rule and words, as the CLI prints them, with the field named
    blank = assert_error(api.post("/api/runs", json={"question": "  \u200b "}), 422)
    assert blank["detail"] == "question: has no visible characters"
    assert blank["errors"] == [
        {"loc": ["body", "question"], "msg": "has no visible characters", "type": "value_error"}
    ]
    missing = assert_error(
        api.post("/api/runs", json={"question": "q", "options": {"corpus_dir": "/no/such"}}), 422
    )
    assert missing["errors"][0]["loc"] == ["body", "options", "corpus_dir"]
    assert "Value error" not in missing["detail"] + blank["detail"]
    # punctuation alone is no question: refused before a run exists, not failed at its first search
    mark = assert_error(api.post("/api/runs", json={"question": " ?!… "}), 422)
    assert mark["detail"].startswith("question: has no words"), mark
    too_long = assert_error(api.post("/api/runs", json={"question": "x" * 2001}), 422)
    assert too_long["errors"][0]["loc"] == ["body", "question"]
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    for last_event_id in ("²", "9" * 5000, "-1", "1.5"):
        # latin-1: the bytes a browser would send for "²", which str.isdigit() accepts and int() does not
        headers = {"Last-Event-ID": last_event_id.encode("latin-1")}
        assert_error(api.get(f"/api/runs/{run_id}/events", headers=headers), 422)
    assert_error(api.get("/api/runs/%00nope"), 404)  # a NUL (PostgreSQL TEXT cannot hold it) is not found
    assert api.get(f"/api/runs/{run_id}/receipts", params={"receipt_key": "a\x00b"}).status_code == 200
    repeated = assert_error(api.get("/api/runs?limit=1&limit=2"), 422)
    assert repeated["errors"][0]["loc"] == ["query", "limit"]
    # a path served by several routes allows all their methods
    assert api.request("OPTIONS", "/api/runs").headers["allow"] == "GET, POST"
    assert api.request("PUT", f"/api/runs/{run_id}").headers["allow"] == "DELETE, GET, PATCH"
    # a concrete path is not also the templated one beside it (/assistants/{assistant_id} with id "search")
    assert api.request("OPTIONS", "/assistants/search").headers["allow"] == "POST"
    assert api.request("PUT", "/assistants/deepresearch").headers["allow"] == "GET"
    assert_error(_raw_post(base, "/api/runs", b"\xff\xfe{", {}), 400)  # not UTF-8: documented 400
    assert_error(api.post(f"/api/runs/{run_id}/resume", json={"checkpoint_id": "x"}), 409)
    assert_error(api.delete(f"/api/runs/{run_id}"), 409)


def test_an_oversized_body_is_refused_before_parsing(api: httpx.Client) -> None:
    base = str(api.base_url).rstrip("/")
    big = b'{"question":"' + b"x" * 5_000_000 + b'"}'
    started = time.monotonic()
    assert_error(_raw_post(base, "/api/runs", big, {}), 413)
    assert time.monotonic() - started < 5
    # a chunked body (no Content-Length) is cut off as soon as it passes the limit
    chunks = (b"x" * 65536 for _ in range(200))
    streamed = httpx.post(f"{base}/api/runs", content=chunks, headers={"content-type": "application/json"})
    assert_error(streamed, 413)
    assert api.get("/healthz").status_code == 200  # the server is fine afterwards


def test_a_refused_body_is_read_to_its_end_so_the_413_arrives(api: httpx.Client) -> None:
    """The server closes the connection after a 413; closing with the refused body unread makes the kernel
    reset it, and the client then loses the 413 (seen once in a full run). Sent whole before reading the
    answer, a body the server never reads makes this client's read fail with a reset every time."""
    host, port = api.base_url.host, api.base_url.port or 80
    body = b'{"question":"' + b"x" * 5_000_000 + b'"}'
    head = (
        f"POST /api/runs HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(head + body)
        time.sleep(0.3)  # the server has answered and closed by now
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 413"), received[:200]
    assert b"request body larger than" in received


async def test_an_unexpected_failure_is_logged_with_its_traceback(
    servers: Servers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("the workspace cannot be created here", encoding="utf-8")
    settings = servers.settings(tmp_path, llm=True, workspace_dir=blocker / "workspace")
    with caplog.at_level(logging.ERROR):
        async with open_engine(settings) as engine:
            run = await engine.create_run(QUESTION)
            final = await engine.execute(run.run_id)
    assert final.status == "failed" and final.error
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert errors, [r.getMessage() for r in caplog.records]


async def _open_and_drop(base_url: str, run_id: str, clients: int) -> int:
    """Open `clients` SSE streams on the run, wait until each has its first event, then drop them all."""
    opened = 0
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=0)
    ready, release = asyncio.Event(), asyncio.Event()

    async def listen(client: httpx.AsyncClient) -> None:
        nonlocal opened
        async with client.stream("GET", f"/api/runs/{run_id}/events") as response:
            assert response.status_code == 200, await response.aread()
            async for line in response.aiter_lines():
                if line.startswith("id:"):
                    break
            opened += 1
            if opened == clients:
                ready.set()
            await release.wait()  # the connection stays open until all are dropped at once

    async with (
        httpx.AsyncClient(base_url=base_url, timeout=30, limits=limits) as client,
        asyncio.TaskGroup() as group,
    ):
        for _ in range(clients):
            group.create_task(listen(client))
        await asyncio.wait_for(ready.wait(), 60)
        release.set()
    return opened


@pytest.mark.long
@pytest.mark.parametrize("api", [{"stage_delay_seconds": 1.0, "max_streams_per_client": 2000}], indirect=True)
def test_a_thousand_dropped_sse_clients_leave_the_run_controllable(api: httpx.Client) -> None:
    """Per-subscriber wake-ups: clients that vanish together cannot leave a lock held that stalls the run."""
    # both ends of every connection live in this process: room for 2 x 1000 sockets (CI's soft limit is 1024)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    clients = min(1000, (wanted - 300) // 2)
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    base = str(api.base_url).rstrip("/")
    assert asyncio.run(_open_and_drop(base, run_id, clients)) == clients
    assert api.post(f"/api/runs/{run_id}/cancel", json={}).status_code == 202
    # A stalled notify() kept cancel hanging for good: the stream's deadline fails that. The cancel lands in
    # 0.1-1 s on a quiet machine, but both ends of the 1000 connections live in this process, and with the
    # 2 cores loaded ~3.5 times over it once took 31 s: a tighter bound than the deadline was flaky.
    events = list(iter_sse(api, f"/api/runs/{run_id}/events", timeout=60))
    assert events[-1].type == "end" and events[-1].data["status"] == "cancelled"
    assert [e.data["status"] for e in events if e.type == "run_status"][-1] == "cancelled"
    # and the run resumes to the end with no listener at all
    assert api.post(f"/api/runs/{run_id}/resume", json={}).status_code == 202
    events = list(iter_sse(api, f"/api/runs/{run_id}/events", last_event_id=events[-1].id, timeout=90))
    assert events[-1].data["status"] == "completed"


@pytest.mark.parametrize("api", [{"stage_delay_seconds": 0.5}], indirect=True)
def test_two_resumes_at_once_start_one_execution(api: httpx.Client, servers: Servers) -> None:
    """A double-clicked resume: one 202, one 409, one execution (no stage or call runs twice)."""
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    for event in iter_sse(api, f"/api/runs/{run_id}/events"):
        if event.type == "checkpoint":
            api.post(f"/api/runs/{run_id}/cancel", json={})
        if event.type == "end":
            last = event.id
            break
    base = str(api.base_url).rstrip("/")

    async def both() -> list[int]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            answers = await asyncio.gather(
                *(client.post(f"/api/runs/{run_id}/resume", json={}) for _ in range(4))
            )
        return sorted(a.status_code for a in answers)

    assert asyncio.run(both()) == [202, 409, 409, 409]
    after = list(iter_sse(api, f"/api/runs/{run_id}/events", last_event_id=last, timeout=90))
    assert after[-1].type == "end" and after[-1].data["status"] == "completed"
    assert len([e for e in after if e.type == "run_status" and e.data["status"] == "running"]) == 1
    stages = [e.data["stage"] for e in after if e.type == "checkpoint"]
    assert len(stages) == len(set(stages)), stages
