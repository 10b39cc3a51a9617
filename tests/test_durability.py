"""Durability: cancel, resume, fork, failure, retries - proven by counting calls at the scripted servers."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from deepresearch.engine.core import graph_config, open_engine
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import EventRecord
from stages import FINAL_ARTIFACTS
from tests.conftest import Servers, execute_and_pause_after

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def article_hits(servers: Servers) -> Counter[str]:
    return Counter({path: n for path, n in servers.site.hits.items() if path.startswith("/articles/")})


def stage_calls(events: list[EventRecord]) -> list[str]:
    """Business stages that started (a stage-level tool_call) in these events."""
    return [
        e.stage or ""
        for e in events
        if e.type == "tool_call" and e.data.get("parent_call_id") is None and "title" in e.data
    ]


def sub_results(events: list[EventRecord], tool_name: str) -> list[EventRecord]:
    return [
        e
        for e in events
        if e.type == "tool_result" and e.data.get("tool_name") == tool_name and "parent_call_id" in e.data
    ]


async def test_cancel_after_fetch_then_resume_repeats_nothing(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        first = await execute_and_pause_after(engine, run.run_id, "fetch_sources")
        assert first.status == "cancelled", first.error
        snapshot = await engine.graph.aget_state(graph_config(run.thread_id))
        assert snapshot.next == ("screen_evidence",)
        searches, hits, llm_calls = (
            len(servers.search.calls),
            article_hits(servers),
            servers.llm.calls_by_prompt(),
        )
        assert searches == 3 and sum(hits.values()) >= 2 and llm_calls == Counter({"plan/v1": 1})

        resumed_events: list[EventRecord] = []
        final = await engine.execute(run.run_id, on_event=resumed_events.append)
        assert final.status == "completed", final.error
        assert len(servers.search.calls) == searches
        assert article_hits(servers) == hits
        after = servers.llm.calls_by_prompt()
        assert after["plan/v1"] == 1
        assert after["screen/v1"] >= 1 and after["report/v1"] == 1
        started = stage_calls(resumed_events)
        assert started[0] == "screen_evidence"
        assert not {"plan_research", "search_web", "fetch_sources"} & set(started)
        assert resumed_events[0].data["resumed"] is True
        index = await engine.store.list_checkpoints(run.run_id)
        assert [c.stage for c in index][:3] == ["plan_research", "search_web", "fetch_sources"]
        assert all(c.stage and c.checkpoint_id for c in index)


async def test_cancel_mid_fan_out_reruns_only_unfinished_branches(servers: Servers, tmp_path: Path) -> None:
    queries = [
        "sqlite wal readers",
        "durable workflow checkpoints",
        "long runs kept safe",
        "sqlite checkpoint durable",
    ]
    servers.responder.queries = queries
    servers.search.latency = 0.4
    settings = servers.settings(tmp_path, llm=True, queries_per_round=4, search_concurrency=2)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        cancel = CancelSignal(run.run_id, engine.store)

        def cancel_on_first_search(event: EventRecord) -> None:
            # the first search is in flight (0.4 s), and so is the second, which took the other slot
            call = event.type == "tool_call" and event.data.get("tool_name") == "web.search"
            if call and event.data.get("parent_call_id"):  # a search, not the stage's own tool_call
                cancel.request("test cancel mid fan-out")

        first = await engine.execute(run.run_id, cancel=cancel, on_event=cancel_on_first_search)
        assert first.status == "cancelled", first.error
        first_calls = [q for _, q in servers.search.calls]
        assert servers.search.max_in_flight == 2  # search_concurrency bounds the fan-out
        # two slots: the first two queries ran; the other two never reached the server
        assert len(first_calls) == 2, first_calls
        receipts = await engine.store.list_receipts(run.run_id, "deepresearch:web_search:v1", "succeeded")
        assert len(receipts) == 2

        resumed: list[EventRecord] = []
        final = await engine.execute(run.run_id, on_event=resumed.append)
        assert final.status == "completed", final.error
        per_query = Counter(q for _, q in servers.search.calls)
        assert per_query == Counter(dict.fromkeys(queries, 1)), per_query
        # completed branches were not executed again at all (their writes were kept); unfinished ones ran
        rerun = {
            e.data["label"].removeprefix("search: "): e.data["reused"]
            for e in sub_results(resumed, "web.search")
        }
        assert set(rerun) >= set(queries) - set(first_calls)
        assert not any(rerun[q] for q in set(queries) - set(first_calls))
        assert any(q not in rerun for q in first_calls), "a finished branch ran again"
        state = await engine.graph.aget_state(graph_config(run.thread_id))
        assert set(state.values["queries_done"]) == set(queries)


async def test_search_fan_out_is_parallel(servers: Servers, tmp_path: Path) -> None:
    servers.responder.queries = ["sqlite wal", "durable checkpoints", "long runs safe", "sqlite durable"]
    servers.search.latency = 0.6
    settings = servers.settings(tmp_path, llm=True, queries_per_round=4, search_concurrency=4)
    timings: dict[str, float] = {}

    def clock(event: EventRecord) -> None:
        if event.stage == "search_web" and "parent_call_id" not in event.data:
            timings.setdefault(event.type, time.monotonic())

    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=clock)
    assert final.status == "completed", final.error
    assert len(servers.search.calls) == 4
    # all four queries were in flight at the search server at the same moment (wall-clock numbers
    # for the fan-out are measured by bench/fanout.py, not asserted here)
    assert servers.search.max_in_flight == 4
    assert timings["tool_result"] > timings["tool_call"]


async def test_loop_cap_limits_research_rounds(servers: Servers, tmp_path: Path) -> None:
    servers.responder.reflection_sufficient = False
    settings = servers.settings(tmp_path, llm=True, max_research_loops=2)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id)
        state = (await engine.graph.aget_state(graph_config(run.thread_id))).values
        index = await engine.store.list_checkpoints(run.run_id)
    assert final.status == "completed", final.error
    assert state["round"] == 2
    assert [c.stage for c in index].count("search_web") == 2
    # the reflection after the last allowed round does not ask the model: the cap decides
    assert servers.llm.calls_by_prompt()["reflect/v1"] == 1
    assert state["reflection"]["reason"].startswith("loop cap reached")
    assert any(q.startswith("follow-up") for q in state["queries_done"])


async def test_messy_json_is_repaired_without_reask(servers: Servers, tmp_path: Path) -> None:
    servers.responder.plan_wrapper = (
        "<think>Let me plan.</think>\nSure! ```json\n{json}\n``` Hope this helps."
    )
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert servers.llm.calls_by_prompt()["plan/v1"] == 1


async def test_hopeless_json_fails_the_stage_clearly_then_resumes(servers: Servers, tmp_path: Path) -> None:
    """With DEEPRESEARCH_LLM_FALLBACK=fail an unusable answer fails the stage (resumable); the default,
    extractive, is tested in test_fallbacks.py."""
    servers.responder.hopeless_plan = True
    settings = servers.settings(tmp_path, llm=True, llm_fallback="fail")
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        events: list[EventRecord] = []
        failed = await engine.execute(run.run_id, on_event=events.append)
        assert failed.status == "failed"
        assert failed.error and failed.error.startswith("plan_research:")
        assert "ResearchPlan" in failed.error and "Traceback" not in failed.error
        assert servers.llm.calls_by_prompt()["plan/v1"] == 2  # first answer + one re-ask
        assert any(e.type == "error" and e.data["resumable"] for e in events)

        servers.responder.hopeless_plan = False
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert servers.llm.calls_by_prompt()["plan/v1"] == 3


async def test_rate_limit_and_server_error_are_retried(servers: Servers, tmp_path: Path) -> None:
    servers.llm.fail_next(429, retry_after=0.1)
    servers.llm.fail_next(500)
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id)
        plan_receipts = await engine.store.list_receipts(run.run_id, "deepresearch:plan:v1")
    assert final.status == "completed", final.error
    assert servers.llm.calls_by_prompt()["plan/v1"] == 3
    assert [r.status for r in plan_receipts if r.tool_name == "llm.structured"] == ["succeeded"]


def _file_ids(base: Path) -> dict[str, tuple[int, int]]:
    return {name: ((base / name).stat().st_ino, (base / name).stat().st_mtime_ns) for name in FINAL_ARTIFACTS}


async def test_artifacts_are_written_exactly_once_across_a_resume(servers: Servers, tmp_path: Path) -> None:
    crashing = servers.settings(tmp_path, llm=True, fail_stage="write_report:end")
    async with open_engine(crashing) as engine:
        run = await engine.create_run(QUESTION)
        failed = await engine.execute(run.run_id)
    assert failed.status == "failed" and "write_report" in (failed.error or "")
    base = crashing.workspace_dir / (failed.artifact_dir or "")
    before = _file_ids(base)
    llm_before = servers.llm.calls_by_prompt()

    healthy = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(healthy) as engine:
        final = await engine.execute(run.run_id, on_event=events.append)
        writes = await engine.store.list_receipts(run.run_id, "deepresearch:report:v1")
    assert final.status == "completed", final.error
    assert _file_ids(base) == before, "a final artifact was rewritten on resume"
    assert servers.llm.calls_by_prompt() == llm_before, "the report was asked for twice"
    write_results = sub_results(events, "workspace.write")
    assert len(write_results) == len(FINAL_ARTIFACTS) and all(e.data["reused"] for e in write_results)
    assert sorted(
        r.args["path"].rsplit("/", 1)[-1] for r in writes if r.tool_name == "workspace.write"
    ) == sorted(FINAL_ARTIFACTS)


async def test_fork_from_an_older_checkpoint_reuses_receipts(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        done = await engine.execute(run.run_id)
        assert done.status == "completed", done.error
        index = await engine.store.list_checkpoints(run.run_id)
        llm_before, searches, hits = (
            servers.llm.calls_by_prompt(),
            len(servers.search.calls),
            article_hits(servers),
        )
        screen = next(c for c in index if c.stage == "screen_evidence")

        events: list[EventRecord] = []
        forked = await engine.execute(
            run.run_id,
            checkpoint_config=graph_config(screen.thread_id, screen.checkpoint_id, screen.checkpoint_ns),
            on_event=events.append,
        )
        assert forked.status == "completed", forked.error
        after = await engine.store.list_checkpoints(run.run_id)
    assert servers.llm.calls_by_prompt() == llm_before
    assert len(servers.search.calls) == searches and article_hits(servers) == hits
    assert stage_calls(events)[0] == "analyze_findings"
    assert len(after) > len(index)
    new = [c for c in after if c.checkpoint_id not in {i.checkpoint_id for i in index}]
    assert new[0].stage == "analyze_findings"
    reused = [e for e in events if e.type == "tool_result" and "parent_call_id" in e.data]
    assert reused and all(e.data["reused"] for e in reused)
    assert forked.usage["reused_calls"] >= len(reused)


async def test_injected_failure_resumes_without_repeating(servers: Servers, tmp_path: Path) -> None:
    failing = servers.settings(tmp_path, fail_stage="screen_evidence")
    async with open_engine(failing) as engine:
        run = await engine.create_run(QUESTION)
        failed = await engine.execute(run.run_id)
    assert failed.status == "failed" and "screen_evidence" in (failed.error or "")
    searches, hits = len(servers.search.calls), article_hits(servers)
    async with open_engine(servers.settings(tmp_path)) as engine:
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert len(servers.search.calls) == searches and article_hits(servers) == hits


async def test_all_search_providers_failing_fails_the_stage_and_resumes(
    servers: Servers, tmp_path: Path
) -> None:
    servers.search.fail_next(503, times=3)
    settings = servers.settings(tmp_path)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        failed = await engine.execute(run.run_id)
        assert failed.status == "failed"
        assert "search_web" in (failed.error or "") and "generic" in (failed.error or "")
        assert "503" in (failed.error or "")
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error


async def test_blocked_urls_in_results_are_recorded_not_fetched(servers: Servers, tmp_path: Path) -> None:
    default = servers.search.default_results

    def with_metadata_url(query: str, n: int) -> list[dict[str, Any]]:
        return [
            {"title": "metadata", "url": "http://169.254.169.254/latest/meta-data", "snippet": "x"},
            *default(query, n),
        ]

    servers.search.results_for = with_metadata_url
    settings = servers.settings(tmp_path, sources_to_fetch=5)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    base = settings.workspace_dir / (final.artifact_dir or "")
    fetched = json.loads((base / "sources-fetched.json").read_text())
    blocked = [f for f in fetched["failures"] if "169.254.169.254" in f["url"]]
    assert blocked and blocked[0]["reason"] == "blocked"
    assert all("169.254" not in s["url"] for s in json.loads((base / "sources.json").read_text())["sources"])


async def test_budget_stops_at_a_checkpoint_and_resumes_with_a_higher_limit(
    servers: Servers, tmp_path: Path
) -> None:
    from deepresearch.options import ResearchOptions, RunBudget

    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        options = settings.default_options().model_copy(update={"budget": RunBudget(max_search_calls=2)})
        run = await engine.create_run(QUESTION, options)
        events: list[EventRecord] = []
        stopped = await engine.execute(run.run_id, on_event=events.append)
        assert stopped.status == "cancelled"
        assert stopped.error and "search calls limit of 2" in stopped.error
        assert len(servers.search.calls) == 2
        assert events[-1].type == "end" and "budget" in events[-1].data["error"]

        higher = ResearchOptions.model_validate({**stopped.options, "budget": {"max_search_calls": 10}})
        await engine.store.update_run(run.run_id, options=higher.model_dump())
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert len(servers.search.calls) == 3  # the two recorded searches were not repeated


async def test_token_budget_counts_work_done_before_a_resume(servers: Servers, tmp_path: Path) -> None:
    from deepresearch.options import RunBudget

    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        options = settings.default_options().model_copy(update={"budget": RunBudget(max_llm_tokens=50)})
        run = await engine.create_run(QUESTION, options)
        stopped = await engine.execute(run.run_id)
        assert stopped.status == "cancelled" and "LLM token limit of 50" in (stopped.error or "")
        again = await engine.execute(run.run_id)  # same limit: stops again without a new LLM call
    assert again.status == "cancelled"
    assert servers.llm.calls_by_prompt()["plan/v1"] == 1


async def test_budget_reached_inside_the_reviewer_fan_out_stops_cleanly(
    servers: Servers, tmp_path: Path
) -> None:
    from deepresearch.options import RunBudget

    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        for _ in range(3):  # the fan-out cancels sibling branches mid-write: it must never lock the database
            options = settings.default_options().model_copy(update={"budget": RunBudget(max_llm_tokens=1000)})
            run = await engine.create_run(QUESTION, options)
            events: list[EventRecord] = []
            stopped = await engine.execute(run.run_id, on_event=events.append)
            assert stopped.status == "cancelled", stopped.error
            assert "LLM token limit of 1000" in (stopped.error or "")
            assert events[-1].type == "end"
            paused = [e for e in events if e.type == "tool_result" and e.data.get("cancelled")]
            assert all(not e.data["ok"] for e in paused)


async def test_fetch_budget_stops_the_run(servers: Servers, tmp_path: Path) -> None:
    from deepresearch.options import RunBudget

    settings = servers.settings(tmp_path, sources_to_fetch=3)
    async with open_engine(settings) as engine:
        options = settings.default_options().model_copy(update={"budget": RunBudget(max_fetches=1)})
        run = await engine.create_run(QUESTION, options)
        stopped = await engine.execute(run.run_id)
        assert stopped.status == "cancelled" and "fetches limit of 1" in (stopped.error or "")
        hits = sum(n for p, n in servers.site.hits.items() if p.startswith("/articles/"))
        assert hits == 1
        bigger = stopped.options | {"budget": {"max_fetches": 10}}
        await engine.store.update_run(run.run_id, options=bigger)
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    assert (
        sum(n for p, n in servers.site.hits.items() if p.startswith("/articles/")) == 2
    )  # none fetched twice
