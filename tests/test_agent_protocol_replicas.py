"""The Agent Protocol against two runners on one database (SQLite file, PostgreSQL), each a real
`deepresearch serve` process: a research started through replica A is followed, cancelled and continued
through replica B with LangGraph's official SDK, and no completed call reaches a scripted peer twice."""

from __future__ import annotations

from pathlib import Path

from langgraph_sdk import get_client

from tests.conftest import Servers
from tests.live import live_server, server_env
from tests.test_agent_protocol import QUESTION, cited, collect
from tests.test_replicas import repeated_calls


async def test_a_thread_started_on_one_replica_is_cancelled_and_continued_on_the_other(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    env = server_env(
        servers, tmp_path, DEEPRESEARCH_DATABASE_URL=database_url, DEEPRESEARCH_STAGE_DELAY_SECONDS="0.4"
    )
    with live_server(env) as (url_a, _), live_server(env) as (url_b, _):
        a = get_client(url=url_a, api_key=None)
        b = get_client(url=url_b, api_key=None)
        try:
            thread = await a.threads.create(metadata={"replica": "a"})
            assert (await b.threads.get(thread["thread_id"]))["metadata"] == {"replica": "a"}
            run = await a.runs.create(thread["thread_id"], "deepresearch", input={"question": QUESTION})
            stages: list[str] = []
            async for part in b.runs.join_stream(thread["thread_id"], run["run_id"], stream_mode="updates"):
                if part.event == "updates":
                    stages.append(next(iter(part.data)))
                if len(stages) == 2:
                    break
            # B asks; A, executing it, stops at its nearest checkpoint; B answers once it has stopped
            await b.runs.cancel(thread["thread_id"], run["run_id"], wait=True, action="interrupt")
            assert (await b.runs.get(thread["thread_id"], run["run_id"]))["status"] == "interrupted"
            history = await b.threads.get_history(thread["thread_id"], limit=100)
            assert {h["metadata"].get("stage") for h in history} >= {"plan_research", "search_web"}

            parts = await collect(
                b.runs.stream(
                    thread["thread_id"], "deepresearch", input=None, stream_mode=["updates", "values"]
                )
            )
            assert parts[0].event == "metadata" and parts[-1].event == "end"
            assert "write_report" in [next(iter(p.data)) for p in parts if p.event == "updates"]
            assert cited(await a.threads.get_state(thread["thread_id"]))
            runs = await a.runs.list(thread["thread_id"])
            assert [r["status"] for r in runs] == ["success", "interrupted"]
        finally:
            for sdk in (a, b):
                await sdk.http.client.aclose()
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
