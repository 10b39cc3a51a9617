"""A completed run's LangGraph rows are compacted (store/savers.py compaction_statements): its business
checkpoints and its final state stay, LangGraph's bookkeeping for resuming mid-way goes. Everything a
person can still do with a finished run - read it, fork it, continue it from a checkpoint, ask a
follow-up - keeps working and repeats no call. On both backends, rows counted in the real database."""

from __future__ import annotations

import sqlite3

import httpx
import psycopg

from tests.api import wait_status
from tests.conftest import Servers
from tests.test_steering import QUESTION, repeated_calls


def langgraph_rows(database_url: str, thread_id: str) -> dict[str, int]:
    tables = {"sqlite": ("checkpoints", "writes"), "postgres": ("checkpoints", "checkpoint_writes")}
    if database_url.startswith("sqlite:///"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            count = lambda sql: conn.execute(sql, (thread_id,)).fetchone()[0]  # noqa: E731
            checkpoints, writes = tables["sqlite"]
            return {
                "checkpoints": count(f"SELECT COUNT(*) FROM {checkpoints} WHERE thread_id = ?"),
                "subgraph": count(
                    f"SELECT COUNT(*) FROM {checkpoints} WHERE thread_id = ? AND checkpoint_ns <> ''"
                ),
                "writes": count(f"SELECT COUNT(*) FROM {writes} WHERE thread_id = ?"),
            }
    with psycopg.connect(database_url) as conn:
        count = lambda sql: conn.execute(sql, (thread_id,)).fetchone()[0]  # type: ignore[index]  # noqa: E731
        checkpoints, writes = tables["postgres"]
        return {
            "checkpoints": count(f"SELECT COUNT(*) FROM {checkpoints} WHERE thread_id = %s"),
            "subgraph": count(
                f"SELECT COUNT(*) FROM {checkpoints} WHERE thread_id = %s AND checkpoint_ns <> ''"
            ),
            "writes": count(f"SELECT COUNT(*) FROM {writes} WHERE thread_id = %s"),
        }


def test_a_completed_run_keeps_what_people_can_still_use(
    api: httpx.Client, servers: Servers, database_url: str
) -> None:
    run_id = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
    run = wait_status(api, run_id, {"completed", "failed"})
    assert run["status"] == "completed", run["error"]
    index = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    assert len(index) >= 7
    rows = langgraph_rows(database_url, run["thread_id"])
    # the business checkpoints and the final one; no task writes, no subgraph checkpoints
    assert rows == {"checkpoints": len(index) + 1, "subgraph": 0, "writes": 0}, rows
    report = api.get(f"/api/runs/{run_id}/report")
    assert report.status_code == 200 and "## Sources" in report.text

    # every business checkpoint can still be previewed as a fork
    for checkpoint in index:
        body = {"checkpoint_id": checkpoint["checkpoint_id"], "patch": {}}
        preview = api.post(f"/api/runs/{run_id}/fork/preview", json=body)
        assert preview.status_code == 200, (checkpoint["stage"], preview.text)

    # continuing the run itself from an early checkpoint re-runs the later stages from their receipts
    screen = next(c for c in index if c["stage"] == "screen_evidence")
    calls = (len(servers.llm.calls), len(servers.search.calls), servers.site.total_hits)
    resumed = api.post(f"/api/runs/{run_id}/resume", json={"checkpoint_id": screen["checkpoint_id"]})
    assert resumed.status_code == 202, resumed.text
    again = wait_status(api, run_id, {"completed", "failed", "cancelled"})
    assert again["status"] == "completed", again["error"]
    assert (len(servers.llm.calls), len(servers.search.calls), servers.site.total_hits) == calls
    assert repeated_calls(servers) == {"llm": [], "search": [], "fetch": []}
    assert api.get(f"/api/runs/{run_id}/report").text == report.text
    rows = langgraph_rows(database_url, run["thread_id"])
    assert rows["writes"] == 0 and rows["subgraph"] == 0  # compacted again after the second completion

    # a follow-up reads the final state
    follow = api.post(f"/api/runs/{run_id}/follow-up", json={"question": f"{QUESTION} And on PostgreSQL?"})
    assert follow.status_code == 201, follow.text
    done = wait_status(api, follow.json()["run_id"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done["error"]
