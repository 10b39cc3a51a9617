"""A run in the workbench, in a real browser against the real runner (fixtures: test_workbench.py).

Covered: start from the form, live stages and sub-tool rows, pause (cancel first, then wait for the server's
`cancelled`), fork from an older checkpoint with its preview, the report with working citation links, a
reload mid-run (same timeline rebuilt from the event log, stream reconnects, calm banner while it cannot),
a finished run opened offline, history, a failed fetch and a failed stage with its resume button, the
half-screen layout, a budget stop and raising the limit; never a console error or CSP violation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.api import wait_status
from tests.conftest import Servers
from tests.test_workbench import QUESTION, TIMELINE, WAIT_MS, browser, expect, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture

# The texts the status pill and the progress headline ever showed, in order.
RECORD_TEXTS = """
() => {
  window.__seen = [];
  for (const id of ["run-status", "run-progress"]) {
    const el = document.getElementById(id);
    new MutationObserver(() => window.__seen.push(`${id}: ${el.textContent}`))
      .observe(el, { childList: true, characterData: true, subtree: true });
  }
}
"""


def test_start_watch_pause_fork_and_read_the_report(browser: Any, servers: Servers, tmp_path: Path) -> None:
    servers.responder.reflection_sufficient = False  # two search rounds: the loop lights up
    with workbench(browser, servers, tmp_path) as bench:
        page = bench.page
        bench.goto()
        expect(page.get_by_role("heading", name="What do you want to find out?")).to_be_visible()
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Depth").fill("2")
        estimate = page.locator("#estimate")
        expect(estimate).to_contain_text("≈ 6")  # 3 queries × 2 rounds
        expect(estimate).to_contain_text("LLM calls")
        expect(estimate).to_contain_text("Estimate")
        bench.shot("1-new-research")
        page.evaluate(RECORD_TEXTS)  # every status and progress text the run view will show
        page.get_by_role("button", name="Start research").click()

        # live: the stages and their sub-tool calls stream in
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        run_id = bench.run_id()
        expect(bench.stage("plan_research", "done")).to_have_count(1)
        plan_calls = bench.stage("plan_research").locator(".call")
        expect(plan_calls.and_(page.locator('[data-kind="llm"][data-status="ok"]'))).to_have_count(1)
        expect(bench.stage("search_web").locator('.call[data-kind="search"]')).to_have_count(3)
        expect(bench.stage("search_web", "done")).to_have_count(1)

        # pause: cancel first, then the UI waits for the server to confirm before offering to continue
        page.get_by_role("button", name="Pause").click()
        expect(page.locator("#btn-continue")).to_be_visible()
        expect(page.locator("#run-status")).to_have_text("Paused")
        assert bench.api.get(f"/api/runs/{run_id}").json()["status"] == "cancelled"
        seen: list[str] = page.evaluate("window.__seen")
        assert "run-progress: Planning: breaking the question into sub-questions and search queries." in seen
        assert "run-status: Pausing…" in seen, seen
        assert any(s.startswith("run-progress: Pausing: waiting") for s in seen), seen
        assert seen.index("run-status: Pausing…") < seen.index("run-status: Paused"), seen
        expect(page.locator('#graph [data-node="plan_research"]')).to_have_attribute("data-status", "done")
        bench.shot("3-paused")

        # continue from an OLDER checkpoint: preview, then a fork in the same timeline
        page.get_by_role("button", name="From another checkpoint…").first.click()
        page.locator(".cp label", has_text="After “Plan the research”").click()
        preview = page.locator(".cp-preview")
        expect(preview).to_contain_text("A fork")
        expect(preview).to_contain_text("Already done")
        expect(preview).to_contain_text("Will run")
        expect(preview).to_contain_text(re.compile(r"\d+ finished calls? answered from receipts"))
        expect(preview).to_contain_text("Duplicate risk")
        page.locator("details.cp-technical > summary").click()
        expect(page.locator(".cp-technical")).to_contain_text(run_id)  # IDs live here, not in the narrative
        bench.shot("4-resume-preview")
        page.get_by_role("button", name="Fork from this checkpoint").click()

        expect(page.locator("#tab-activity")).to_have_attribute("aria-selected", "true")
        expect(page.locator(".tl-segment[data-fork]")).to_contain_text("Forked from the checkpoint after")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(bench.stage("plan_research")).to_have_count(1)  # the same timeline went on
        expect(page.locator("#timeline .tl-stage[data-superseded]").first).to_be_visible()
        this_branch = page.locator('#timeline .tl-stage[data-stage="search_web"]:not([data-superseded])')
        expect(this_branch.locator(".tl-round", has_text="round 2")).to_have_count(1)
        expect(bench.stage("write_report", "done")).to_have_count(1)
        expect(page.locator('#graph [data-node="write_report"]')).to_have_attribute("data-status", "done")
        assert run_id not in page.locator("#timeline").inner_text()
        bench.shot("5-completed-activity")

        # the report, its citations and downloads
        page.get_by_role("tab", name="Report").click()
        citation = page.locator("#report a.cite").first
        expect(citation).to_be_visible()
        number = citation.get_attribute("data-source")
        citation.click()
        source = page.locator(f"#src-{number}")
        expect(source).to_be_in_viewport()
        expect(source).to_have_class(re.compile("is-target"))
        expect(source).to_contain_text("cited")
        assert page.url.endswith(f"#run={run_id}")  # the citation did not take over the route
        for label in ("Markdown", "HTML", "sources.json", "evidence.json"):
            expect(page.locator("#report-tools").get_by_role("link", name=label, exact=True)).to_be_visible()
        page.get_by_role("tab", name="Evidence").click()
        expect(page.locator(".citation-check")).to_contain_text("citations supported")
        page.get_by_role("tab", name="Sources").click()
        bench.shot("6-report-light")
        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.locator("#theme-toggle").click()  # auto on a light system → dark: the first click shows
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") != light
        bench.shot("7-report-dark")

        # the run's files
        page.get_by_role("tab", name="Files").click()
        page.locator(".file-name", has_text="plan.json").click()
        expect(page.locator(".file-text")).to_contain_text('"sub_questions"')

        # history: the run is listed, completed
        entry = page.locator(f'#history-list a[data-run="{run_id}"]')
        expect(entry).to_contain_text("Completed")
        expect(entry).to_contain_text(QUESTION[:30])
        bench.assert_clean()


def test_reload_mid_run_rebuilds_the_same_timeline(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(bench.stage("fetch_sources", "done")).to_have_count(1)
        bench.shot("2-running")
        before = [s for s in page.evaluate(TIMELINE) if s["status"] == "done"]
        assert [s["stage"] for s in before][:3] == ["plan_research", "search_web", "fetch_sources"]

        # the network is gone while the page reloads: a calm banner, then it catches up by itself
        bench.tolerated.append("net::ERR_FAILED")
        page.route("**/api/runs/*/events*", lambda route: route.abort())
        page.reload()
        expect(page.locator("#conn-banner")).to_be_visible()
        expect(page.locator("#conn-banner")).to_contain_text("Reconnecting")
        bench.shot("8-reconnecting")
        page.unroute("**/api/runs/*/events*")
        expect(page.locator("#conn-banner")).to_be_hidden()
        bench.tolerated.clear()

        page.wait_for_function(  # the replay rebuilt at least what was there
            "n => document.querySelectorAll('#timeline .tl-stage[data-status=done]').length >= n",
            arg=len(before),
            timeout=WAIT_MS,
        )
        after = page.evaluate(TIMELINE)
        assert after[: len(before)] == before
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        stages = [s["stage"] for s in page.evaluate(TIMELINE)]
        assert stages == [
            "plan_research",
            "search_web",
            "fetch_sources",
            "screen_evidence",
            "reflection",
            "analyze_findings",
            "critic_review",
            "write_report",
        ]
        history_entry = page.locator(f'#history-list a[data-run="{run_id}"]')
        expect(history_entry).to_have_attribute("aria-current", "page")
        bench.assert_clean()


def test_a_finished_run_opened_offline_is_read_once_the_network_is_back(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """A stream the server never answered is the network, not "nothing more to read": it is retried."""
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        assert wait_status(bench.api, run_id, {"completed"})["status"] == "completed"
        refused: list[str] = []

        def refuse(route: Any) -> None:
            refused.append(route.request.url)
            route.abort()

        bench.tolerated.append("net::ERR_FAILED")
        page.route("**/api/runs/*/events*", refuse)
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed")  # the detail says so
        for _ in range(200):  # the stream, then (the detail says the run stopped) its last reading
            if len(refused) >= 2:
                break
            page.wait_for_timeout(100)
        assert len(refused) >= 2, refused
        expect(page.locator("#conn-banner")).to_be_visible()
        page.unroute("**/api/runs/*/events*")
        expect(page.locator("#conn-banner")).to_be_hidden()
        bench.tolerated.clear()
        expect(bench.stage("write_report", "done")).to_have_count(1)
        bench.assert_clean()


def test_failed_fetch_and_failed_stage_show_where_they_happened(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    default_results = servers.search.results_for

    def with_a_dead_link(query: str, limit: int) -> list[dict[str, Any]]:
        dead = {
            "title": "A page that is gone",
            "url": f"{servers.site_url}/articles/no-such-article",
            "snippet": "Durable workflow checkpoints and SQLite write-ahead logging, explained.",
            "published": "2024-01-01",
        }
        return [*default_results(query, limit - 1), dead]

    servers.search.results_for = with_a_dead_link
    with workbench(
        browser,
        servers,
        tmp_path,
        dark=True,
        fail_stage="screen_evidence",
        stage_delay_seconds=0.2,
        sources_to_fetch=4,
    ) as bench:
        page = bench.page
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Research question").press("Control+Enter")

        failed_fetch = bench.stage("fetch_sources").locator('.call[data-kind="fetch"][data-status="failed"]')
        expect(failed_fetch).to_have_count(1)
        expect(failed_fetch).to_contain_text("no-such-article")
        expect(page.locator('#sources .source[data-status="failed"]')).to_contain_text("not fetched")

        failed = bench.stage("screen_evidence", "failed")
        expect(failed).to_have_count(1)
        expect(failed.locator(".tl-problem")).to_contain_text("failure injected")
        expect(page.locator("#run-status")).to_have_text("Failed")
        expect(page.locator("#run-progress")).to_contain_text("Failed at “Screen evidence”")
        screen_node = page.locator('#graph [data-node="screen_evidence"]')
        expect(screen_node).to_have_attribute("data-status", "failed")
        bench.shot("9-failed-stage")

        failed.get_by_role("button", name="Continue", exact=True).click()
        continued = page.locator(
            ".tl-segment", has_text="Continued from the checkpoint after “Fetch sources”"
        )
        expect(continued).to_be_visible()
        expect(bench.stage("screen_evidence", "failed")).to_have_count(2)  # the injected failure again
        resume_buttons = page.locator("#timeline .tl-problem button", has_text="Continue")
        expect(resume_buttons).to_have_count(1)  # on the latest failure only
        expect(page.locator("#btn-continue")).to_be_visible()
        bench.assert_clean()


def test_half_screen_layout(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        page.set_viewport_size({"width": 700, "height": 900})
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(page.locator("#history")).not_to_be_in_viewport()  # a drawer at this width
        page.get_by_role("button", name="Show history").click()
        expect(page.locator(f'#history-list a[data-run="{run_id}"]')).to_be_in_viewport()
        page.keyboard.press("Escape")
        page.get_by_role("tab", name="Activity").click()
        page.keyboard.press("ArrowRight")  # keyboard tabs
        expect(page.locator("#tab-report")).to_be_focused()
        expect(page.locator("#tab-report")).to_have_attribute("aria-selected", "true")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 700, f"the page scrolls sideways at 700px ({width}px wide)"
        bench.shot("10-half-screen")
        bench.assert_clean()


def test_a_budget_stop_is_explained_and_the_limit_can_be_raised(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.1) as bench:
        page = bench.page
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.locator("details.budget > summary").click()
        page.get_by_label("LLM tokens").fill("100")
        page.get_by_role("button", name="Start research").click()

        expect(page.locator("#run-status")).to_have_text("Paused")
        expect(page.locator("#run-progress")).to_contain_text("budget limit")
        stopped = bench.stage("screen_evidence", "stopped")
        expect(stopped.locator(".tl-problem")).to_contain_text("LLM token limit of 100")
        page.get_by_role("button", name="Raise the limit and continue…").click()
        expect(page.locator("#tab-checkpoints")).to_have_attribute("aria-selected", "true")
        expect(page.locator(".cp-budget")).to_contain_text("LLM token limit of 100")
        page.locator("#cp-budget-max_llm_tokens").fill("1000000")
        bench.shot("11-budget")
        page.locator(".cp-latest").get_by_role("button", name="Continue").click()

        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(page.locator(".tl-segment", has_text="Continued from the checkpoint after")).to_be_visible()
        run = bench.api.get(f"/api/runs/{bench.run_id()}").json()
        assert run["options"]["budget"]["max_llm_tokens"] == 1_000_000
        bench.assert_clean()
