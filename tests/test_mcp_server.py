"""deepresearch as an MCP server, with the MCP SDK as the host, on both transports: ``deepresearch mcp`` as a
real subprocess over stdio, and ``/mcp`` of the runner on a real uvicorn port over streamable HTTP; research
against the scripted search server and site on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from config import Settings
from deepresearch.service.auth import Tokens
from deepresearch.store import open_persistence
from peers import serve_app
from runner import create_app
from tests.conftest import Servers
from tests.test_cli import REPO, cli_env

QUESTION = "How do durable workflow checkpoints keep long runs safe?"
TOOLS = {"research", "start_research", "get_research", "list_research", "cancel_research", "resume_research"}
RUN_SECONDS = 240.0
"""Upper bound of one research run (the machine may be shared and slow)."""
CITATION = re.compile(r"\[(\d{1,3})\]")


def assert_cited_report(run: dict[str, Any]) -> None:
    assert run["status"] == "completed", run
    report, sources = run["report_markdown"], run["sources"]
    cited = {int(n) for n in CITATION.findall(report.split("## Sources")[0])}
    assert cited, report
    assert cited <= {s["n"] for s in sources}
    assert {s["n"] for s in sources if s["cited"]} == cited
    assert all(s["url"].startswith("http") for s in sources)


async def poll(client: Client, run_id: str) -> dict[str, Any]:
    """get_research until the run stops (bounded by RUN_SECONDS)."""
    deadline = time.monotonic() + RUN_SECONDS
    while time.monotonic() < deadline:
        result = await client.call_tool("get_research", {"run_id": run_id})
        assert not result.is_error, result.content
        run = result.structured_content
        if run["status"] not in ("queued", "running"):
            return dict(run)
        await asyncio.sleep(0.2)
    raise AssertionError(f"run {run_id} did not stop within {RUN_SECONDS}s")


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "Traceback" not in text
    return text


async def resource_error(client: Client, uri: str) -> str:
    try:
        await client.read_resource(uri)
    except MCPError as exc:
        assert "Traceback" not in exc.message
        return exc.message
    raise AssertionError(f"{uri} was read")


def stdio_server(servers: Servers, tmp_path: Path) -> Client:
    env = cli_env(servers, tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agent", "mcp"], env=env, cwd=str(REPO)
    )
    return Client(params, read_timeout_seconds=RUN_SECONDS)


async def test_stdio_tools_start_poll_and_read_the_report(servers: Servers, tmp_path: Path) -> None:
    async with stdio_server(servers, tmp_path) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert all(tool.output_schema and tool.input_schema["type"] == "object" for tool in listed.values())
        assert "question" in listed["start_research"].input_schema["required"]
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {"deepresearch://runs/{run_id}/report", "deepresearch://runs/{run_id}/sources"}

        started = await client.call_tool("start_research", {"question": QUESTION})
        assert not started.is_error, started.content
        run_id = started.structured_content["run_id"]
        assert started.structured_content["status"] in ("queued", "running")
        run = await poll(client, run_id)
        assert_cited_report(run)

        report = (await client.read_resource(run["report_uri"])).contents[0]
        assert report.mime_type == "text/markdown"
        assert report.text == run["report_markdown"]
        sources = json.loads((await client.read_resource(run["sources_uri"])).contents[0].text)
        assert [s["url"] for s in sources["sources"]]
        listed_runs = (await client.call_tool("list_research", {})).structured_content["runs"]
        assert [r["run_id"] for r in listed_runs] == [run_id]


async def test_stdio_research_reports_progress_and_errors_are_plain(servers: Servers, tmp_path: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with stdio_server(servers, tmp_path) as client:
        result = await client.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)
        assert not result.is_error, result.content
        assert_cited_report(result.structured_content)
        assert len(progress) >= 3
        assert [value for value, _ in progress] == sorted({value for value, _ in progress})
        messages = [message for _, message in progress]
        assert "Search for sources" in messages
        assert any(m and m.startswith("search: ") for m in messages)

        missing = await client.call_tool("get_research", {"run_id": "0" * 32})
        assert "no run 00000000000000000000000000000000" in error_text(missing)
        assert "run_id" in error_text(await client.call_tool("get_research", {"run_id": "not-an-id"}))
        too_deep = {"question": QUESTION, "options": {"max_research_loops": 99}}
        assert "options.max_research_loops" in error_text(await client.call_tool("start_research", too_deep))
        assert "question" in error_text(await client.call_tool("start_research", {"question": " "}))
        assert "limit" in error_text(await client.call_tool("list_research", {"limit": 0}))
        completed = result.structured_content["run_id"]
        resumed = await client.call_tool("resume_research", {"run_id": completed})
        assert "already completed" in error_text(resumed)
        assert "no deepresearch-report.md" in await resource_error(
            client, "deepresearch://runs/" + "0" * 32 + "/report"
        )


# --- streamable HTTP ------------------------------------------------------------------------------
@asynccontextmanager
async def http_runner(
    servers: Servers, tmp_path: Path, **overrides: Any
) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """The runner on a real port, requiring tokens; yields its /mcp URL and the tokens of alice and bob."""
    settings = servers.settings(tmp_path, require_token=True, **overrides)
    tokens = await _tokens(settings, "alice", "bob")
    with serve_app(create_app(settings), lifespan="on") as base_url:
        yield f"{base_url}/mcp", tokens


async def _tokens(settings: Settings, *names: str) -> dict[str, str]:
    async with open_persistence(settings.resolved_database_url) as persistence:
        return {name: (await Tokens(persistence.store).create(name))[1] for name in names}


@asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=RUN_SECONDS) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=RUN_SECONDS) as client,
    ):
        yield client


async def test_http_requires_a_token_and_keeps_users_apart(servers: Servers, tmp_path: Path) -> None:
    async with http_runner(servers, tmp_path) as (url, tokens):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(timeout=30) as raw:
            assert (await raw.post(url, json=body, headers=headers)).status_code == 401
            wrong = headers | {"Authorization": "Bearer drt_00000000_" + "x" * 43}
            refused = await raw.post(url, json=body, headers=wrong)
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == "Bearer"
            foreign = headers | {
                "Authorization": f"Bearer {tokens['alice']}",
                "Origin": "https://evil.example",
            }
            assert (await raw.post(url, json=body, headers=foreign)).status_code == 403

        progress: list[str | None] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        async with http_client(url, tokens["alice"]) as alice:
            assert {tool.name for tool in (await alice.list_tools()).tools} == TOOLS
            result = await alice.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)
            assert not result.is_error, result.content
            run = result.structured_content
            assert_cited_report(run)
            assert len(progress) >= 3
            report = (await alice.read_resource(run["report_uri"])).contents[0].text
            assert report == run["report_markdown"]

        async with http_client(url, tokens["bob"]) as bob:
            assert "no run" in error_text(await bob.call_tool("get_research", {"run_id": run["run_id"]}))
            assert "no run" in error_text(await bob.call_tool("cancel_research", {"run_id": run["run_id"]}))
            assert (await bob.call_tool("list_research", {})).structured_content["runs"] == []
            assert "not yours" in await resource_error(bob, run["report_uri"])


async def test_http_host_that_disconnects_leaves_the_run_going(servers: Servers, tmp_path: Path) -> None:
    async with http_runner(servers, tmp_path, stage_delay_seconds=0.3) as (url, tokens):
        first: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if not first.done():
                first.set_result(message or "")

        async def research() -> None:
            async with http_client(url, tokens["alice"]) as client:
                await client.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)

        host = asyncio.create_task(research())
        await asyncio.wait_for(asyncio.shield(first), RUN_SECONDS)
        host.cancel()  # the host goes away mid-research: its connection closes
        await asyncio.wait([host], timeout=30)

        async with http_client(url, tokens["alice"]) as client:
            runs = (await client.call_tool("list_research", {})).structured_content["runs"]
            assert len(runs) == 1
            assert_cited_report(await poll(client, runs[0]["run_id"]))


async def test_http_cancel_and_resume_a_run(servers: Servers, tmp_path: Path) -> None:
    async with (
        http_runner(servers, tmp_path, stage_delay_seconds=0.5) as (url, tokens),
        http_client(url, tokens["alice"]) as client,
    ):
        started = await client.call_tool("start_research", {"question": QUESTION})
        run_id = started.structured_content["run_id"]
        cancelled = await client.call_tool("cancel_research", {"run_id": run_id})
        assert not cancelled.is_error, cancelled.content
        assert cancelled.structured_content["cancel_requested"] or (
            cancelled.structured_content["status"] == "cancelled"
        )
        stopped = await poll(client, run_id)
        assert stopped["status"] == "cancelled"
        assert "resume_research" in stopped["next_step"]
        resumed = await client.call_tool("resume_research", {"run_id": run_id})
        assert not resumed.is_error, resumed.content
        assert resumed.structured_content["resumed_from"] == "latest"
        assert_cited_report(await poll(client, run_id))
        unknown = await client.call_tool("resume_research", {"run_id": run_id, "checkpoint_id": "nope"})
        assert "nope" in error_text(unknown)
