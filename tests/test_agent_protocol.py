"""The Agent Protocol (docs/agent-protocol.md) driven by LangGraph's official Python SDK against a real
runner on loopback, on SQLite and PostgreSQL: the scripted model, search and web servers count every
call, so "continues without repeating a completed call" is measured where the calls arrive."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import AuthenticationError, ConflictError, NotFoundError, UnprocessableEntityError

from config import Settings
from deepresearch.service.auth import Tokens
from deepresearch.store import open_persistence
from peers import serve_app
from runner import create_app
from stages import STAGE_KEYS
from tests.conftest import Servers
from tests.test_replicas import repeated_calls

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


@pytest.fixture
def settings(servers: Servers, tmp_path: Path, database_url: str, request: pytest.FixtureRequest) -> Settings:
    overrides: dict[str, Any] = getattr(request, "param", {})
    return servers.settings(tmp_path, llm=True, database_url=database_url, **overrides)


@pytest.fixture
def url(settings: Settings) -> Iterator[str]:
    with serve_app(create_app(settings), lifespan="on") as base_url:
        yield base_url


@pytest.fixture
async def client(url: str) -> AsyncIterator[LangGraphClient]:
    sdk = get_client(url=url, api_key=None)
    try:
        yield sdk
    finally:
        await sdk.http.client.aclose()


async def collect(parts: AsyncIterator[Any], limit: int = 5000) -> list[Any]:
    """Every part of a stream, bounded in count."""
    found = []
    async for part in parts:
        found.append(part)
        assert len(found) < limit
    return found


def research_id(state: dict[str, Any]) -> str:
    return str(state["values"]["run_id"])


def api_checkpoints(url: str, run_id: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=url, timeout=10) as api:
        return list(api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"])


def cited(state: dict[str, Any]) -> bool:
    """The state holds a written, verified report that cites sources its citation check supported."""
    report = state["values"].get("report") or {}
    check = report.get("citation_check") or {}
    return bool(report.get("verified") and report.get("sources_cited") and check.get("citations_supported"))


async def test_an_assistant_is_found_and_a_run_streams_each_business_stage(
    client: LangGraphClient, url: str
) -> None:
    found = await client.assistants.search(graph_id="deepresearch")
    assert [a["graph_id"] for a in found] == ["deepresearch"]
    assert (await client.assistants.get("deepresearch"))["assistant_id"] == found[0]["assistant_id"]
    drawing = await client.assistants.get_graph("deepresearch")
    assert set(STAGE_KEYS) <= {node["id"] for node in drawing["nodes"]}
    schemas = await client.assistants.get_schemas(found[0]["assistant_id"])
    assert "question" in schemas["input_schema"]["properties"]

    thread = await client.threads.create(metadata={"topic": "durability"})
    assert thread["status"] == "idle"
    parts = await collect(
        client.runs.stream(
            thread["thread_id"],
            "deepresearch",
            input={"question": QUESTION},
            stream_mode=["updates", "values", "custom", "messages-tuple"],
        )
    )
    assert parts[0].event == "metadata" and parts[0].data["run_id"]
    updates = [next(iter(p.data)) for p in parts if p.event == "updates"]
    state = await client.threads.get_state(thread["thread_id"])
    checkpoints = api_checkpoints(url, research_id(state))
    # one update per business checkpoint, in order, keyed by the stage's name
    assert updates == [c["stage"] for c in checkpoints]
    assert {"plan_research", "search_web", "fetch_sources", "write_report"} <= set(updates)
    # the report's text as the model writes it: message chunks of the write_report node
    chunks = [p.data for p in parts if p.event == "messages"]
    assert chunks and {meta["langgraph_node"] for _, meta in chunks} == {"write_report"}
    assert len("".join(chunk["content"] for chunk, _ in chunks)) > 200
    custom = {p.data["event"] for p in parts if p.event == "custom"}
    assert custom >= {"tool_call", "tool_result", "checkpoint"}
    assert [p.event for p in parts[-2:]] == ["values", "end"] and parts[-2].data["report"]["report_path"]
    assert cited(state) and state["next"] == []

    history = await client.threads.get_history(thread["thread_id"], limit=100)
    ids = [h["checkpoint"]["checkpoint_id"] for h in history]
    assert {c["checkpoint_id"] for c in checkpoints} <= set(ids)
    assert {h["metadata"].get("stage") for h in history} >= set(updates)
    runs = await client.runs.list(thread["thread_id"])
    assert [r["status"] for r in runs] == ["success"]
    assert (await client.threads.get(thread["thread_id"]))["status"] == "idle"
    assert [t["thread_id"] for t in await client.threads.search(metadata={"topic": "durability"})] == [
        thread["thread_id"]
    ]


SLOW = {"stage_delay_seconds": 0.4}


@pytest.mark.parametrize("settings", [SLOW], indirect=True)
async def test_cancel_after_two_stages_is_interrupted_and_a_null_input_continues_without_repeats(
    client: LangGraphClient, servers: Servers
) -> None:
    thread = await client.threads.create()
    run = await client.runs.create(thread["thread_id"], "deepresearch", input={"question": QUESTION})
    assert run["status"] in ("pending", "running")
    stages: list[str] = []
    async for part in client.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode="updates"):
        if part.event == "updates":
            stages.append(next(iter(part.data)))
        if len(stages) == 2:
            break
    await client.runs.cancel(thread["thread_id"], run["run_id"], wait=True, action="interrupt")
    stopped = await client.runs.get(thread["thread_id"], run["run_id"])
    assert stopped["status"] == "interrupted"
    assert stages == ["plan_research", "search_web"]
    history = await client.threads.get_history(thread["thread_id"], limit=100)
    assert {h["metadata"].get("stage") for h in history} >= set(stages)
    paused = await client.threads.get_state(thread["thread_id"])
    assert paused["next"] and not cited(paused)

    # input None: the research continues from its latest checkpoint, paying for nothing twice
    parts = await collect(
        client.runs.stream(thread["thread_id"], "deepresearch", input=None, stream_mode="updates")
    )
    assert parts[0].event == "metadata" and parts[0].data["run_id"] != run["run_id"]
    continued = [next(iter(p.data)) for p in parts if p.event == "updates"]
    assert continued[0] not in stages and "write_report" in continued
    assert cited(await client.threads.get_state(thread["thread_id"]))
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    runs = await client.runs.list(thread["thread_id"])
    assert [r["status"] for r in runs] == ["success", "interrupted"]


async def test_plan_review_is_an_interrupt_and_a_resume_command_completes_it(client: LangGraphClient) -> None:
    thread = await client.threads.create()
    question = {"question": QUESTION, "options": {"review_plan": True}}
    first = await collect(
        client.runs.stream(
            thread["thread_id"], "deepresearch", input=question, stream_mode=["values", "updates"]
        )
    )
    waiting = [p.data for p in first if p.event == "updates" and "__interrupt__" in p.data]
    assert waiting and waiting[0]["__interrupt__"][0]["value"]["kind"] == "plan_review"
    assert first[-2].event == "values" and first[-2].data["__interrupt__"][0]["value"]["plan"]["queries"]
    state = await client.threads.get_state(thread["thread_id"])
    assert state["interrupts"] and state["interrupts"][0]["value"]["kind"] == "plan_review"
    assert state["next"] == ["review_plan"]
    waiting_thread = await client.threads.get(thread["thread_id"])
    assert waiting_thread["status"] == "interrupted"
    [(_task, [interrupt])] = waiting_thread["interrupts"].items()
    assert interrupt["value"]["kind"] == "plan_review"

    answered = await client.runs.wait(
        thread["thread_id"], "deepresearch", command={"resume": {"action": "approve"}}
    )
    assert answered["report"]["verified"] and "__interrupt__" not in answered
    done = await client.threads.get_state(thread["thread_id"])
    assert cited(done) and done["values"]["stage_notes"]["plan_review"] == "approved"
    assert [r["status"] for r in await client.runs.list(thread["thread_id"])] == ["success", "interrupted"]


async def test_a_background_run_is_followed_to_its_end_by_join_stream(client: LangGraphClient) -> None:
    """Started as a chat client does (agent-chat-ui): the question as a human message; the state's
    `messages` end with the cited report."""
    thread = await client.threads.create()
    chat = {"messages": [{"type": "human", "content": QUESTION}]}
    run = await client.runs.create(thread["thread_id"], "deepresearch", input=chat)
    parts = await collect(client.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode=["values"]))
    assert parts[0].event == "metadata" and parts[-1].event == "end"
    assert parts[-2].data["report"]["verified"]
    question, report = parts[-2].data["messages"]
    assert (question["type"], question["content"]) == ("human", QUESTION)
    assert report["type"] == "ai" and "[1]" in report["content"]
    assert (await client.runs.get(thread["thread_id"], run["run_id"]))["status"] == "success"
    assert (await client.runs.join(thread["thread_id"], run["run_id"]))["report"]["verified"]


async def _create_tokens(settings: Settings, *names: str) -> list[str]:
    async with open_persistence(settings.resolved_database_url) as persistence:
        tokens = Tokens(persistence.store)
        return [(await tokens.create(name, admin=False))[1] for name in names]


@pytest.mark.parametrize("settings", [{"require_token": True}], indirect=True)
async def test_the_sdk_key_is_a_token_and_another_users_thread_is_not_found(settings: Settings) -> None:
    alice_key, bob_key = await _create_tokens(settings, "alice", "bob")
    with serve_app(create_app(settings), lifespan="on") as url:
        anonymous = get_client(url=url, api_key=None)
        alice = get_client(url=url, api_key=alice_key)
        bob = get_client(url=url, api_key=bob_key)
        stranger = get_client(url=url, api_key="drt_not_a_token")
        try:
            with pytest.raises(AuthenticationError):
                await anonymous.assistants.search()
            with pytest.raises(AuthenticationError):
                await stranger.threads.create()
            thread = await alice.threads.create(metadata={"owner": "alice"})
            final = await alice.runs.wait(thread["thread_id"], "deepresearch", input={"question": QUESTION})
            assert final["report"]["verified"]
            for attempt in (
                bob.threads.get(thread["thread_id"]),
                bob.threads.get_state(thread["thread_id"]),
                bob.threads.get_history(thread["thread_id"]),
                bob.runs.list(thread["thread_id"]),
                bob.runs.create(thread["thread_id"], "deepresearch", input=None),
                bob.threads.delete(thread["thread_id"]),
            ):
                with pytest.raises(NotFoundError):
                    await attempt
            assert await bob.threads.search() == []
            # the thread id is taken: bob cannot create it again, nor read it with if_exists do_nothing
            with pytest.raises(NotFoundError):
                await bob.threads.create(thread_id=thread["thread_id"], if_exists="do_nothing")
            assert [t["thread_id"] for t in await alice.threads.search()] == [thread["thread_id"]]
            runs = await alice.runs.list(thread["thread_id"])
            assert [r["status"] for r in runs] == ["success"]
            await alice.threads.delete(thread["thread_id"])
            with pytest.raises(NotFoundError):
                await alice.threads.get(thread["thread_id"])
        finally:
            for sdk in (anonymous, alice, bob, stranger):
                await sdk.http.client.aclose()


@pytest.mark.parametrize("settings", [SLOW], indirect=True)
async def test_a_busy_thread_rejects_or_interrupts_and_a_stream_resumes_after_its_last_event(
    client: LangGraphClient, servers: Servers
) -> None:
    with pytest.raises(NotFoundError):
        await client.assistants.get("another-graph")
    thread = await client.threads.create()
    tid = thread["thread_id"]
    with pytest.raises(ConflictError):  # no research yet: a first run needs the question
        await client.runs.create(tid, "deepresearch", input=None)
    first = await client.runs.create(tid, "deepresearch", input={"question": QUESTION})
    with pytest.raises(ConflictError):  # multitask_strategy reject (the default): the thread is busy
        await client.runs.create(tid, "deepresearch", input=None)
    with pytest.raises(UnprocessableEntityError):
        await client.runs.create(tid, "deepresearch", input=None, after_seconds=5)

    seen = None
    async for part in client.runs.join_stream(tid, first["run_id"], stream_mode="updates"):
        if part.event == "updates":
            seen = part
            break
    assert seen is not None and seen.id and next(iter(seen.data)) == "plan_research"
    # a reconnect with Last-Event-ID: the parts after it, never the ones before again
    after = []
    async for part in client.runs.join_stream(
        tid, first["run_id"], stream_mode="updates", last_event_id=seen.id
    ):
        after.append(part)
        if part.event == "updates":
            break
    assert after[0].event == "updates" and next(iter(after[0].data)) == "search_web"
    assert int(after[0].id) > int(seen.id)

    # multitask_strategy interrupt: the running one stops at its checkpoint, the new one continues it
    second = await client.runs.create(tid, "deepresearch", input=None, multitask_strategy="interrupt")
    assert (await client.runs.get(tid, first["run_id"]))["status"] == "interrupted"
    assert (await client.runs.join(tid, second["run_id"]))["report"]["verified"]
    assert [r["status"] for r in await client.runs.list(tid)] == ["success", "interrupted"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}


@pytest.mark.parametrize("settings", [SLOW], indirect=True)
async def test_a_run_past_its_deadline_times_out_and_continues_with_a_later_one(
    client: LangGraphClient, servers: Servers
) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    short = {"question": QUESTION, "options": {"budget": {"deadline_seconds": 1}}}
    final = await client.runs.wait(tid, "deepresearch", input=short)
    assert not (final.get("report") or {}).get("verified")
    assert [r["status"] for r in await client.runs.list(tid)] == ["timeout"]
    later = {"options": {"budget": {"deadline_seconds": 600}}}
    assert (await client.runs.wait(tid, "deepresearch", input=later))["report"]["verified"]
    assert [r["status"] for r in await client.runs.list(tid)] == ["success", "timeout"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}


def test_the_protocols_writes_pass_the_cross_site_checks_of_api(url: str) -> None:
    """A page on another site can send a form POST or a fetch with its Origin: both are refused on the
    protocol's paths as on /api; a read needs no browser header."""
    with httpx.Client(base_url=url, timeout=10) as raw:
        assert raw.get("/info").status_code == 200
        # what a browser sends with a form from another site: Sec-Fetch-Site says where the page is
        form = raw.post(
            "/threads",
            content=b"metadata=x",
            headers={"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"},
        )
        assert form.status_code == 403
        foreign = raw.post(
            "/runs/wait", json={"assistant_id": "deepresearch"}, headers={"Origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        assert raw.post("/threads", json={}).status_code == 200
