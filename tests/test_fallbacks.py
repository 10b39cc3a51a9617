"""Any model finishes a run: unusable answers fall back, labelled, per step; counted at the scripted server.

A step's model answer is re-asked once with the reasons; if it stays unusable (no JSON, empty arrays,
passage ids never shown, citations of sources not listed, a report without its sections) the step uses its
extractive method and the run goes on. The report header, research-state.json, the events and the run's
usage say which steps fell back; receipts keep the answers and the fallback, so a resume repeats neither.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from deepresearch.engine.core import open_engine
from deepresearch.store import EventRecord
from stages import FINAL_ARTIFACTS
from tests.conftest import Servers, execute_and_pause_after

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
LLM_PROMPTS = ("plan/v1", "screen/v1", "reflect/v1", "review/v1", "critic/v1", "report/v1")


def _files(workspace: Path, artifact_dir: str) -> dict[str, str]:
    return {name: (workspace / artifact_dir / name).read_text() for name in FINAL_ARTIFACTS}


def _fallback_events(events: list[EventRecord]) -> list[dict[str, str]]:
    return [e.data["fallback"] for e in events if e.type == "tool_result" and "fallback" in e.data]


@pytest.mark.parametrize("messy", ["prose", "empty", "out_of_range"])
async def test_a_model_that_fails_everything_still_yields_an_honest_report(
    servers: Servers, tmp_path: Path, messy: str
) -> None:
    servers.responder.messy = messy
    settings = servers.settings(tmp_path, llm=True, max_research_loops=2)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    calls = servers.llm.calls_by_prompt()
    # every LLM step: its answer and exactly one re-ask, never more
    steps = Counter({"plan/v1": 1, "reflect/v1": 1, "review/v1": 3, "critic/v1": 1, "report/v1": 1})
    screened = calls["screen/v1"] // 2
    assert screened >= 1 and calls["screen/v1"] == 2 * screened
    assert calls == Counter({p: 2 * n for p, n in steps.items()}) + Counter({"screen/v1": 2 * screened})

    fell_back = [f["step"] for f in _fallback_events(events)]
    assert fell_back[0] == "plan" and fell_back[-1] == "report"
    assert {"critic", "review: fact_reviewer", "reflection: round 1"} <= set(fell_back)
    assert len(fell_back) == sum(steps.values()) + screened
    assert all(f["reason"] for f in _fallback_events(events))

    usage = final.usage
    assert usage["model_answers"] == usage["unusable_answers"] == sum(calls.values())
    assert [f["step"] for f in usage["fallbacks"]] == fell_back

    files = _files(settings.workspace_dir, final.artifact_dir or "")
    report = files["deepresearch-report.md"]
    header = report.split("## Summary")[0]
    assert "the report text is **extractive**" in header
    assert f"{sum(calls.values())} unusable" in header
    assert f"{len(fell_back)} step(s) used their extractive method instead: plan, " in header
    assert all(section in report for section in ("## Findings", "## Open questions", "## Recommendations"))
    state = json.loads(files["research-state.json"])
    quality = state["model_answers"]
    assert quality["unusable"] == quality["answers"] == sum(calls.values())
    # the state lists parallel steps (the reviewers) in task order, the events in the order they finished
    assert sorted(f["step"] for f in quality["fallbacks"]) == sorted(fell_back)
    # the extractive report still cites only fetched sources, each citation checked
    sources = {s["n"] for s in json.loads(files["sources.json"])["sources"]}
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", report.split("## Sources")[0])}
    assert cited and cited <= sources
    check = json.loads(files["evidence.json"])["citation_check"]
    assert check["citations_checked"] == check["citations_supported"] > 0


async def test_a_well_behaved_model_never_falls_back(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    assert _fallback_events(events) == []
    assert final.usage["fallbacks"] == [] and final.usage["unusable_answers"] == 0
    assert final.usage["model_answers"] == len(servers.llm.calls) > 0
    files = _files(settings.workspace_dir, final.artifact_dir or "")
    header = files["deepresearch-report.md"].split("## Summary")[0]
    assert "written by a language model" in header
    assert "0 unusable; no step fell back to an extractive method." in header
    assert json.loads(files["research-state.json"])["model_answers"]["fallbacks"] == []


async def test_cancel_and_resume_repeat_no_answer_and_no_fallback(servers: Servers, tmp_path: Path) -> None:
    servers.responder.messy = "prose"
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        first_events: list[EventRecord] = []
        first = await execute_and_pause_after(engine, run.run_id, "screen_evidence", first_events)
        assert first.status == "cancelled", first.error
        before = servers.llm.calls_by_prompt()
        assert before["plan/v1"] == 2 and before["screen/v1"] >= 2 and "review/v1" not in before
        first_fallbacks = [f["step"] for f in _fallback_events(first_events)]
        assert first_fallbacks[0] == "plan"

        # the resume continues after screen_evidence: the plan's and the screenings' answers and fallbacks
        # are in their receipts and checkpoints, so the model is not asked for them again
        resumed: list[EventRecord] = []
        final = await engine.execute(run.run_id, on_event=resumed.append)
        assert final.status == "completed", final.error
        after = servers.llm.calls_by_prompt()
        assert after["plan/v1"] == before["plan/v1"] and after["screen/v1"] == before["screen/v1"]
        assert after["review/v1"] == 6 and after["report/v1"] == 2
        # the steps that fell back before the pause are still counted once, with the new ones after them
        steps = [f["step"] for f in final.usage["fallbacks"]]
        assert steps[: len(first_fallbacks)] == first_fallbacks and steps[-1] == "report"
        assert len(steps) == len(set(steps))
        files = _files(settings.workspace_dir, final.artifact_dir or "")
        state = json.loads(files["research-state.json"])
        # parallel reviewers finish in any order: the state and the events may list them differently
        assert sorted(f["step"] for f in state["model_answers"]["fallbacks"]) == sorted(steps)


async def test_a_refused_request_falls_back_but_a_bad_key_fails(servers: Servers, tmp_path: Path) -> None:
    """HTTP 400 for one request (a prompt too long for a small context window) is that step's problem: it
    falls back. A 401 is the configuration's: the stage fails with the fix, and nothing is papered over."""
    servers.llm.fail_next(400, body='{"error": {"message": "the request exceeds the context size"}}')
    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    (fallback,) = _fallback_events(events)
    assert fallback["step"] == "plan" and "context size" in fallback["reason"]

    servers.llm.fail_next(401)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        failed = await engine.execute(run.run_id)
    assert failed.status == "failed"
    assert failed.error and failed.error.startswith("plan_research:") and "OPENAI_API_KEY" in failed.error
