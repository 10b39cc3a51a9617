"""What the model did, in the workbench, in a real browser against the real runner (as in test_workbench.py,
whose fixtures these tests share): the labelled fallbacks of a model whose answers are unusable (the run
view's summary and each step's reason on its call; nothing for a well-behaved model), the report growing
while the model streams it (rebuilt from the event log on a reload) and replaced by the checked report, and
the providers' health before a start (no reachable web search: the documents-only suggestion; a model
server that cannot be reached: named). Never a console error or CSP violation.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

from tests.conftest import Servers
from tests.test_workbench import QUESTION, WAIT_MS, Workbench, browser, expect, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture

RUN_WAIT_MS = 60_000
DRAFT_LENGTH = "() => document.querySelector('#report .report-draft-text')?.textContent.length ?? -1"
DRAFT_TEXT = "() => document.querySelector('#report .report-draft-text')?.textContent ?? null"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released: connections to it are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_run(bench: Workbench) -> str:
    run_id = str(bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"])
    bench.goto(f"#run={run_id}")
    return run_id


def wait_completed(bench: Workbench) -> None:
    expect(bench.page.locator("#run-status")).to_have_text("Completed", timeout=RUN_WAIT_MS)


def test_a_model_with_unusable_answers_shows_which_steps_fell_back(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    servers.responder.messy = "prose"
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = start_run(bench)
        wait_completed(bench)
        usage = bench.api.get(f"/api/runs/{run_id}").json()["usage"]
        fallbacks = usage["fallbacks"]
        assert usage["unusable_answers"] == usage["model_answers"] == len(servers.llm.calls) > 0
        steps = [f["step"] for f in fallbacks]
        assert steps[0] == "plan" and steps[-1] == "report", steps
        summary = page.locator("#run-model")
        expected = (
            f"Model: {usage['model_answers']} answers, {usage['unusable_answers']} unusable — "
            f"{len(steps)} steps used the extractive method: {', '.join(steps)}."
        )
        expect(summary).to_be_visible()
        expect(summary).to_contain_text(expected)

        # each step's reason is on its own call in the timeline
        plan_call = bench.stage("plan_research").locator(".call[data-fallback]")
        expect(plan_call).to_have_count(1)
        expect(plan_call.locator(".call-fallback")).to_contain_text(
            "plan: the model's answer was unusable, so this step used its extractive method."
        )
        expect(plan_call.locator(".call-fallback")).to_contain_text(fallbacks[0]["reason"])
        expect(plan_call.locator(".call-status")).to_have_text("fell back")  # not a plain "ok"
        expect(page.locator("#timeline .call-fallback")).to_have_count(len(steps))
        report_call = bench.stage("write_report").locator('.call[data-kind="llm"][data-fallback]')
        expect(report_call.locator(".call-fallback")).to_contain_text(fallbacks[-1]["reason"])
        bench.shot("40-fallbacks")

        # the same view, rebuilt from the event log
        page.reload()
        expect(summary).to_contain_text(expected)
        expect(page.locator("#timeline .call-fallback")).to_have_count(len(steps))
        bench.assert_clean()


def test_a_well_behaved_model_shows_no_fallback_summary(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = start_run(bench)
        wait_completed(bench)
        usage = bench.api.get(f"/api/runs/{run_id}").json()["usage"]
        assert usage["fallbacks"] == [] and usage["unusable_answers"] == 0 and usage["model_answers"] > 0
        # the LLM call rows exist (whether the activity list is scrolled into view is not the point)
        expect(page.locator("#timeline .call[data-kind='llm']").first).to_be_attached()
        expect(page.locator("#run-model")).to_be_hidden()
        expect(page.locator("#run-model")).to_have_text("")
        expect(page.locator("#timeline .call-fallback")).to_have_count(0)
        expect(page.locator("#timeline .call[data-fallback]")).to_have_count(0)
        bench.assert_clean()


def test_the_report_grows_while_the_model_writes_it(browser: Any, servers: Servers, tmp_path: Path) -> None:
    # ~20 characters every 50 ms: the report takes a few seconds to stream, in batches of report_delta
    servers.llm.stream_chunk_chars, servers.llm.stream_delay = 20, 0.05
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = start_run(bench)
        page.get_by_role("tab", name="Report").click()
        draft = page.locator("#report .report-draft-text")
        expect(draft).to_be_visible(timeout=RUN_WAIT_MS)
        expect(page.locator("#report .report-draft-note")).to_contain_text("The model is writing the report")
        first = page.evaluate(DRAFT_LENGTH)
        assert first > 0
        # the draft is only shown while the run is active and no checked report is in: growing here is
        # growing before the run ended
        page.wait_for_function(f"() => ({DRAFT_LENGTH})() > {first}", timeout=WAIT_MS)
        # the model is held mid-stream from here across the reload below: on a loaded machine the rest of the
        # report could otherwise stream out before the page is back, leaving no draft to rebuild
        servers.llm.stream_open.clear()
        try:
            seen = page.evaluate(DRAFT_TEXT)
            assert seen and len(seen) > first
            assert page.locator("#report").evaluate("el => el.querySelectorAll('*').length") == 2  # text only
            bench.shot("41-report-streaming")

            # a reload mid-stream rebuilds the text so far from the event log, and it goes on growing
            page.reload()
            page.get_by_role("tab", name="Report").click()
            page.wait_for_function(
                f"seen => {{ const t = ({DRAFT_TEXT})(); return t !== null && t.length >= seen.length; }}",
                arg=seen,
                timeout=WAIT_MS,
            )
            rebuilt = page.evaluate(DRAFT_TEXT)
            assert rebuilt is not None and rebuilt.startswith(seen)
        finally:
            servers.llm.stream_open.set()
        page.wait_for_function(
            f"n => {{ const t = ({DRAFT_TEXT})(); return t !== null && t.length > n; }}",
            arg=len(rebuilt),
            timeout=WAIT_MS,
        )

        # the checked report replaces it when the run ends
        wait_completed(bench)
        expect(page.locator("#report a.cite").first).to_be_visible()
        expect(draft).to_have_count(0)
        expect(page.locator("#report .report-draft-note")).to_have_count(0)
        answer = bench.api.get(f"/api/runs/{run_id}/report?format=md").text
        assert "## Findings" in answer
        expect(page.locator("#report h2", has_text="Findings")).to_be_visible()
        bench.assert_clean()


def test_no_reachable_web_search_suggests_documents_only(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "checkpoints.md").write_text(
        "# Durable checkpoints\n\nA checkpoint records a research run's state after every stage.\n",
        encoding="utf-8",
    )
    dead = closed_port()
    with workbench(
        browser,
        servers,
        tmp_path,
        stage_delay_seconds=0.0,
        corpus_roots={"manual": manual},
        web_search_url=f"http://127.0.0.1:{dead}/search",
    ) as bench:
        page = bench.page
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "/api/providers/health" in r.url else None)
        bench.goto("#new")
        notice = page.locator("#preflight")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text(
            "No web search provider is reachable from this server: generic could not be reached"
        )
        expect(notice.locator('[data-problem="model"]')).to_have_count(0)  # the scripted model is fine
        notice.locator("summary", has_text="What the server tried").click()
        expect(notice.locator(".preflight-detail pre")).to_contain_text("generic: ConnectError")
        bench.shot("42-no-web-search")
        expect(page.get_by_label("Search documents")).not_to_be_checked()
        notice.get_by_role("button", name="Search only my documents").click()
        expect(page.get_by_label("Search documents")).to_be_checked()
        expect(page.get_by_label("Only my documents")).to_be_checked()
        expect(page.get_by_label("Collection", exact=True)).to_have_value("manual")
        expect(notice).to_be_hidden()  # a documents-only run does not need the web
        expect(page.locator("#estimate")).to_contain_text("in your documents")

        # the answer is kept for a minute: coming back to the form does not ask again
        page.locator("#nav-documents").click()
        expect(page.locator("#docs-view")).to_be_visible()
        page.get_by_role("link", name="Back to the research form").click()
        expect(page.locator("#new-view")).to_be_visible()
        page.get_by_label("Only my documents").uncheck()
        expect(notice).to_be_visible()
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Only my documents").check()
        page.get_by_role("button", name="Start research").click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        wait_completed(bench)
        assert len(asked) == 1, asked
        bench.assert_clean()


def test_an_unreachable_model_is_named_and_a_failed_check_blocks_nothing(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    dead = closed_port()
    with workbench(
        browser, servers, tmp_path, stage_delay_seconds=0.0, openai_base_url=f"http://127.0.0.1:{dead}/v1"
    ) as bench:
        page = bench.page
        bench.goto("#new")
        notice = page.locator("#preflight")
        expect(notice).to_be_visible()
        model = notice.locator('[data-problem="model"]')
        expect(model).to_contain_text("The model cannot be used right now.")
        expect(model).to_contain_text(f"The model server at http://127.0.0.1:{dead}/v1 cannot be reached.")
        expect(notice.locator('[data-problem="web"]')).to_have_count(0)  # the scripted search is fine
        bench.shot("43-model-unreachable")

    # the check itself fails: the form starts the run as before
    with workbench(browser, servers, tmp_path / "second", stage_delay_seconds=0.0) as bench:
        page = bench.page
        bench.tolerated.append("net::ERR_FAILED")
        page.route("**/api/providers/health", lambda route: route.abort())
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_role("button", name="Start research").click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        expect(page.locator("#preflight")).to_be_hidden()
        wait_completed(bench)
        bench.assert_clean()
