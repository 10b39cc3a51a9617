"""Structured output negotiated once and remembered; readable failures; the providers health route.

Everything talks to real servers on 127.0.0.1 (the scripted model and search servers) or to a closed
loopback port; "no network at all" is a subprocess in its own empty network namespace (``unshare -rn``).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deepresearch.engine.core import open_engine
from deepresearch.search.health import nothing_found
from deepresearch.store import EventRecord
from peers import serve_app
from peers.openai_server import format_kind
from runner import create_app
from tests.conftest import Servers

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released: connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(settings: Any) -> Iterator[httpx.Client]:
    with (
        serve_app(create_app(settings), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30) as client,
    ):
        yield client


async def test_structured_output_is_negotiated_once_and_remembered(servers: Servers, tmp_path: Path) -> None:
    servers.llm.refuse_formats = {"json_schema"}  # like llama-cpp-python's server: json_object + schema
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        first = await engine.execute((await engine.create_run(QUESTION)).run_id)
        assert first.status == "completed", first.error
        capability = await engine.store.get_llm_capability(f"{servers.llm_url}/v1", "scripted-model")
    assert capability is not None and capability.mode == "json_object_schema"
    assert "json_schema refused" in capability.detail
    kinds = [format_kind(body) for body in servers.llm.calls]
    assert kinds.count("json_schema") == 1  # refused once, for the run's first structured call
    assert first.usage["fallbacks"] == []

    asked = len(servers.llm.calls)
    async with open_engine(settings) as engine:  # a later run (a new process, same database)
        second = await engine.execute((await engine.create_run(QUESTION)).run_id)
    assert second.status == "completed", second.error
    later = [format_kind(body) for body in servers.llm.calls[asked:]]
    assert "json_schema" not in later and later.count("json_object_schema") >= 6

    for client in _serve(settings):
        ready = client.get("/readyz").json()
        assert ready["llm"]["structured_output"] == "json_object_schema"
        assert ready["llm"]["model"] == "scripted-model"
        detail = client.get(f"/api/runs/{second.run_id}").json()
        assert detail["llm"]["structured_output"] == "json_object_schema"
        assert detail["usage"]["model_answers"] > 0 and detail["usage"]["fallbacks"] == []


async def test_no_reachable_search_provider_is_said_in_plain_words(
    servers: Servers, tmp_path: Path, closed_port: int
) -> None:
    settings = servers.settings(tmp_path, web_search_url=f"http://127.0.0.1:{closed_port}/search")
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        failed = await engine.execute((await engine.create_run(QUESTION)).run_id, on_event=events.append)
    assert failed.status == "failed"
    assert (failed.error or "").startswith(
        "search_web: No web search provider is reachable from this server: generic could not be reached"
    )
    assert "Configure SEARXNG_URL, TAVILY_API_KEY or BRAVE_API_KEY, or research your documents only." in (
        failed.error or ""
    )
    assert "ConnectError" not in (failed.error or "")  # the raw detail is folded away...
    (error,) = [e for e in events if e.type == "error"]
    assert "ConnectError" in error.data["detail"]  # ...into the error event's detail
    assert servers.search.calls == []


def test_providers_health_when_all_is_well(servers: Servers, tmp_path: Path, closed_port: int) -> None:
    settings = servers.settings(
        tmp_path,
        llm=True,
        search_providers=["searxng", "generic"],
        searxng_url=f"http://127.0.0.1:{closed_port}",
    )
    for client in _serve(settings):
        response = client.get("/api/providers/health")
        assert response.status_code == 200, response.text
        health = response.json()
    by_name = {p["name"]: p for p in health["search"]}
    assert health["web_search"] == "reachable"
    assert by_name["generic"]["reachable"] is True and by_name["searxng"]["reachable"] is False
    assert by_name["duckduckgo"] == {
        "name": "duckduckgo",
        "configured": False,
        "reachable": None,
        "detail": "not configured",
    }
    assert health["llm"]["status"] == "ok" and health["advice"] == []
    assert servers.search.calls == []  # probing searches nothing
    assert servers.llm.calls == []  # and asks the model nothing


@pytest.mark.parametrize(
    ("change", "status", "words"),
    [
        ("closed_port", "unreachable", "cannot be reached"),
        ("no_v1", "not_found", "Check OPENAI_BASE_URL"),
        ("wrong_key", "unauthorized", "Check OPENAI_API_KEY"),
        ("wrong_model", "unknown_model", "does not list the model 'no-such-model'"),
    ],
)
def test_providers_health_names_what_to_fix(
    servers: Servers, tmp_path: Path, closed_port: int, change: str, status: str, words: str
) -> None:
    overrides: dict[str, Any] = {"web_search_url": f"http://127.0.0.1:{closed_port}/search"}
    if change == "closed_port":
        overrides["openai_base_url"] = f"http://127.0.0.1:{closed_port}/v1"
    elif change == "no_v1":
        overrides["openai_base_url"] = servers.llm_url
    elif change == "wrong_key":
        servers.llm.api_key = "the-right-key"
    else:
        overrides["openai_model_name"] = "no-such-model"
    settings = servers.settings(tmp_path, llm=True, **overrides)
    for client in _serve(settings):
        health = client.get("/api/providers/health").json()
    assert health["web_search"] == "unreachable"
    assert health["llm"]["status"] == status and words in health["llm"]["message"]
    assert health["advice"][0].startswith("No web search provider is reachable from this server: generic")
    assert "research your documents only" in health["advice"][0]
    # what an API client can do: a collection (a server folder, corpus_dir, is refused to it with 422)
    assert "options.corpus" in health["advice"][0] and "corpus_dir" not in health["advice"][0]
    assert words in health["advice"][1] and "DEEPRESEARCH_ENGINE=extractive" in health["advice"][1]
    assert "test-key" not in str(health)


_OFFLINE = """
import asyncio
from config import Settings
from deepresearch.search import DuckDuckGoProvider, ProviderError
from deepresearch.search.health import explain_failures, probe_providers

async def main() -> None:
    probes = await probe_providers(Settings(search_providers=["duckduckgo"]))
    print("probe", [(p.name, p.reachable) for p in probes if p.configured])
    try:
        await DuckDuckGoProvider(timeout=5).search("heat pumps", 3)
    except ProviderError as exc:
        print("raw", exc.message)
        print("plain", explain_failures({"duckduckgo": exc.message}, "heat pumps").message)

asyncio.run(main())
"""


def test_without_any_network_the_default_provider_is_explained(tmp_path: Path) -> None:
    """The issue's machine: no network at all (its own empty network namespace), DuckDuckGo on."""
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    done = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", _OFFLINE],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert lines.get("probe") == "[('duckduckgo', False)]", done.stdout + done.stderr
    assert "raw" in lines, done.stdout + done.stderr  # whatever ddgs says about DNS, in its own words
    assert lines["plain"].startswith("No web search provider is reachable from this server: duckduckgo")


def test_a_round_that_found_nothing_says_why_in_plain_words() -> None:
    # a new user's `run ... --corpus EMPTY` offline printed ddgs's raw DNS error three times and advised
    # "Configure a search provider or a corpus" though a corpus was given
    dns = "DDGSException: DNSError: error sending request for url (https://search.example/): dns error"
    failures = [{"query": q, "round": 1, "failures": {"duckduckgo": dns}} for q in ("wick", "lamp wick")]
    said = nothing_found(failures, corpus=True)
    assert said.startswith("no search results at all: No web search provider is reachable from this server")
    assert "The corpus held nothing that matched." in said and "DDGSException" not in said, said
    assert "or a corpus" not in said
    # nothing failed: every query returned nothing
    assert "every query returned nothing" in nothing_found([], corpus=False)
