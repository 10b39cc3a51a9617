"""Workbench papercuts of issue 22 in a real browser against the real runner, with the fixtures of
test_workbench.py: a server whose own documents are its default (DEEPRESEARCH_CORPUS_DIR with
DEEPRESEARCH_CORPUS_ONLY) configures the form and starts runs that read only those documents.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import Servers
from tests.test_workbench import ARTIFACTS, QUESTION, TIMELINE, browser, expect, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture

RUN_MS = 60_000  # a whole run, end to end


def server_documents(tmp_path: Path) -> Path:
    folder = tmp_path / "server-docs"
    folder.mkdir()
    (folder / "checkpoints.md").write_text(
        "# Durable checkpoints\n\nA durable workflow checkpoint records the state of a research run after "
        "every stage, and SQLite write-ahead logging keeps each write safe, so a resumed run continues "
        "from the latest checkpoint instead of starting over.\n",
        encoding="utf-8",
    )
    return folder


def test_server_side_documents_only_configure_the_form_and_start_runs(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """Issue 22 item 9: config.json answered 500 ("corpus_only needs a document collection") and Start stayed
    disabled; the form then sent corpus_only=false, overriding the server's setting."""
    folder = server_documents(tmp_path)
    searches_before = len(servers.search.calls)
    with workbench(
        browser, servers, tmp_path, stage_delay_seconds=0.0, corpus_dir=folder, corpus_only=True
    ) as bench:
        answer = bench.api.get("/research/config.json")
        assert answer.status_code == 200, answer.text
        config = answer.json()
        assert config["server_documents"] is True and config["defaults"]["corpus_only"] is True
        assert config["defaults"]["corpus_dir"] is None and str(folder) not in answer.text  # no server path

        page = bench.page
        bench.goto("#new")
        start = page.get_by_role("button", name="Start research")
        expect(start).to_be_enabled()
        expect(page.locator("#estimate")).to_contain_text("in the server's documents")
        page.get_by_label("Research question").fill(QUESTION)
        start.click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=RUN_MS)
        run = bench.api.get(f"/api/runs/{bench.run_id()}").json()
        assert run["options"]["corpus_only"] is True
        sources = bench.api.get(f"/api/runs/{bench.run_id()}/artifacts/sources.json").json()["sources"]
        assert sources and all(s["url"].startswith("corpus://") for s in sources), sources
        assert len(servers.search.calls) == searches_before  # the server's setting: no web search
        # a research like it searches the server's documents again: no "folder only the CLI can choose"
        page.get_by_role("button", name="New research like this").click()
        expect(page.locator("#new-view")).to_be_visible()
        expect(page.locator("#estimate")).to_contain_text("in the server's documents")
        expect(page.locator("#corpus-unavailable")).to_be_hidden()
        expect(page.get_by_label("Search documents")).not_to_be_checked()
        bench.assert_clean()


def test_server_side_documents_with_the_web_are_said_in_the_estimate(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    folder = server_documents(tmp_path)
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0, corpus_dir=folder) as bench:
        config = bench.api.get("/research/config.json").json()
        assert config["server_documents"] is True and config["defaults"]["corpus_only"] is False
        bench.goto("#new")
        expect(bench.page.locator("#estimate")).to_contain_text("on the web and in the server's documents")
        bench.assert_clean()


def test_an_edited_plan_leaves_the_plan_step_done(browser: Any, servers: Servers, tmp_path: Path) -> None:
    """After "Save edits & continue" the plan stage was drawn paused for good, with a false "Paused here …
    it runs again" card: the review's write of the edited plan.json opened a plan attempt that never ended."""
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0, plan_review=True) as bench:
        page = bench.page
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Review the plan first").check()
        page.get_by_role("button", name="Start research").click()
        expect(page.locator("#run-status")).to_have_text("Waiting for you", timeout=RUN_MS)
        expect(page.locator("#plan-review")).to_be_visible()
        page.get_by_role("button", name="Remove Query 2").click()
        page.get_by_role("button", name="Save edits & continue").click()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=RUN_MS)
        for shown in (page.evaluate(TIMELINE), None):
            if shown is None:  # the same after a reload, rebuilt from the event log
                page.reload()
                expect(page.locator("#run-status")).to_have_text("Completed")
                expect(bench.stage("write_report", "done")).to_have_count(1)
                shown = page.evaluate(TIMELINE)
            plans = [s for s in shown if s["stage"] == "plan_research"]
            assert [p["status"] for p in plans] == ["done"], shown
            assert plans[0]["calls"] == ["llm:ok", "write:ok", "write:ok"]  # the edit's write too
            assert not [s for s in shown if s["status"] == "stopped"], shown
            expect(page.locator("#timeline .tl-problem.is-paused")).to_have_count(0)
            expect(page.locator('#graph .g-node[data-node="plan_research"]')).to_have_attribute(
                "data-status", "done"
            )
        bench.assert_clean()


def test_the_printed_report_is_the_report_alone(browser: Any, servers: Servers, tmp_path: Path) -> None:
    """The PDF / print output included the follow-up form under the report."""
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=RUN_MS)
        page.get_by_role("tab", name="Report").click()
        expect(page.locator("#follow-up")).to_be_visible()  # on screen, under the report
        page.emulate_media(media="print")
        expect(page.locator("#report")).to_be_visible()
        expect(page.locator("#report h2").first).to_be_visible()
        expect(page.locator("#follow-up")).to_be_hidden()
        controls = page.locator("#panel-report").locator("button, textarea, input, select, label")
        visible = [c.evaluate("e => e.outerHTML.slice(0, 80)") for c in controls.all() if c.is_visible()]
        assert visible == [], visible  # nothing to press or type in on paper
        page.emulate_media(media="screen")
        expect(page.locator("#follow-up")).to_be_visible()
        bench.assert_clean()


# The popover's box, the viewport, and where the cited sentence is drawn in it (null: not marked).
POPOVER = """
() => {
  const tip = document.getElementById("cite-preview");
  const box = tip.getBoundingClientRect();
  const mark = tip.querySelector("mark");
  const at = mark ? mark.getBoundingClientRect() : null;
  return {
    box: { top: box.top, bottom: box.bottom, left: box.left, right: box.right },
    view: { width: window.innerWidth, height: window.innerHeight },
    marked: mark ? mark.textContent : null,
    markVisible: at ? at.top >= box.top && at.bottom <= box.bottom : false,
  };
}
"""
# The sentence a citation link ends: the text of its paragraph before it, after the sentence before.
CITED_BEFORE = """
(link) => {
  const range = document.createRange();
  range.setStart(link.closest("p, li"), 0);
  range.setEndBefore(link);
  const parts = range.toString().split(/[.!?]\\s+|\\]/);
  return parts[parts.length - 1].trim();
}
"""


def test_a_citation_preview_stays_on_screen_and_shows_the_cited_sentence(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """The citation popover ran off the bottom of the screen and showed its source's first passage from
    the top, whatever sentence cited it."""
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=RUN_MS)
        page.get_by_role("tab", name="Report").click()
        links = page.locator("#report p a.cite, #report li a.cite")
        expect(links.first).to_be_visible()
        checked = 0
        for size in ({"width": 1400, "height": 700}, {"width": 420, "height": 640}):
            page.set_viewport_size(size)
            for link in links.all():
                sentence = link.evaluate(CITED_BEFORE)
                if len(sentence) < 20:
                    continue
                # the link at the very bottom of the window: the popover has no room under it
                link.evaluate("(a) => a.scrollIntoView({block: 'end'})")
                page.mouse.move(0, 0)
                link.hover()
                expect(page.locator("#cite-preview")).to_be_visible()
                shown = page.evaluate(POPOVER)
                box, view = shown["box"], shown["view"]
                assert box["top"] >= 0 and box["bottom"] <= view["height"], (size, shown)
                assert box["left"] >= 0 and box["right"] <= view["width"], (size, shown)
                assert shown["marked"] is not None and sentence in " ".join(shown["marked"].split()), (
                    sentence,
                    shown,
                )
                assert shown["markVisible"], shown
                if not checked:
                    ARTIFACTS.mkdir(exist_ok=True)
                    page.screenshot(path=str(ARTIFACTS / "workbench-cite-preview.png"))
                checked += 1
        assert checked >= 4
        bench.assert_clean()


def test_a_web_search_that_failed_beside_the_documents_is_said_on_its_line(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """The documents answered and the web provider did not: each search line read "1 result · 12 ms", as if
    the web had been searched; it names the source that failed (the message is in the call's details)."""
    folder = server_documents(tmp_path)
    servers.search.fail_next(503, times=1000)  # every web search of the run
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0, corpus_dir=folder) as bench:
        page = bench.page
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_role("button", name="Start research").click()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=RUN_MS)
        assert servers.search.calls_for("generic"), "the web provider was asked"
        searches = bench.stage("search_web").locator('.call[data-kind="search"]')
        expect(searches.first).to_be_visible()
        for index in range(searches.count()):
            expect(searches.nth(index)).to_contain_text("generic failed")
        searches.first.click()
        expect(bench.stage("search_web").locator(".call-problem").first).to_contain_text("503")
        bench.shot("search-source-failed")
        bench.assert_clean()
