"""The workbench's daily tools (issue 11) in a real browser against the real runner, with the fixtures of
test_workbench.py: the history for daily use, the remembered form, downloads (copy, PDF, DOCX), one continue
action, the theme toggle, plain errors and a run waiting for a free slot.
"""

from __future__ import annotations

import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import docx
from pypdf import PdfReader

from tests.conftest import Servers
from tests.test_workbench import NOTES, QUESTION, browser, expect, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture


def test_history_for_daily_use(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        api = bench.api
        first = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_done(api, first)
        second = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_done(api, second)
        other = api.post("/api/runs", json={"question": "What limits SQLite WAL throughput?"}).json()[
            "run_id"
        ]
        wait_done(api, other)
        # a fork of the first run: resumed and forked, and it stays under its run
        cps = api.get(f"/api/runs/{first}/checkpoints").json()["checkpoints"]
        screen = next(c for c in cps if c["stage"] == "screen_evidence")
        api.post(f"/api/runs/{first}/resume", json={"checkpoint_id": screen["checkpoint_id"]})
        wait_done(api, first)

        bench.goto("#new")
        items = page.locator("#history-list > li")
        expect(items).to_have_count(3)
        item = page.locator(f'#history-list > li[data-run="{first}"]')
        # absolute dates, with the year
        year = api.get(f"/api/runs/{first}").json()["created_at"][:4]
        expect(item.locator("time.h-when")).to_contain_text(year)
        expect(item.locator(".h-badges")).to_contain_text("resumed")
        expect(item.locator(".h-badges .is-fork")).to_have_text("forked")
        expect(item.locator(".h-forks")).to_contain_text("1 fork of this run")
        expect(page.locator(f'#history-list > li[data-run="{second}"] .h-badges')).to_have_count(0)

        # rename: Enter saves on the server, the item shows the new name and the question under it
        item.get_by_role("button", name=re.compile("^Rename")).click()
        field = item.locator("input.h-rename")
        expect(field).to_be_focused()
        field.fill("Checkpoints, first try")
        field.press("Enter")
        expect(item.locator(".h-question")).to_have_text("Checkpoints, first try")
        expect(item.locator(".h-asked")).to_have_text(QUESTION)
        assert api.get(f"/api/runs/{first}").json()["title"] == "Checkpoints, first try"
        # Escape keeps the old name
        item.get_by_role("button", name=re.compile("^Rename")).click()
        item.locator("input.h-rename").fill("never saved")
        item.locator("input.h-rename").press("Escape")
        expect(item.locator(".h-question")).to_have_text("Checkpoints, first try")

        # search on the server: by title and by the question's words
        search = page.get_by_label("Search runs")
        search.fill("first try")
        expect(items).to_have_count(1)
        expect(items.first).to_have_attribute("data-run", first)
        search.fill("throughput")
        expect(items).to_have_count(1)
        expect(items.first).to_have_attribute("data-run", other)
        search.fill("no such words anywhere")
        expect(items).to_have_count(0)
        expect(page.locator("#history-empty")).to_have_text("No run matches this search.")
        search.fill("")
        expect(items).to_have_count(3)

        # delete asks first; "Keep it" keeps it, "Delete" deletes it on the server
        target = page.locator(f'#history-list > li[data-run="{second}"]')
        target.get_by_role("button", name=re.compile("^Delete")).click()
        expect(target.locator(".h-confirm")).to_contain_text("cannot be undone")
        bench.shot("daily-history-confirm")
        target.get_by_role("button", name="Keep it").click()
        expect(target.locator(".h-link")).to_be_visible()
        assert api.get(f"/api/runs/{second}").status_code == 200
        target.get_by_role("button", name=re.compile("^Delete")).click()
        target.locator(".h-confirm").get_by_role("button", name="Delete").click()
        expect(items).to_have_count(2)
        assert api.get(f"/api/runs/{second}").status_code == 404
        bench.assert_clean()


def wait_done(api: Any, run_id: str) -> None:
    for _ in range(600):
        if api.get(f"/api/runs/{run_id}").json()["status"] in ("completed", "failed"):
            return
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


def test_remembered_form_downloads_copy_pdf_and_docx(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        put = bench.api.put(
            "/api/collections/notes/documents/checkpoints.md",
            content=NOTES.encode(),
            headers={"Content-Type": "text/markdown", "X-Requested-With": "deepresearch-workbench"},
        )
        assert put.status_code in (200, 201), put.text
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Depth").fill("2")
        page.locator("#opt-sources").fill("4")
        page.get_by_label("Search documents").check()
        page.get_by_label("Only my documents").check()
        page.get_by_role("button", name="Start research").click()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        run_id = bench.run_id()

        # the next form (even after a reload) starts from what this one used
        page.reload()
        bench.goto("#new")
        expect(page.get_by_label("Depth")).to_have_value("2")
        expect(page.locator("#opt-sources")).to_have_value("4")
        expect(page.get_by_label("Search documents")).to_be_checked()
        expect(page.locator("#opt-corpus-name")).to_have_value("notes")
        expect(page.get_by_label("Only my documents")).to_be_checked()

        bench.goto(f"#run={run_id}")
        page.get_by_role("tab", name="Report", exact=True).click()
        stem = bench.api.get(f"/api/runs/{run_id}").json()["download_stem"]
        assert stem == "how-do-durable-workflow-checkpoints-and-sqlite-write"
        markdown = bench.api.get(f"/api/runs/{run_id}/report").text
        headings = [re.sub(r"^#+\s*", "", line) for line in markdown.splitlines() if line.startswith("#")]
        assert "Sources" in headings
        tools = page.locator("#report-tools")
        names = {}
        for label in ("Markdown", "HTML", "Word", "sources.json"):
            with page.expect_download() as caught:
                tools.get_by_role("link", name=label, exact=True).click()
            download = caught.value
            names[label] = download.suggested_filename
            saved = tmp_path / download.suggested_filename
            download.save_as(saved)
            if label == "Word":
                document = docx.Document(str(saved))
                shown = [p.text for p in document.paragraphs if p.style.name.startswith("Heading")]
                expected = [re.sub(r"[*_`]", "", h) for h in headings]
                assert set(expected) <= set(shown), shown
                main = [h for h in shown if h in ("Summary", "Findings", "Sources")]
                assert main == ["Summary", "Findings", "Sources"], shown
            if label == "Markdown":
                assert saved.read_text("utf-8") == markdown
        assert names == {
            "Markdown": f"{stem}.md",
            "HTML": f"{stem}.html",
            "Word": f"{stem}.docx",
            "sources.json": f"{stem}-sources.json",
        }

        # copy as Markdown
        tools.get_by_role("button", name="Copy as Markdown").click()
        expect(tools.locator(".copy-note")).to_have_text("Copied.")
        assert page.evaluate("navigator.clipboard.readText()") == markdown

        # PDF: the print view is the report alone, whatever tab is open
        page.get_by_role("tab", name="Activity").click()
        page.emulate_media(media="print")
        pdf = tmp_path / "report.pdf"
        pdf.write_bytes(page.pdf(format="A4"))
        bench.shot("daily-print-view")
        page.emulate_media(media="screen")
        text = " ".join(p.extract_text() for p in PdfReader(str(pdf)).pages)
        # a PDF's text breaks lines (and words at hyphens) and uses ligatures: compare without spaces
        flat = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
        for heading in headings:
            assert re.sub(r"[\s*_`]+", "", heading) in flat, (heading, flat[:500])
        for chrome in ("HISTORY", "Startresearch", "Checkpoints&resume", "CopyasMarkdown", "Activity"):
            assert chrome not in flat
        bench.assert_clean()


def test_one_continue_action_theme_and_plain_errors(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(
        browser, servers, tmp_path, fail_stage="screen_evidence", stage_delay_seconds=0.0
    ) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Failed")
        # one "Continue" in the header, another checkpoint as its second choice; the failure box says the same
        header = page.locator(".run-actions")
        expect(header.get_by_role("button", name="Continue", exact=True)).to_be_visible()
        expect(header.get_by_role("button", name="From another checkpoint…")).to_be_visible()
        labels = page.locator("#run-view button:visible").all_inner_texts()
        assert not [t for t in labels if t.startswith("Continue") and t != "Continue"], labels
        assert not [t for t in labels if t.startswith("Resume")], labels
        # the error in plain words, its technical text folded away
        problem = bench.stage("screen_evidence", "failed").locator(".tl-problem")
        expect(problem.locator(".tl-problem-text")).to_contain_text("This stage failed. Failure injected")
        expect(problem.locator(".tl-problem-text")).not_to_contain_text("screen_evidence:")
        detail = problem.locator("details.technical")
        expect(detail.locator("pre")).to_be_hidden()
        detail.locator("summary").click()
        expect(detail.locator("pre")).to_contain_text("screen_evidence: failure injected")

        # the budget of the rest of the run is checked as typed: an out-of-range value starts nothing
        header.get_by_role("button", name="From another checkpoint…").click()
        expect(page.locator("#tab-checkpoints")).to_have_attribute("aria-selected", "true")
        page.locator(".cp-latest summary").click()
        page.locator("#cp-budget-max_fetches").fill("0")
        expect(page.locator("#cp-budget-max_fetches-error")).to_contain_text("Fetches must be at least 1")
        page.locator(".cp-latest").get_by_role("button", name="Continue").click()
        expect(page.locator("#cp-budget-max_fetches")).to_be_focused()
        expect(page.locator("#run-status")).to_have_text("Failed")
        assert bench.api.get(f"/api/runs/{run_id}").json()["resumes"] == 0

        # the fork view at half and full width: the budget fields and the button line up
        page.locator("#cp-budget-max_fetches").fill("")
        page.locator(".cp label").first.click()
        expect(page.locator("#cp-continue")).to_be_visible()
        for width in (700, 1920):
            page.set_viewport_size({"width": width, "height": 1000})
            fields = page.locator(".cp-latest .field input").all()
            tops = {round(f.bounding_box()["y"]) for f in fields[:2]}
            assert len(tops) == 1, f"the first budget fields are not on one line at {width}px"
            left = page.locator(".cp-latest .field input").first.bounding_box()["x"]
            button = page.locator("#cp-latest-continue, #cp-continue-latest").bounding_box()["x"]
            assert abs(left - button) <= 1, (width, left, button)
            bench.shot(f"daily-checkpoints-{width}")
        # the form's budget fields (a label with a hint beside ones without) line up in each row
        bench.goto("#new")
        page.locator("details.budget > summary").click()
        for width in (700, 1920):
            page.set_viewport_size({"width": width, "height": 1000})
            boxes = [f.bounding_box() for f in page.locator("details.budget .field input").all()]
            for a in boxes:
                for b in boxes:
                    if abs(a["y"] - b["y"]) < 30:  # the same row
                        assert abs(a["y"] - b["y"]) <= 1, (width, boxes)
            bench.shot(f"daily-form-budget-{width}")
        bench.assert_clean()


def test_the_first_click_on_the_theme_toggle_shows(browser: Any, servers: Servers, tmp_path: Path) -> None:
    for dark in (False, True):
        with workbench(browser, servers, tmp_path, dark=dark, stage_delay_seconds=0.0) as bench:
            page = bench.page
            bench.goto("#new")
            before = page.evaluate("getComputedStyle(document.body).backgroundColor")
            page.locator("#theme-toggle").click()
            expect(page.locator("html")).to_have_attribute("data-theme", "light" if dark else "dark")
            assert page.evaluate("getComputedStyle(document.body).backgroundColor") != before
            page.locator("#theme-toggle").click()  # the system's own scheme, chosen
            page.locator("#theme-toggle").click()  # back to automatic
            expect(page.locator("html")).not_to_have_attribute("data-theme", re.compile("."))
            bench.assert_clean()


def test_a_run_waiting_for_a_free_slot_says_so(browser: Any, servers: Servers, tmp_path: Path) -> None:
    """One slot on the runner: the second run waits as queued, the workbench says so (and how many go
    first) on its page and in the history, then it starts by itself."""
    with workbench(browser, servers, tmp_path, max_concurrent_runs=1, stage_delay_seconds=0.6) as bench:
        page, api = bench.page, bench.api
        first = api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        second = api.post("/api/runs", json={"question": "What limits SQLite WAL throughput?"}).json()
        assert api.get(f"/api/runs/{second['run_id']}").json()["queue_position"] == 1
        bench.goto(f"#run={second['run_id']}")
        expect(page.locator("#run-progress")).to_have_text("Queued: the runner is busy with other runs.")
        expect(page.locator("#run-progress-detail")).to_contain_text("It is next")
        expect(
            page.locator(f'#history-list > li[data-run="{second["run_id"]}"] .tag.is-waiting')
        ).to_have_text("queued #1")
        wait_done(api, first)
        expect(page.locator("#run-progress")).not_to_contain_text("Queued", timeout=20_000)
        wait_done(api, second["run_id"])
        assert not bench.problems, bench.problems
