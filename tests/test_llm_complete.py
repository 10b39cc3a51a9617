"""LLMClient.complete() against a real HTTP server speaking the OpenAI wire format
(peers/openai_server.py): text, usage and cost, <think> blocks, retries and their errors
(deepresearch/llm/wire.py), and the scripted server itself."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from config import Settings
from deepresearch.llm.jsonparse import strip_think
from deepresearch.llm.wire import retry_after_seconds
from llm_client import LLMClient, LLMError
from peers import free_port
from peers.openai_server import ScriptedOpenAI, ScriptedReply, prompt_id
from tests._llm_helpers import HI, SECRET_KEY, make_settings

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
