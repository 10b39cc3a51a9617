"""The Agent Protocol's steering, driven by LangGraph's official Python SDK on SQLite and PostgreSQL
(fixtures of tests/test_agent_protocol.py): `threads.update_state` forks the research without starting it
and a null-input run continues the fork paying only for what changed; `multitask_strategy` enqueue and
rollback, `runs.cancel(action="rollback")`; a chat's second message is a follow-up; `on_completion:
delete`. The scripted peers count every call, so "pays only for what changed" is measured where the calls
arrive."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from stages import STAGE_KEYS
from tests.conftest import Servers
from tests.test_agent_protocol import (
    QUESTION,
    SLOW,
    api_checkpoints,
    cited,
    client,
    collect,
    research_id,
    settings,
    url,
)
from tests.test_replicas import repeated_calls

__all__ = ["client", "settings", "url"]  # the SDK's fixtures, shared with tests/test_agent_protocol.py

EXTRA = "sqlite wal busy readers"
FOLLOW_UP = "How do SQLite checkpoints copy write-ahead log frames back into the database?"


def api_run(url: str, run_id: str) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=10) as api:
        return api.get(f"/api/runs/{run_id}")


async def updates_until(client: LangGraphClient, tid: str, run_id: str, count: int) -> list[str]:
    """The stage names of the run's first `count` updates (its stream followed, then left)."""
    stages: list[str] = []
    async for part in client.runs.join_stream(tid, run_id, stream_mode="updates"):
        if part.event == "updates" and "__interrupt__" not in part.data:
            stages.append(next(iter(part.data)))
        if len(stages) >= count:
            break
    return stages


async def test_update_state_forks_without_starting_and_a_null_input_pays_only_for_the_change(
    client: LangGraphClient, url: str, servers: Servers
) -> None:
    thread = await client.threads.create()
    tid = thread["thread_id"]
    with pytest.raises(ConflictError):  # no research yet: nothing to update
        await client.threads.update_state(tid, {"plan": {}})
    assert (await client.runs.wait(tid, "deepresearch", input={"question": QUESTION}))["report"]["verified"]
    original = research_id(await client.threads.get_state(tid))
    history = await client.threads.get_history(tid, limit=100)
    planned = next(h for h in history if h["metadata"].get("stage") == "plan_research")
    checkpoint_id = planned["checkpoint"]["checkpoint_id"]
    plan = planned["values"]["plan"]
    refused = [
        ({"report": {"markdown": "mine"}}, {}),  # what the research wrote is not an input
        ({"plan": {**plan, "topic": "another"}}, {}),  # the planner's own fields
        ({"options": {"review_plan": "yes"}}, {}),  # options are checked as in POST /api/runs
        ({"plan": plan}, {"as_node": "write_report"}),  # the checkpoint's values are plan_research's
    ]
    for values, extra in refused:
        with pytest.raises(UnprocessableEntityError):
            await client.threads.update_state(tid, values, checkpoint_id=checkpoint_id, **extra)
    with pytest.raises(NotFoundError):
        await client.threads.update_state(tid, {"plan": plan}, checkpoint_id="not-a-checkpoint")

    searched = [q for _, q in servers.search.calls]
    llm_calls = len(servers.llm.calls)
    edited = {**plan, "queries": [*plan["queries"], EXTRA]}
    updated = await client.threads.update_state(
        tid, {"plan": edited, "question": QUESTION}, checkpoint_id=checkpoint_id, as_node="plan_research"
    )
    ref = updated["checkpoint"]
    assert ref["thread_id"] == tid and ref["checkpoint_id"] and ref["checkpoint_ns"] == ""
    # the thread is the fork now, held: nothing runs until a run continues it
    state = await client.threads.get_state(tid)
    fork = research_id(state)
    assert fork != original and state["checkpoint"]["checkpoint_id"] == ref["checkpoint_id"]
    assert EXTRA in state["values"]["plan"]["queries"] and state["next"]
    assert (await client.threads.get(tid))["status"] == "idle"
    assert api_run(url, fork).json()["forked_from"] == {"run_id": original, "checkpoint_id": checkpoint_id}
    await asyncio.sleep(0.5)
    assert api_run(url, fork).json()["status"] == "cancelled" and len(servers.llm.calls) == llm_calls

    parts = await collect(client.runs.stream(tid, "deepresearch", input=None, stream_mode="updates"))
    stages = [next(iter(p.data)) for p in parts if p.event == "updates"]
    assert stages[0] == "search_web" and "write_report" in stages
    assert cited(await client.threads.get_state(tid))
    # only the new query reached the search server; every other call was answered from receipts
    assert [q for _, q in servers.search.calls] == [*searched, EXTRA]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    assert api_run(url, original).json()["status"] == "completed"  # the original is untouched
    # deleting the thread deletes both researches it had
    await client.threads.delete(tid)
    assert api_run(url, original).status_code == 404 and api_run(url, fork).status_code == 404


@pytest.mark.parametrize("settings", [SLOW], indirect=True)
async def test_an_enqueued_run_waits_as_pending_then_continues_the_research(
    client: LangGraphClient, servers: Servers
) -> None:
    tid = (await client.threads.create())["thread_id"]
    first = await client.runs.create(tid, "deepresearch", input={"question": QUESTION})
    assert await updates_until(client, tid, first["run_id"], 1) == ["plan_research"]
    original = research_id(await client.threads.get_state(tid))
    queued = await client.runs.create(tid, "deepresearch", input=None, multitask_strategy="enqueue")
    assert queued["status"] == "pending"
    # a second one, cancelled with rollback while it waits: it never runs and is gone
    dropped = await client.runs.create(tid, "deepresearch", input=None, multitask_strategy="enqueue")
    await client.runs.cancel(tid, dropped["run_id"], action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, dropped["run_id"])
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "pending"
    # a question enqueued behind it: its turn comes after the continuation, on the completed research
    asked = {"messages": [{"type": "human", "content": FOLLOW_UP}]}
    follow = await client.runs.create(tid, "deepresearch", input=asked, multitask_strategy="enqueue")
    await client.runs.cancel(tid, first["run_id"], wait=True)
    # the stop is the queued run's turn: it continues the research from its checkpoint
    parts = await collect(client.runs.join_stream(tid, queued["run_id"], stream_mode="updates"))
    assert parts[0].event == "metadata" and parts[-1].event == "end"
    continued = [next(iter(p.data)) for p in parts if p.event == "updates"]
    assert continued and "plan_research" not in continued and "write_report" in continued
    answered = await client.runs.join(tid, follow["run_id"])
    assert answered["report"]["verified"] and answered["run_id"] != original
    assert [m["type"] for m in answered["messages"]] == ["human", "ai", "human", "ai"]
    statuses = [r["status"] for r in await client.runs.list(tid)]
    assert statuses == ["success", "success", "interrupted"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}


@pytest.mark.parametrize("settings", [SLOW], indirect=True)
async def test_rollback_deletes_the_interrupted_run_and_a_chat_message_asks_a_follow_up(
    client: LangGraphClient, url: str, servers: Servers
) -> None:
    tid = (await client.threads.create())["thread_id"]
    chat = {"messages": [{"type": "human", "content": QUESTION}]}
    first = await client.runs.create(tid, "deepresearch", input=chat)
    assert await updates_until(client, tid, first["run_id"], 1) == ["plan_research"]
    second = await client.runs.create(tid, "deepresearch", input=None, multitask_strategy="rollback")
    with pytest.raises(NotFoundError):  # as LangGraph does: the run it interrupted is gone
        await client.runs.get(tid, first["run_id"])
    assert (await client.runs.join(tid, second["run_id"]))["report"]["verified"]
    assert [r["run_id"] for r in await client.runs.list(tid)] == [second["run_id"]]
    original = research_id(await client.threads.get_state(tid))

    # the chat's next message on the finished research: a follow-up (the thread moves to it)
    asked = {"messages": [{"type": "human", "content": FOLLOW_UP}]}
    third = await client.runs.create(tid, "deepresearch", input=asked)
    assert await updates_until(client, tid, third["run_id"], 1) == ["plan_research"]
    await client.runs.cancel(tid, third["run_id"], wait=True, action="rollback")
    with pytest.raises(NotFoundError):
        await client.runs.get(tid, third["run_id"])
    final = await client.runs.wait(tid, "deepresearch", input=None)
    assert final["report"]["verified"] and final["run_id"] != original
    assert api_run(url, final["run_id"]).json()["follow_up_of"] == original
    kinds = [(m["type"], m["content"][:40]) for m in final["messages"]]
    assert kinds[0] == ("human", QUESTION[:40]) and kinds[2] == ("human", FOLLOW_UP[:40])
    assert [k for k, _ in kinds] == ["human", "ai", "human", "ai"]
    assert [r["status"] for r in await client.runs.list(tid)] == ["success", "success"]
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    # a question while the research waits for its plan review is not a follow-up: 409
    review = {"question": QUESTION, "options": {"review_plan": True}}
    waiting = (await client.threads.create())["thread_id"]
    await client.runs.wait(waiting, "deepresearch", input=review)
    with pytest.raises(ConflictError):
        await client.runs.create(waiting, "deepresearch", input={"question": FOLLOW_UP})


async def test_a_stateless_run_with_on_completion_delete_leaves_no_thread(
    client: LangGraphClient, url: str
) -> None:
    final = await client.runs.wait(None, "deepresearch", input={"question": QUESTION}, on_completion="delete")
    assert final["report"]["verified"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # deleted once the run has ended, just after the answer
        if not await client.threads.search():
            break
        await asyncio.sleep(0.1)
    assert await client.threads.search() == []
    assert api_run(url, final["run_id"]).status_code == 404
    kept = await client.runs.wait(None, "deepresearch", input={"question": QUESTION})
    assert len(await client.threads.search()) == 1 and api_run(url, kept["run_id"]).status_code == 200


async def test_checkpoints_tasks_debug_and_subgraph_namespaces_stream_from_the_event_log(
    client: LangGraphClient, url: str
) -> None:
    tid = (await client.threads.create())["thread_id"]
    modes = ["checkpoints", "tasks", "debug", "custom"]
    parts = await collect(
        client.runs.stream(
            tid, "deepresearch", input={"question": QUESTION}, stream_mode=modes, stream_subgraphs=True
        )
    )
    state = await client.threads.get_state(tid)
    business = [c["checkpoint_id"] for c in api_checkpoints(url, research_id(state))]
    written = [p.data["config"]["configurable"]["checkpoint_id"] for p in parts if p.event == "checkpoints"]
    assert set(business) <= set(written) and written[-1] == state["checkpoint"]["checkpoint_id"]
    last = next(p.data for p in reversed(parts) if p.event == "checkpoints")
    assert last["values"]["report"]["verified"] and last["next"] == []
    assert last["parent_config"]["configurable"]["thread_id"] == tid
    # each business stage's task, as it starts and as it ends, with the same id
    tasks = [p.data for p in parts if p.event == "tasks"]
    started = {t["name"]: t["id"] for t in tasks if "triggers" in t}
    ended = {t["name"]: t["id"] for t in tasks if "result" in t}
    assert set(STAGE_KEYS) <= set(started) and started == ended
    debug = {p.data["type"] for p in parts if p.event == "debug"}
    assert debug == {"checkpoint", "task", "task_result"}
    # what the subgraph stages sent from inside, in their namespace (the stage's task id)
    namespaced = {p.event for p in parts if p.event.startswith("custom|")}
    assert f"custom|search_web:{started['search_web']}" in namespaced
    assert namespaced <= {f"custom|{name}:{started[name]}" for name in ("search_web", "analyze_findings")}
    plain = [p.data for p in parts if p.event == "custom"]
    assert plain and not [d for d in plain if d["stage"] == "search_web" and d.get("parent_call_id")]


async def test_a_plan_waiting_for_review_is_edited_by_a_state_update_then_reviewed_again(
    client: LangGraphClient, url: str, servers: Servers
) -> None:
    """Studio's human-in-the-loop edit: the run stops for its plan review, the person edits the plan in
    the state, the next run asks for the review of the edited plan, and approving it completes the
    research; the research that waited is cancelled, its fork answers instead."""
    tid = (await client.threads.create())["thread_id"]
    review = {"question": QUESTION, "options": {"review_plan": True}}
    waiting = await client.runs.wait(tid, "deepresearch", input=review)
    plan = waiting["__interrupt__"][0]["value"]["plan"]
    original = research_id(await client.threads.get_state(tid))
    state = await client.threads.get_state(tid)
    dropped = state["values"]["plan"]["queries"][-1]
    edited = {**state["values"]["plan"], "queries": state["values"]["plan"]["queries"][:-1]}
    await client.threads.update_state(tid, {"plan": edited})
    assert api_run(url, original).json()["status"] == "cancelled"
    assert dropped not in (await client.threads.get_state(tid))["values"]["plan"]["queries"]
    again = await client.runs.wait(tid, "deepresearch", input=None)
    asked = again["__interrupt__"][0]["value"]["plan"]["queries"]
    assert dropped in plan["queries"] and dropped not in asked
    done = await client.runs.wait(tid, "deepresearch", command={"resume": {"action": "approve"}})
    assert done["report"]["verified"] and done["run_id"] != original
    assert dropped not in {q for _, q in servers.search.calls}
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
