"""A whole run against a real small model (llama.cpp's server + SmolLM2-135M, scripts/real-model.sh).

Skipped unless DEEPRESEARCH_TEST_MODEL_URL points at an OpenAI-compatible API on loopback, e.g.

    scripts/real-model.sh 8089 &
    DEEPRESEARCH_TEST_MODEL_URL=http://127.0.0.1:8089/v1 .venv/bin/python -m pytest tests/test_real_model.py

Search and pages come from the scripted servers (nothing leaves loopback). The model's requests pass a
counting proxy on loopback, so "repeats no completed call" is counted at the server, as elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from deepresearch.engine.core import open_engine
from deepresearch.graph.meaning import ItemRule, problem, topic_words
from deepresearch.store import EventRecord
from peers import serve_app
from peers.openai_server import prompt_id
from stages import FINAL_ARTIFACTS
from tests.conftest import Servers, execute_and_pause_after

MODEL_URL = os.environ.get("DEEPRESEARCH_TEST_MODEL_URL", "").rstrip("/")
MODEL_NAME = os.environ.get("DEEPRESEARCH_TEST_MODEL_NAME", "smollm2")
REPO = Path(__file__).resolve().parent.parent
QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"

pytestmark = pytest.mark.skipif(
    not MODEL_URL or urlsplit(MODEL_URL).hostname not in ("127.0.0.1", "localhost", "::1"),
    reason="set DEEPRESEARCH_TEST_MODEL_URL to a model server on loopback (scripts/real-model.sh)",
)


class CountingProxy:
    """Forwards /v1/* to the real server (streams included) and counts chat requests by prompt id."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.calls: Counter[str | None] = Counter()
        self.refused = 0  # requests the server answered with an error (a response_format it refused)
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/{path:path}", self._forward, methods=["GET", "POST"])])

    async def _forward(self, request: Request) -> Response:
        body = await request.body()
        if request.url.path.endswith("/chat/completions"):
            with self._lock:
                self.calls[prompt_id(json.loads(body))] += 1
        url = f"{self.upstream}/{request.path_params['path']}"
        client = httpx.AsyncClient(timeout=600, trust_env=False)
        upstream = await client.send(
            client.build_request(
                request.method, url, content=body, headers={"content-type": "application/json"}
            ),
            stream=True,
        )
        if upstream.status_code >= 400:
            with self._lock:
                self.refused += 1

        async def relay() -> Iterator[bytes]:  # type: ignore[misc]
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()
                await client.aclose()

        return StreamingResponse(
            relay(),  # type: ignore[arg-type]
            status_code=upstream.status_code,
            media_type=upstream.headers.get("content-type"),
        )


@pytest.fixture
def proxy() -> Iterator[tuple[CountingProxy, str]]:
    counting = CountingProxy(MODEL_URL)
    with serve_app(counting.app) as url:
        yield counting, f"{url}/v1"


def _settings(servers: Servers, tmp_path: Path, base_url: str):  # type: ignore[no-untyped-def]
    return servers.settings(
        tmp_path,
        llm=True,
        openai_base_url=base_url,
        openai_model_name=MODEL_NAME,
        llm_max_output_tokens=512,  # a 135M model rambles; keep each answer bounded
        llm_timeout_seconds=300,
        llm_concurrency=1,
        llm_temperature=0.0,
        # the tiny model's queries may match nothing at the scripted search server (seen: a run failed,
        # honestly, with "no search results at all"); the repository's docs as a corpus always answer
        corpus_dir=REPO / "docs",
        queries_per_round=2,
        sources_to_fetch=2,
    )


async def test_a_real_small_model_completes_an_honestly_labelled_run(
    servers: Servers, tmp_path: Path, proxy: tuple[CountingProxy, str]
) -> None:
    counting, base_url = proxy
    settings = _settings(servers, tmp_path, base_url)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
        capability = await engine.store.get_llm_capability(base_url, MODEL_NAME)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    assert all((folder / name).is_file() for name in FINAL_ARTIFACTS)
    report = (folder / "deepresearch-report.md").read_text()
    sources = {s["n"] for s in json.loads((folder / "sources.json").read_text())["sources"]}
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", report.split("## Sources")[0])}
    assert cited and cited <= sources  # the report cites, and every [n] left resolves to a fetched source...
    check = json.loads((folder / "evidence.json").read_text())["citation_check"]
    assert check["citations_supported"] >= len(cited)  # ...and was checked against it
    usage = final.usage
    assert usage["model_answers"] == sum(counting.calls.values()) - counting.refused
    header = report.split("## Summary")[0]
    assert f"{usage['unusable_answers']} unusable" in header
    for fallback in usage["fallbacks"]:
        assert fallback["step"] in header
    if not usage["fallbacks"]:
        assert "no step fell back" in header
    assert capability is not None  # the structured-output mode was found out and remembered
    # llama.cpp's server told what it is (/models): asked in its grammar form at once, never refused
    assert "server: llama.cpp" in capability.detail and capability.mode == "json_object_schema"
    assert counting.refused == 0
    # the plan's sub-questions (the report's sections) are real questions, not "," or "query1"
    plan = json.loads((folder / "plan.json").read_text())
    for sub_question in plan["sub_questions"]:
        assert problem(sub_question, ItemRule(2, on_topic=True), frozenset(), topic_words(QUESTION)) is None
    # a call whose value came from the step's extractive method says so in its event
    llm_results = [
        e for e in events if e.type == "tool_result" and e.data.get("tool_name", "").startswith("llm.")
    ]
    for event in (e for e in llm_results if e.data.get("parent_call_id")):
        assert event.data["status"] == ("fell_back" if event.data.get("fallback") else "ok")
    state = json.loads((folder / "research-state.json").read_text())
    assert state["model_answers"]["unusable"] == usage["unusable_answers"]


async def test_cancel_and_resume_with_a_real_model_repeat_no_completed_call(
    servers: Servers, tmp_path: Path, proxy: tuple[CountingProxy, str]
) -> None:
    counting, base_url = proxy
    settings = _settings(servers, tmp_path, base_url)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        first = await execute_and_pause_after(engine, run.run_id, "screen_evidence")
        assert first.status == "cancelled", first.error
        before = Counter(counting.calls)
        assert before["plan/v1"] >= 1 and before["screen/v1"] >= 1 and before["report/v1"] == 0
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    after = counting.calls
    assert after["plan/v1"] == before["plan/v1"] and after["screen/v1"] == before["screen/v1"]
    assert after["report/v1"] >= 1
