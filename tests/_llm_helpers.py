"""The scripted OpenAI-compatible server (peers/openai_server.py) on 127.0.0.1 for the LLM client test
modules (test_llm_*.py), and the settings that point the client at it.

A pytest plugin of tests/conftest.py, so its fixture `server` (a fresh server per test, and its /v1 URL)
is found by name in every test module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from config import Settings
from peers import serve_app
from peers.openai_server import ScriptedOpenAI, make_openai_server

SECRET_KEY = "sk-test-secret-0123456789"
HI = [{"role": "user", "content": "hi"}]


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
