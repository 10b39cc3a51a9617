"""LLM client against a real HTTP server speaking the OpenAI wire format (peers/openai_server.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from config import Settings
from deepresearch.graph.schemas import AnswerContext, ScreeningResult
from deepresearch.llm.jsonparse import strip_think
from deepresearch.llm.wire import retry_after_seconds
from llm_client import (
    LLMClient,
    LLMError,
    LLMResponse,
    StructuredOutputError,
    parse_json_loosely,
)
from peers import free_port, serve_app
from peers.openai_server import (
    ScriptedOpenAI,
    ScriptedReply,
    format_kind,
    last_user_message,
    make_openai_server,
    prompt_id,
)

SECRET_KEY = "sk-test-secret-0123456789"
HI = [{"role": "user", "content": "hi"}]


class Plan(BaseModel):
    queries: list[str] = Field(min_length=1)
    rationale: str


class Queries(BaseModel):
    queries: list[str]


@pytest.fixture
def server() -> Iterator[tuple[ScriptedOpenAI, str]]:
    # A server per test: a request a previous test left in flight (a timeout, a cancelled stream) must
    # not reach this test's script and consume its answers (a shared server did, now and then).
    scripted = make_openai_server()
    with serve_app(scripted) as base_url:
        yield scripted, f"{base_url}/v1"


def make_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "openai_base_url": base_url,
        "openai_model_name": "test-model",
        "openai_api_key": SECRET_KEY,
        "llm_timeout_seconds": 5.0,
        "llm_max_retries": 3,
        "llm_retry_max_wait_seconds": 0.05,
        "llm_temperature": 0.3,
        "llm_max_output_tokens": 512,
        "llm_json_mode": False,
        "llm_input_cost_per_mtok": 2.0,
        "llm_output_cost_per_mtok": 8.0,
    }
    values.update(overrides)
    return Settings(**values)


# --- complete() --------------------------------------------------------------------------------------


async def test_complete_returns_text_usage_and_cost(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: "The answer is 42."
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is it?"}]
    async with LLMClient(make_settings(url)) as llm:
        response = await llm.complete(messages)

    prompt_tokens = math.ceil(len("Be brief.What is it?") / 4)
    completion_tokens = math.ceil(len("The answer is 42.") / 4)
    assert response.text == "The answer is 42."
    assert response.model == "test-model"
    assert response.attempts == 1
    assert response.finish_reason == "stop"
    assert response.usage.prompt_tokens == prompt_tokens
    assert response.usage.completion_tokens == completion_tokens
    assert response.usage.total_tokens == prompt_tokens + completion_tokens
    assert response.usage.cost_usd == pytest.approx((prompt_tokens * 2.0 + completion_tokens * 8.0) / 1e6)
    assert response.to_dict()["usage"]["total_tokens"] == prompt_tokens + completion_tokens
    [body] = scripted.calls
    assert body["model"] == "test-model"
    assert body["messages"] == messages
    assert body["max_tokens"] == 512
    assert body["temperature"] == 0.3
    assert "response_format" not in body


async def test_complete_overrides_and_missing_usage(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: ScriptedReply("ok", include_usage=False)
    async with LLMClient(make_settings(url)) as llm:
        response = await llm.complete(HI, max_tokens=64, temperature=0.0)
    assert response.usage.to_dict() == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cost_usd": 0.0,
    }
    assert scripted.calls[0]["max_tokens"] == 64
    assert scripted.calls[0]["temperature"] == 0.0


async def test_think_blocks_stripped_and_reasoning_content_ignored(
    server: tuple[ScriptedOpenAI, str],
) -> None:
    scripted, url = server
    replies = iter(
        [
            ScriptedReply(
                "<think>\nLet me plan.\n</think>\n\nFinal answer.", reasoning_content="hidden chain"
            ),
            ScriptedReply("<think>cut off while thinking", finish_reason="length"),
        ]
    )
    scripted.responder = lambda body: next(replies)
    async with LLMClient(make_settings(url)) as llm:
        first = await llm.complete(HI)
        second = await llm.complete(HI)
    assert first.text == "Final answer."
    assert second.text == ""
    assert second.finish_reason == "length"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<think>a</think>b<think>c</think>d", "bd"),
        ("reasoning without opener</think>answer", "answer"),
        ("answer <think>unterminated", "answer"),
        ("<THINK>x</THINK> y", "y"),
        ("no reasoning here", "no reasoning here"),
    ],
)
def test_strip_think(raw: str, expected: str) -> None:
    assert strip_think(raw) == expected


# --- retries -----------------------------------------------------------------------------------------


async def test_429_honours_retry_after_then_succeeds(
    server: tuple[ScriptedOpenAI, str], caplog: pytest.LogCaptureFixture
) -> None:
    scripted, url = server
    caplog.set_level(logging.WARNING, logger="llm_client")
    scripted.fail_next(429, retry_after=0.2)
    async with LLMClient(make_settings(url, llm_retry_max_wait_seconds=1.0)) as llm:
        started = time.monotonic()
        response = await llm.complete(HI)
        elapsed = time.monotonic() - started
    assert len(scripted.calls) == 2
    assert response.attempts == 2
    assert elapsed >= 0.2
    # The wait came from the header, not from the (0.25-0.5 s) backoff that applies without one.
    assert "HTTP 429" in caplog.text
    assert "retry 1/3 in 0.20s" in caplog.text


async def test_retry_after_is_capped_by_settings(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.fail_next(503, retry_after=30)
    async with LLMClient(make_settings(url, llm_retry_max_wait_seconds=0.1)) as llm:
        started = time.monotonic()
        response = await llm.complete(HI)
    assert time.monotonic() - started < 2
    assert response.attempts == 2


async def test_500_twice_then_success(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.fail_next(500, times=2)
    async with LLMClient(make_settings(url)) as llm:
        response = await llm.complete(HI)
    assert len(scripted.calls) == 3
    assert response.attempts == 3
    assert response.text.startswith("scripted answer")


async def test_400_is_not_retried_and_explains(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.fail_next(400, body=json.dumps({"error": {"message": "prompt is too long for this model"}}))
    async with LLMClient(make_settings(url)) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(HI)
    assert len(scripted.calls) == 1
    message = str(caught.value)
    assert caught.value.status == 400
    assert "HTTP 400" in message
    assert "prompt is too long for this model" in message
    assert url in message
    assert "test-model" in message
    assert SECRET_KEY not in message


async def test_retries_exhausted_mentions_status(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.fail_next(503, times=10)
    async with LLMClient(make_settings(url, llm_max_retries=2)) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(HI)
    assert len(scripted.calls) == 3
    assert caught.value.status == 503
    assert caught.value.attempts == 3
    assert "HTTP 503" in str(caught.value)
    assert "3 attempt(s)" in str(caught.value)


async def test_timeout_is_retried_then_fails_clearly(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.latency = 0.6
    settings = make_settings(url, llm_timeout_seconds=0.15, llm_max_retries=1)
    async with LLMClient(settings) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(HI)
    assert len(scripted.calls) == 2
    assert "timed out after 0.15s" in str(caught.value)
    assert "DEEPRESEARCH_LLM_TIMEOUT_SECONDS" in str(caught.value)


async def test_connection_refused_is_retried_then_fails_clearly() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    async with LLMClient(make_settings(url, llm_max_retries=1)) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.complete(HI)
    assert caught.value.attempts == 2
    assert "connection error" in str(caught.value)
    assert "OPENAI_BASE_URL" in str(caught.value)


async def test_rejected_max_tokens_switches_to_max_completion_tokens(
    server: tuple[ScriptedOpenAI, str],
) -> None:
    scripted, url = server
    rejection = {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead."
        }
    }
    scripted.fail_next(400, body=json.dumps(rejection))
    async with LLMClient(make_settings(url)) as llm:
        await llm.complete(HI)
        await llm.complete(HI)
    first, second, third = scripted.calls
    assert "max_tokens" in first
    assert second["max_completion_tokens"] == 512
    assert "max_tokens" not in second
    assert "max_tokens" not in third  # the switch sticks


async def test_malformed_or_foreign_bodies(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.fail_next(200, body='{"id": "chatcmpl-1", "choi')  # cut off mid-body: transient, retried
    async with LLMClient(make_settings(url)) as llm:
        response = await llm.complete(HI)
        assert response.attempts == 2
        scripted.fail_next(200, body="<html><body>Open WebUI</body></html>")  # base URL of a web page
        with pytest.raises(LLMError, match=r"returned no chat completion choices: '<html>.*ends in /v1"):
            await llm.complete(HI)
    assert len(scripted.calls) == 3


def test_missing_model_is_a_clear_error() -> None:
    with pytest.raises(LLMError, match="OPENAI_MODEL_NAME"):
        LLMClient(Settings(openai_model_name="", openai_base_url="http://127.0.0.1:1/v1"))


def test_retry_after_header_forms() -> None:
    future = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 25 < (retry_after_seconds({"retry-after": future}) or 0) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


# --- structured() ------------------------------------------------------------------------------------

PLAN = {"queries": ["solar capacity 2024", "grid storage"], "rationale": "cover supply and storage"}


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("```json\n" + json.dumps(PLAN, indent=2) + "\n```", id="code-fence"),
        pytest.param(
            "<think>The user wants a plan. {not json}</think>Sure! Here it is:\n"
            + json.dumps(PLAN)
            + "\nLet me know if you need more.",
            id="think-and-prose",
        ),
        pytest.param(
            "{'queries': ['solar capacity 2024', 'grid storage'], 'rationale': 'cover supply and storage'}",
            id="single-quotes",
        ),
        pytest.param(
            '{"queries": ["solar capacity 2024", "grid storage",], "rationale": "cover supply and storage",}',
            id="trailing-commas",
        ),
        pytest.param(
            '{"queries": ["solar capacity 2024", "grid storage"], "rationale": "cover supply and storage',
            id="truncated-object",
        ),
    ],
)
async def test_structured_repairs_without_reask(server: tuple[ScriptedOpenAI, str], raw: str) -> None:
    scripted, url = server
    scripted.responder = lambda body: raw
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured([{"role": "user", "content": "plan it"}], Plan)
    assert len(scripted.calls) == 1
    assert result.value == Plan.model_validate(PLAN)
    assert len(result.responses) == 1
    assert result.usage.total_tokens == result.responses[0].usage.total_tokens > 0


async def test_structured_bare_list_for_single_field_schema(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: '["a", "b"]'
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(HI, Queries)
    assert result.value.queries == ["a", "b"]
    assert len(scripted.calls) == 1


async def test_structured_output_mode_follows_settings(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    async with LLMClient(make_settings(url, llm_json_mode=True)) as llm:
        await llm.structured(HI, Plan)
        await llm.complete(HI)
    async with LLMClient(make_settings(url, llm_structured_output="prompt")) as llm:
        await llm.structured(HI, Plan)
    async with LLMClient(make_settings(url)) as llm:  # auto: the most capable mode first
        await llm.structured(HI, Plan)
    legacy_json, plain_complete, prompt_only, negotiated = scripted.calls
    assert legacy_json["response_format"] == {"type": "json_object"}
    assert "response_format" not in plain_complete
    assert "response_format" not in prompt_only
    strict = negotiated["response_format"]["json_schema"]
    assert negotiated["response_format"]["type"] == "json_schema" and strict["strict"] is True
    assert strict["schema"]["required"] == ["queries", "rationale"]
    assert strict["schema"]["additionalProperties"] is False


async def test_structured_output_is_negotiated_down_the_ladder_once(
    server: tuple[ScriptedOpenAI, str],
) -> None:
    """A server that refuses json_schema and json_object+schema: the client steps down once, says so,
    and later calls ask in the mode that worked at once."""
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    scripted.refuse_formats = {"json_schema", "json_object_schema"}
    told: list[tuple[str, str]] = []

    async def remember(mode: str, notes: str) -> None:
        told.append((mode, notes))

    async with LLMClient(make_settings(url), on_negotiated=remember) as llm:
        first = await llm.structured(HI, Plan)
        second = await llm.structured(HI, Plan)
        assert llm.output_mode == "json_object"
    assert first.value == second.value == Plan.model_validate(PLAN)
    kinds = [format_kind(body) for body in scripted.calls]
    assert kinds == ["json_schema", "json_object_schema", "json_object", "json_object"]
    assert len(told) == 1 and told[0][0] == "json_object"
    assert "json_schema refused" in told[0][1] and "json_object_schema refused" in told[0][1]

    # a remembered mode is used from the first request: no probing again
    async with LLMClient(make_settings(url), output_mode="json_object", on_negotiated=remember) as llm:
        await llm.structured(HI, Plan)
    assert format_kind(scripted.calls[-1]) == "json_object" and len(scripted.calls) == 5
    assert len(told) == 1


@pytest.mark.parametrize("refuse_status", [400, 500])
async def test_a_server_refusing_every_format_gets_prompt_only(
    server: tuple[ScriptedOpenAI, str], refuse_status: int
) -> None:
    """Refusals come as 400/422, or - llama-cpp-python's server - as a 500 naming response_format."""
    scripted, url = server
    scripted.responder = lambda body: json.dumps(PLAN)
    scripted.refuse_formats = {"json_schema", "json_object_schema", "json_object"}
    scripted.refuse_status = refuse_status
    async with LLMClient(make_settings(url)) as llm:
        await llm.structured(HI, Plan)
        assert llm.output_mode == "prompt"
    assert [format_kind(body) for body in scripted.calls] == [
        "json_schema",
        "json_object_schema",
        "json_object",
        None,
    ]


async def test_structured_reasks_with_reasons_by_meaning(server: tuple[ScriptedOpenAI, str]) -> None:
    """Valid JSON that means nothing (passage ids never shown) is re-asked with the reason."""
    scripted, url = server
    answers = iter(
        [
            '{"relevant": [{"passage_id": "S9.9", "relevance": 0.9, "reason": "made up"}]}',
            '{"relevant": [{"passage_id": "S1.1", "relevance": 0.9, "reason": "on topic"}]}',
        ]
    )
    scripted.responder = lambda body: next(answers)
    context = AnswerContext(passage_ids=frozenset({"S1.1", "S1.2"}))
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(HI, ScreeningResult, context)
    assert [p.passage_id for p in result.value.relevant] == ["S1.1"]
    assert len(scripted.calls) == 2 and len(result.problems) == 1
    assert "['S9.9'] were not among the passages shown" in last_user_message(scripted.calls[1])


async def test_structured_reasks_once_with_the_validation_error(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server

    def responder(body: dict[str, Any]) -> str:
        if last_user_message(body).startswith("Your previous answer could not be used"):
            return json.dumps(PLAN)
        return '{"queries": ["only queries"]}'  # rationale missing

    scripted.responder = responder
    messages = [{"role": "system", "content": "deepresearch prompt plan/v1\nPlan."}, *HI]
    async with LLMClient(make_settings(url)) as llm:
        result = await llm.structured(messages, Plan)

    assert result.value == Plan.model_validate(PLAN)
    assert len(scripted.calls) == 2
    assert len(result.responses) == 2
    reask = scripted.calls[1]["messages"]
    assert reask[: len(messages)] == messages
    assert reask[-2] == {"role": "assistant", "content": '{"queries": ["only queries"]}'}
    assert reask[-1]["role"] == "user"
    assert "rationale: Field required" in reask[-1]["content"]
    assert json.dumps(Plan.model_json_schema()) in reask[-1]["content"]
    assert scripted.calls_by_prompt() == {"plan/v1": 2}


async def test_structured_gives_up_after_one_reask(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.responder = lambda body: "I cannot help with that request."
    async with LLMClient(make_settings(url)) as llm:
        with pytest.raises(StructuredOutputError) as caught:
            await llm.structured(HI, Plan)
    error = caught.value
    assert len(scripted.calls) == 2
    assert isinstance(error, LLMError)
    assert str(error).startswith("the model's answer for Plan was not usable after one re-ask: ")
    assert len(error.problems) == 2
    assert "no JSON object or array found" in str(error)
    assert error.schema_name == "Plan"
    assert error.raw_excerpt == "I cannot help with that request."
    assert len(error.responses) == 2
    assert all(isinstance(r, LLMResponse) for r in error.responses)


async def test_structured_empty_object_does_not_pass_for_prose(server: tuple[ScriptedOpenAI, str]) -> None:
    class Notes(BaseModel):  # every field has a default: {} would validate
        notes: list[str] = []

    scripted, url = server
    scripted.responder = lambda body: "Sorry, {I cannot} do that."
    async with LLMClient(make_settings(url)) as llm:
        with pytest.raises(StructuredOutputError):
            await llm.structured(HI, Notes)
    assert len(scripted.calls) == 2


# --- parse_json_loosely ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('```\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('```json\n{"a": 1', {"a": 1}),  # unterminated fence and object
        ('Here: {"a": "}"} and {"b": 2}', {"a": "}"}),
        ('See [note] below: {"a": {"b": [1, 2,]},}', {"a": {"b": [1, 2]}}),
        ("{'a': True, 'b': None, 'c': False}", {"a": True, "b": None, "c": False}),
        ('{"a": True, "b": None, "c": "True stays"}', {"a": True, "b": None, "c": "True stays"}),
        ('{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
        ('<think>{"wrong": 1}</think>{"right": 2}', {"right": 2}),
        ("{}", {}),
    ],
)
def test_parse_json_loosely_repairs(text: str, expected: Any) -> None:
    assert parse_json_loosely(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I cannot help",
        "",
        "   ",
        "<think>only reasoning</think>",
        "{I cannot help}",
        "Sorry {",
        '<think>{"a": 1}',
    ],
)
def test_parse_json_loosely_rejects_hopeless_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json_loosely(text)


# --- the scripted server itself ------------------------------------------------------------------------


def test_prompt_id_marker() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You plan research.\ndeepresearch prompt plan/v1\nBe brief."},
            {"role": "user", "content": "deepresearch prompt not/this-one"},
        ]
    }
    assert prompt_id(body) == "plan/v1"
    assert prompt_id({"messages": [{"role": "user", "content": "deepresearch prompt x/v1"}]}) is None
    assert prompt_id({}) is None


async def test_scripted_server_handles_concurrent_requests(server: tuple[ScriptedOpenAI, str]) -> None:
    scripted, url = server
    scripted.latency = 0.3
    # a loopback endpoint gets one request at a time by default; this test is about the server
    async with LLMClient(make_settings(url, llm_max_concurrency=5)) as llm:
        started = time.monotonic()
        responses = await asyncio.gather(*(llm.complete(HI) for _ in range(5)))
        elapsed = time.monotonic() - started
    assert len(responses) == 5
    assert len(scripted.calls) == 5
    assert elapsed < 1.2  # served in parallel, not 5 x 0.3 s in a row
    async with httpx.AsyncClient(trust_env=False) as http:
        models = (await http.get(f"{url}/models")).json()
    assert models["data"][0]["id"] == scripted.model
