"""A model that cannot empty a report: negotiated structured output per server family, answers checked for
meaning, a per-endpoint concurrency limit, and fallbacks labelled - against real loopback servers that behave
like llama.cpp's, Ollama's and vLLM's (peers/openai_server.py), counted at the server.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from rich.console import Console

from config import Settings
from deepresearch.engine.core import open_engine
from deepresearch.graph.schemas import AnswerContext, Critique, Reflection, ResearchPlan, ReviewerFindings
from deepresearch.llm.family import detect_family, from_headers, from_models, from_url
from deepresearch.llm.slots import default_limit
from deepresearch.receipts.runtime import RunCancelled
from deepresearch.service.cli_view import ProgressView
from deepresearch.store import EventRecord
from llm_client import LLMClient, StructuredOutputError
from peers import serve_app
from peers.openai_server import ScriptedOpenAI, format_kind, make_openai_server
from peers.research_llm import SMALL_MODEL_PLAN
from tests.conftest import Servers

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
PLAN = {"sub_questions": ["What are SQLite WAL checkpoints?"], "queries": ["sqlite wal"], "rationale": "r"}
HI = [{"role": "user", "content": "plan it"}]


class Plan(BaseModel):
    sub_questions: list[str]
    queries: list[str]
    rationale: str


def _settings(url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "openai_base_url": url,
        "openai_model_name": "scripted-model",
        "llm_timeout_seconds": 5.0,
        "llm_max_retries": 2,
        "llm_retry_max_wait_seconds": 0.05,
    }
    return Settings(**values | overrides)


@pytest.fixture
def llama_cpp() -> Iterator[tuple[ScriptedOpenAI, str]]:
    scripted = make_openai_server(flavour="llama.cpp", slots=1)
    with serve_app(scripted) as base_url:
        yield scripted, f"{base_url}/v1"


# --- 1. structured output negotiated per server family -----------------------------------------------
async def test_llama_cpp_gets_json_object_with_its_schema_at_once(
    llama_cpp: tuple[ScriptedOpenAI, str],
) -> None:
    """llama-cpp-python's server answers json_schema with a 500: the client never sends it, because the
    server's /models says what it is; every structured request reaches its grammar."""
    scripted, url = llama_cpp
    scripted.responder = lambda body: json.dumps(PLAN)
    told: list[tuple[str, str]] = []

    async def remember(mode: str, notes: str) -> None:
        told.append((mode, notes))

    async with LLMClient(_settings(url), on_negotiated=remember) as llm:
        await asyncio.gather(*(llm.structured(HI, Plan) for _ in range(3)))
        assert llm.server_family is not None and llm.server_family.name == "llama.cpp"
    assert [format_kind(body) for body in scripted.calls] == ["json_object_schema"] * 3
    assert scripted.grammars == [Plan.model_json_schema()] * 3  # constrained by the schema, each time
    assert told == [("json_object_schema", told[0][1])] and "server: llama.cpp" in told[0][1]


async def test_an_unrecognised_llama_cpp_steps_down_on_its_refusal_without_retrying() -> None:
    """A server that hides its family but refuses json_schema the llama.cpp way (HTTP 500, "Input should
    be 'text' or 'json_object'"): one refusal, one step down - a capability, not an error to retry."""
    scripted = make_openai_server(flavour="llama.cpp")
    scripted.anonymous = True  # nothing in /models to go by: the family is unknown, the full ladder applies
    scripted.responder = lambda body: json.dumps(PLAN)
    with serve_app(scripted) as base_url:
        async with LLMClient(_settings(f"{base_url}/v1")) as llm:
            await llm.structured(HI, Plan)
            await llm.structured(HI, Plan)
            assert llm.output_mode == "json_object_schema"
    assert [format_kind(body) for body in scripted.calls] == ["json_schema", *["json_object_schema"] * 2]


@pytest.mark.parametrize(
    ("flavour", "refused", "expected"),
    [
        ("ollama", set(), ["json_schema"]),
        ("vllm", set(), ["json_schema"]),
        ("vllm", {"json_schema"}, ["json_schema", "guided_json"]),
    ],
)
async def test_ollama_and_vllm_get_their_constrained_forms(
    flavour: Any, refused: set[str], expected: list[str]
) -> None:
    scripted = make_openai_server(flavour=flavour)
    scripted.refuse_formats = refused
    scripted.responder = lambda body: json.dumps(PLAN)
    with serve_app(scripted) as base_url:
        async with LLMClient(_settings(f"{base_url}/v1")) as llm:
            await llm.structured(HI, Plan)
            assert llm.server_family is not None and llm.server_family.name == flavour
    kinds = [
        format_kind(body) or ("guided_json" if "guided_json" in body else None) for body in scripted.calls
    ]
    assert kinds == expected
    # what the server's decoder was constrained by: Ollama's native `format`, vLLM's guided decoding
    assert scripted.grammars[-1] is not None and scripted.grammars[-1]["properties"].keys() == {
        "sub_questions",
        "queries",
        "rationale",
    }


def test_families_are_told_by_what_the_server_says_first() -> None:
    assert from_models({"data": [{"id": "m", "owned_by": "llamacpp"}]}).name == "llama.cpp"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "m", "owned_by": "me", "permissions": []}]}).name == "llama.cpp"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 4096}]}).name == "vllm"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "m", "owned_by": "organization_owner"}]}).name == "lmstudio"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "llama3:latest", "owned_by": "library"}]}).name == "ollama"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "gpt-4o", "owned_by": "system"}]}).name == "openai"  # type: ignore[union-attr]
    assert from_models({"data": [{"id": "m", "owned_by": "scripted"}]}) is None
    assert from_headers({"server": "llama.cpp"}).name == "llama.cpp"  # type: ignore[union-attr]
    assert from_url("http://localhost:11434/v1").name == "ollama"  # type: ignore[union-attr]
    assert from_url("http://127.0.0.1:9999/v1") is None


async def test_an_unknown_server_is_probed_cheaply_and_said_unknown() -> None:
    scripted = make_openai_server()  # owned_by "scripted", no /props, no /api/version
    with serve_app(scripted) as base_url:
        async with httpx.AsyncClient(trust_env=False) as http:
            family = await detect_family(http, f"{base_url}/v1")
    assert family.name == "unknown" and scripted.calls == []


# --- 2. every answer checked for meaning -------------------------------------------------------------
def test_the_small_models_plan_is_unusable_and_says_why() -> None:
    context = AnswerContext(topic=QUESTION)
    with pytest.raises(ValueError) as caught:
        ResearchPlan.model_validate(json.loads(SMALL_MODEL_PLAN), context=context)
    message = str(caught.value)
    assert "sub_questions has no usable item" in message and "queries has no usable item" in message
    assert "',' punctuation only" in message and "'query1' a placeholder" in message
    assert "'no code here.' off topic" in message


def test_bad_items_are_dropped_and_the_good_ones_kept() -> None:
    answer = {
        "sub_questions": [
            "How does SQLite's write-ahead log survive a crash?",
            "sub-question 2",
            "how does sqlite's write-ahead log survive a crash",  # a duplicate
            "Sub Questions",  # the schema's own words
            "What is the capital of France?",  # off topic
        ],
        "queries": ["sqlite wal durability", "example", "query 2", "...", "durable checkpoints"],
    }
    plan = ResearchPlan.model_validate(answer, context=AnswerContext(topic=QUESTION))
    assert plan.sub_questions == ["How does SQLite's write-ahead log survive a crash?"]
    assert plan.queries == ["sqlite wal durability", "durable checkpoints"]
    # a value read back from a receipt is never judged again (no context: shape only)
    assert ResearchPlan.model_validate(answer).sub_questions[1] == "sub-question 2"


def test_reviewers_critic_and_reflection_drop_placeholders() -> None:
    cited = AnswerContext(citations=frozenset({1, 2}))
    findings = ReviewerFindings.model_validate(
        {
            "findings": [
                {"statement": "statement", "citations": [1]},
                {"statement": "WAL mode lets readers run beside one writer.", "citations": [1]},
                {"statement": "Checkpoints are written after every stage.", "citations": []},
                {"statement": "A receipt is kept for every external call.", "citations": [97]},
                {"statement": "What is and is not repeated", "citations": [1]},  # a heading, copied
            ],
            "open_questions": ["...", "How large may the WAL file grow?"],
        },
        context=cited,
    )
    assert [f.statement for f in findings.findings] == ["WAL mode lets readers run beside one writer."]
    assert findings.open_questions == ["How large may the WAL file grow?"]
    assert cited.dropped["findings"] == [
        "statement 'statement' a placeholder",
        "statement 'Checkpoints are written after every stage.' cites nothing",
        "statement 'A receipt is kept for every external call.' cites [97], not in the evidence",
        "statement 'What is and is not repeated' a question or a heading, not a statement",
    ]
    with pytest.raises(ValueError, match="findings has no usable item"):
        ReviewerFindings.model_validate({"findings": [{"statement": "...", "citations": [1]}]}, context=cited)
    with pytest.raises(ValueError, match="every list is empty"):
        Critique.model_validate(
            {"issues": ["issues", ","], "suggestions": ["example"]}, context=AnswerContext()
        )
    with pytest.raises(ValueError, match="follow_up_queries has no usable item"):
        Reflection.model_validate(
            {"sufficient": False, "follow_up_queries": ["query1", "banana bread recipe"]},
            context=AnswerContext(topic=QUESTION),
        )


async def test_placeholder_plan_falls_back_with_its_reason_and_the_report_keeps_real_sections(
    servers: Servers, tmp_path: Path
) -> None:
    """The plan SmolLM2 wrote under a grammar (sub-questions ',', 'query1', 'query2'; the query 'no code
    here.'): asked once more, then the keyword plan, labelled; the report's sections are real questions."""
    servers.responder.plan_answer = SMALL_MODEL_PLAN
    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    assert servers.llm.calls_by_prompt()["plan/v1"] == 2  # the answer and one re-ask, counted at the server
    (fallback,) = final.usage["fallbacks"]
    assert fallback["step"] == "plan"
    assert "'query1' a placeholder" in fallback["reason"] and "off topic" in fallback["reason"]
    folder = settings.workspace_dir / (final.artifact_dir or "")
    plan = json.loads((folder / "plan.json").read_text())
    assert all(len(q.split()) >= 2 and "query" not in q for q in plan["sub_questions"])
    report = (folder / "deepresearch-report.md").read_text()
    headings = re.findall(r"^#{2,3} (.+)$", report, re.MULTILINE)
    assert not {",", "query1", "query2"} & set(headings), headings
    assert "The fetched sources did not answer the question directly" not in report
    assert re.search(r"\[\d+\]", report.split("## Sources")[0])  # cited
    # the plan call's event says it fell back; the CLI prints that, not "ok"
    plan_result = next(
        e for e in events if e.type == "tool_result" and e.data.get("tool_name") == "llm.structured"
    )
    assert plan_result.data["status"] == "fell_back" and plan_result.data["fallback"]["step"] == "plan"
    out = io.StringIO()
    view = ProgressView(final, live=False, console=Console(file=out, width=300, soft_wrap=True))
    for event in events:
        view.on_event(event)
    plan_line = next(line for line in out.getvalue().splitlines() if "llm: plan" in line)
    assert "— fell back" in plan_line and "extractive instead" in plan_line
    assert any("— ok" in line for line in out.getvalue().splitlines() if "llm:" in line)
    view.summary(final)  # a model run's totals name its tokens
    assert re.search(r"whole run: \d+ calls, [1-9]\d* tokens \(saved by receipts: 0\)", out.getvalue())


# --- 3. a per-endpoint concurrency limit -------------------------------------------------------------
async def test_a_one_slot_server_is_sent_one_request_at_a_time_and_the_queue_is_not_timed(
    llama_cpp: tuple[ScriptedOpenAI, str],
) -> None:
    """Eight requests at once to a loopback one-slot server, each taking 0.25 s, with a 1.5 s timeout:
    queued in the client (default limit 1 on loopback), none times out and none is retried, though the
    last one waits longer than a whole timeout before it is sent."""
    scripted, url = llama_cpp
    scripted.latency = 0.25
    assert default_limit(url) == 1
    async with LLMClient(_settings(url, llm_timeout_seconds=1.5)) as llm:
        started = time.monotonic()
        await asyncio.gather(*(llm.complete(HI) for _ in range(8)))
        took = time.monotonic() - started
    assert len(scripted.calls) == 8 and scripted.max_in_flight == 1
    assert took >= 2.0  # 8 x 0.25 s in a row: past one request's timeout, yet no timeout


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_the_limit_is_what_the_server_sees(limit: int) -> None:
    scripted = make_openai_server()
    scripted.latency = 0.2
    with serve_app(scripted) as base_url:
        async with LLMClient(_settings(f"{base_url}/v1", llm_max_concurrency=limit)) as llm:
            await asyncio.gather(*(llm.complete(HI) for _ in range(6)))
    assert scripted.max_in_flight == limit and len(scripted.calls) == 6


async def test_a_cancel_takes_a_queued_request_before_it_reaches_the_server(
    llama_cpp: tuple[ScriptedOpenAI, str],
) -> None:
    scripted, url = llama_cpp
    scripted.latency = 0.5
    cancelled = False

    def check() -> None:
        if cancelled:
            raise RunCancelled("test cancel")

    async with LLMClient(_settings(url), wait_check=check) as llm:
        first = asyncio.create_task(llm.complete(HI))
        queued = asyncio.create_task(llm.complete(HI))
        await asyncio.sleep(0.15)
        cancelled = True
        with pytest.raises(RunCancelled):
            await queued
        await first  # the request in flight finishes
    assert len(scripted.calls) == 1


async def test_three_reviewers_on_a_one_slot_server_queue_instead_of_timing_out(
    servers: Servers, tmp_path: Path
) -> None:
    """The run's reviewers fan out at once; on a loopback one-slot server they are sent one by one, each
    with its whole timeout (0.8 s for 0.5 s answers: three at once in the server's queue would time out)."""
    slow = make_openai_server(slots=1)
    slow.responder = servers.responder
    with serve_app(slow) as base_url:
        settings = servers.settings(
            tmp_path, llm=True, openai_base_url=f"{base_url}/v1", llm_timeout_seconds=0.8
        )
        events: list[EventRecord] = []
        async with open_engine(settings) as engine:
            run = await engine.create_run(QUESTION)
            slow.latency = 0.5
            final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    assert slow.max_in_flight == 1
    assert slow.calls_by_prompt()["review/v1"] == 3  # no retries: nothing timed out
    assert final.usage["fallbacks"] == []
    reviews = [
        e for e in events if e.type == "tool_result" and str(e.data.get("label", "")).startswith("review:")
    ]
    assert len(reviews) == 3 and all(e.data["status"] == "ok" for e in reviews)


async def test_every_step_of_a_placeholder_model_falls_back_labelled(
    servers: Servers, tmp_path: Path
) -> None:
    servers.responder.messy = "placeholder"
    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    llm_results = [
        e
        for e in events
        if e.type == "tool_result"
        and e.data.get("parent_call_id")
        and str(e.data["tool_name"]).startswith("llm.")
    ]
    assert llm_results and all(e.data["status"] == "fell_back" for e in llm_results)
    steps = {f["step"] for f in final.usage["fallbacks"]}
    assert {"plan", "critic", "report", "review: fact_reviewer"} <= steps
    report = (settings.workspace_dir / (final.artifact_dir or "") / "deepresearch-report.md").read_text()
    body = report.split("## Sources")[0]
    assert "### query1" not in body and re.search(r"\[\d+\]", body)


async def test_a_stuck_placeholder_answer_is_a_structured_output_error(
    llama_cpp: tuple[ScriptedOpenAI, str],
) -> None:
    scripted, url = llama_cpp
    scripted.responder = lambda body: SMALL_MODEL_PLAN
    async with LLMClient(_settings(url)) as llm:
        with pytest.raises(StructuredOutputError) as caught:
            await llm.structured(HI, ResearchPlan, AnswerContext(topic=QUESTION))
    assert len(scripted.calls) == 2 and "'query1' a placeholder" in caught.value.problems[-1]
