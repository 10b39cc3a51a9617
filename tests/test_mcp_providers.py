"""MCP servers as research providers: a fixture MCP server (peers/mcp_server.py, written with the
SDK) started by the run as a real stdio subprocess, as the search provider and the fetcher. Calls are
counted at the fixture (one JSON line each), so "never repeated" is proved where the calls arrive."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult, ResourceLink, TextContent
from pydantic import ValidationError

from config import Settings, describe_settings_error
from deepresearch.engine.core import open_engine
from deepresearch.mcpclient.results import UnusableResult, fetched_text, search_hits
from deepresearch.mcpclient.servers import McpConfigError, load_servers
from deepresearch.service.runs import RunService
from deepresearch.store import EventRecord
from tests.conftest import Servers

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
RUN_SECONDS = 240.0


def fixture_server(calls: Path, site_url: str, research: dict[str, Any]) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": ["-m", "peers.mcp_server"],
        "cwd": str(REPO),
        "env": {"MCP_FIXTURE_CALLS": str(calls), "FIXTURE_SITE": site_url},
        "deepresearch": research,
    }


def write_servers(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp-servers.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def fixture_calls(calls: Path) -> list[tuple[str, str]]:
    """(tool, arguments as JSON) of every call the fixture received, in order."""
    if not calls.exists():
        return []
    lines = calls.read_text(encoding="utf-8").splitlines()
    return [(c["tool"], json.dumps(c["arguments"], sort_keys=True)) for c in map(json.loads, lines)]


async def test_a_run_searches_and_fetches_with_an_mcp_server_and_a_resume_repeats_none_of_its_calls(
    servers: Servers, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.jsonl"
    research = {
        "search": {"tool": "search", "max_results_arg": "limit"},
        "fetch": {"tool": "fetch", "urls": [f"{servers.site_url}/articles/*"]},
    }
    path = write_servers(tmp_path, {"fixture": fixture_server(calls, servers.site_url, research)})
    settings = servers.settings(tmp_path, search_providers=["mcp"], mcp_servers_file=path)
    seen: list[EventRecord] = []
    async with open_engine(settings) as engine:
        service = RunService(engine)

        async def pause_at_first_search(event: EventRecord) -> None:
            seen.append(event)
            if event.type == "tool_result" and event.data.get("tool_name") == "mcp.search":
                service.request_stop(event.run_id, "test pause")  # as Ctrl-C: in-flight calls finish

        service.on_event = pause_at_first_search
        run = await service.start(QUESTION)
        paused = await service.wait(run.run_id)
        assert paused.status == "cancelled", paused.error
        before = fixture_calls(calls)
        assert before and {tool for tool, _ in before} == {"search"}

        await service.resume(run.run_id)
        final = await service.wait(run.run_id)
        assert final.status == "completed", final.error
        receipts = await engine.store.list_receipts(run.run_id)

    made = fixture_calls(calls)
    assert made[: len(before)] == before
    assert "fetch" in {tool for tool, _ in made[len(before) :]}
    assert [call for call, count in Counter(made).items() if count > 1] == []  # nothing asked twice
    mcp_receipts = [r for r in receipts if r.tool_name.startswith("mcp.")]
    assert len(mcp_receipts) == len(made)
    assert {r.status for r in mcp_receipts} == {"succeeded"}
    assert servers.search.calls == []  # the scripted web search was never asked
    assert not [path for path in servers.site.hits if path.startswith("/articles/")]  # nor the site
    # the timeline names the server: sub-calls of the stages, with its name in the label
    mcp_events = [e for e in seen if e.type == "tool_call" and e.data["tool_name"].startswith("mcp.")]
    assert mcp_events and all(e.data["label"].startswith("mcp:fixture ") for e in mcp_events)
    assert all(e.data.get("parent_call_id") for e in mcp_events)
    assert {e.stage for e in mcp_events} == {"search_web", "fetch_sources"}
    folder = settings.workspace_dir / (final.artifact_dir or "")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    assert {s["extractor"] for s in sources} == {"mcp:fixture"}
    assert any(s["cited"] for s in sources)


async def test_mcp_servers_that_fail_or_time_out_are_provider_failures_and_the_run_goes_on(
    servers: Servers, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.jsonl"
    path = write_servers(
        tmp_path,
        {
            "missing": {
                "command": str(tmp_path / "no-such-server"),
                "deepresearch": {"search": {"tool": "x"}},
            },
            "broken": fixture_server(calls, servers.site_url, {"search": {"tool": "broken"}}),
            "slow": fixture_server(
                calls, servers.site_url, {"search": {"tool": "slow"}, "timeout_seconds": 1}
            ),
        },
    )
    settings = servers.settings(tmp_path, search_providers=["mcp", "generic"], mcp_servers_file=path)
    seen: list[EventRecord] = []
    async with open_engine(settings) as engine:
        service = RunService(engine, on_event=seen.append)
        run = await service.start(QUESTION)
        final = await service.wait(run.run_id)
    assert final.status == "completed", final.error
    searches = [
        e.data
        for e in seen
        if e.type == "tool_result" and e.data["tool_name"] == "web.search" and e.data.get("parent_call_id")
    ]
    assert searches
    for search in searches:
        failures = search["output"]["failures"]
        assert "could not connect" in failures["mcp:missing"] and "no-such-server" in failures["mcp:missing"]
        assert (
            "the tool answered an error: Error executing tool broken: scripted failure"
            in (failures["mcp:broken"])
        )
        assert failures["mcp:slow"] == "slow did not answer within 1s"
        assert search["output"]["providers"] == ["generic"]
    failed = [e.data for e in seen if e.type == "tool_result" and e.data["tool_name"] == "mcp.search"]
    assert failed and not any(e["ok"] for e in failed)


async def test_a_search_tool_that_answers_texts_gives_sources_without_a_web_address(
    servers: Servers, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.jsonl"
    path = write_servers(
        tmp_path, {"notes": fixture_server(calls, servers.site_url, {"search": {"tool": "notes"}})}
    )
    settings = servers.settings(tmp_path, search_providers=["mcp"], mcp_servers_file=path)
    async with open_engine(settings) as engine:
        service = RunService(engine)
        run = await service.start("How does durable execution avoid repeating side effects?")
        final = await service.wait(run.run_id)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    assert len(sources) == 1  # the same text for every query: stored once, fetched once
    assert sources[0]["url"].startswith("mcp://notes/text/")
    assert sources[0]["title"] == "Durable execution in practice"
    assert sources[0]["cited"]
    assert "idempotency key" in (folder / "deepresearch-report.md").read_text(encoding="utf-8")


# --- reading answers and the servers file (no process) ------------------------------------------
def result(*texts: str, structured: Any = None, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=t) for t in texts],
        structured_content=structured,
        is_error=error,
    )


def test_search_answers_in_many_shapes_become_hits() -> None:
    structured = {
        "data": {"results": [{"name": "A", "link": "https://a.example/x", "description": "about a"}]}
    }
    assert [(h.title, h.url, h.snippet) for h in search_hits(result(structured=structured))] == [
        ("A", "https://a.example/x", "about a")
    ]
    listed = json.dumps([{"title": "B", "url": "https://b.example/"}, "https://c.example/page"])
    assert [h.url for h in search_hits(result(listed))] == ["https://b.example/", "https://c.example/page"]
    blocks = (
        "Title: One\nURL: https://one.example/\nDescription: first\n\n2. Two https://two.example/ - second"
    )
    hits = search_hits(result(blocks))
    assert [(h.title, h.url, h.snippet) for h in hits] == [
        ("One", "https://one.example/", "first"),
        ("2. Two - second", "https://two.example/", ""),
    ]
    (text,) = search_hits(result("# Notes\n\nNo address here, only findings."))
    assert (text.url, text.title, text.text) == (None, "Notes", "# Notes\n\nNo address here, only findings.")
    link = ResourceLink(type="resource_link", uri="https://d.example/doc", name="D", description="dee")
    assert [(h.title, h.url) for h in search_hits(CallToolResult(content=[link]))] == [
        ("D", "https://d.example/doc")
    ]
    assert search_hits(result(structured={"results": []})) == []
    with pytest.raises(UnusableResult, match="answered an error: quota exceeded"):
        search_hits(result("quota exceeded", error=True))


def test_fetch_answers_become_a_title_and_a_text() -> None:
    assert fetched_text(result(structured={"title": "T", "markdown": "body"})) == ("T", "body")
    assert fetched_text(result("# Heading\n\nText.")) == ("Heading", "# Heading\n\nText.")
    assert fetched_text(result(json.dumps({"content": "c"}))) == ("", "c")
    with pytest.raises(UnusableResult, match="no text"):
        fetched_text(result("  "))


@pytest.mark.parametrize(
    ("servers", "problem"),
    [
        ({"a": {"command": "x", "url": "http://h/mcp", "deepresearch": {"search": {"tool": "t"}}}}, "either"),
        ({"a b": {"command": "x", "deepresearch": {"search": {"tool": "t"}}}}, "server name 'a b'"),
        ({"a": {"command": "x", "deepresearch": {}}}, "search or a fetch role"),
        ({"a": {"command": "x", "deepresearch": {"search": {"tool": "t", "q": 1}}}}, "deepresearch.search.q"),
        (
            {
                "a": {
                    "url": "http://h/mcp",
                    "headers": {"K": "${NO_SUCH_VARIABLE_X}"},
                    "deepresearch": {"fetch": {"tool": "f"}},
                }
            },
            "NO_SUCH_VARIABLE_X",
        ),
    ],
)
def test_a_servers_file_that_cannot_be_used_is_refused_with_its_reason(
    tmp_path: Path, servers: dict[str, Any], problem: str
) -> None:
    path = write_servers(tmp_path, servers)
    with pytest.raises(McpConfigError, match=problem):
        load_servers(path)
    with pytest.raises(ValidationError) as refused:
        Settings(mcp_servers_file=path)
    assert describe_settings_error(refused.value).startswith("DEEPRESEARCH_MCP_SERVERS_FILE")


def test_a_hosts_servers_file_is_read_as_it_is(tmp_path: Path) -> None:
    path = write_servers(
        tmp_path,
        {
            "host-only": {"command": "npx", "args": ["some-server"]},  # no role here: left alone
            "web": {
                "type": "http",
                "url": "https://mcp.example/mcp",
                "deepresearch": {"search": {"tool": "s"}},
            },
        },
    )
    (server,) = load_servers(path)
    assert (server.name, server.url, server.search and server.search.query_arg) == (
        "web",
        "https://mcp.example/mcp",
        "query",
    )
    assert server.fetch is None
