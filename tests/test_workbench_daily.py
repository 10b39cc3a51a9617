"""The workbench for daily use (issue 11) in a real browser against the real runner, with the fixtures of
test_workbench.py: honest inputs (the server's bounds from config.json, an out-of-range value is an error that
starts nothing, never a silently changed one; the question's length shown before it is too long; a long title
clamped with "show all"; the upload limits offered before anything is sent).
"""

from __future__ import annotations

import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import docx
import pytest
from pypdf import PdfReader

from tests.conftest import Servers
from tests.test_workbench import QUESTION, browser, expect, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture

LINE_HEIGHT = "parseFloat(getComputedStyle(document.getElementById('run-question')).lineHeight)"


def test_out_of_range_options_are_errors_and_start_nothing(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        config = bench.api.get("/research/config.json").json()
        loops = config["limits"]["max_research_loops"]
        sources = config["limits"]["sources_to_fetch"]
        bench.goto("#new")
        page.get_by_label("Research question").fill(QUESTION)
        start = page.get_by_role("button", name="Start research")
        depth = page.get_by_label("Depth")
        depth_error = page.locator("#opt-loops-error")
        for typed, message in [
            (str(loops["maximum"] + 40), f"Depth must be between {loops['minimum']} and {loops['maximum']}"),
            ("0", f"Depth must be between {loops['minimum']} and {loops['maximum']}"),
            ("-3", f"Depth must be between {loops['minimum']} and {loops['maximum']}"),
            ("2.5", "Depth must be a whole number (you entered 2.5)"),
        ]:
            depth.fill(typed)
            expect(depth_error).to_be_visible()
            expect(depth_error).to_contain_text(message)
            expect(depth).to_have_attribute("aria-invalid", "true")
            expect(depth).to_have_value(typed)  # never changed to fit
            start.click()
            expect(page.locator("#form-error")).to_contain_text("Nothing was started")
            expect(depth).to_be_focused()
        page.locator("#opt-sources").fill("999")
        expect(page.locator("#opt-sources-error")).to_contain_text(
            f"Sources must be between {sources['minimum']} and {sources['maximum']} on this server"
        )
        start.click()
        expect(page.locator("#form-error")).to_contain_text("2 fields are out of this server's range")
        # a budget below its minimum: the closed budget section opens at the field
        depth.fill("3")
        page.locator("#opt-sources").fill("2")
        expect(page.locator("#form-error")).to_be_hidden()  # every field fits again
        budget = page.locator("details.budget > summary")
        budget.click()
        page.locator('input[name="max_fetches"]').fill("0")
        budget.click()  # closed again: the error must still be found
        start.click()
        expect(page.locator('input[name="max_fetches"]')).to_be_focused()
        expect(page.locator("#bud-fetches-error")).to_contain_text("Fetches must be at least 1")
        assert bench.api.get("/api/runs").json()["runs"] == []

        # the question: its length against the server's limit, as it is typed, never cut
        limit = config["max_question_chars"]
        long_question = ("Why do durable checkpoints matter? " * 400)[: limit * 5]
        page.locator('input[name="max_fetches"]').fill("")
        page.get_by_label("Research question").fill(long_question)
        expect(page.get_by_label("Research question")).to_have_value(long_question)
        count = page.locator("#question-count")
        expect(count).to_have_class("question-count is-over")
        expect(count).to_contain_text(f"{len(long_question.strip()):,} / {limit:,} characters")
        expect(page.locator("#question-error")).to_contain_text(f"this server takes at most {limit:,}")
        start.click()
        expect(page.get_by_label("Research question")).to_be_focused()
        assert bench.api.get("/api/runs").json()["runs"] == []

        # all in range: the run starts with exactly what was typed
        page.get_by_label("Research question").fill(QUESTION)
        expect(count).to_have_text(f"{len(QUESTION)} / {limit:,} characters")
        start.click()
        expect(page.locator("#run-view")).to_be_visible()
        runs = bench.api.get("/api/runs").json()["runs"]
        assert len(runs) == 1
        options = bench.api.get(f"/api/runs/{runs[0]['run_id']}").json()["options"]
        assert options["max_research_loops"] == 3 and options["sources_to_fetch"] == 2
        bench.assert_clean()


def test_a_long_question_is_clamped_with_show_all(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        page.set_viewport_size({"width": 700, "height": 900})
        question = "How do durable checkpoints keep long research runs safe when a process stops? " * 20
        run_id = bench.api.post("/api/runs", json={"question": question.strip()}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        title = page.locator("#run-question")
        expect(title).to_have_class("run-question is-clamped")
        more = page.get_by_role("button", name="Show all")
        expect(more).to_be_visible()
        line = page.evaluate(LINE_HEIGHT)
        assert title.bounding_box()["height"] <= line * 3 + 2  # three lines at most
        expect(page.locator("#run-status")).to_be_in_viewport()
        expect(page.locator(".run-actions")).to_be_in_viewport()
        more.click()
        expect(page.get_by_role("button", name="Show less")).to_have_attribute("aria-expanded", "true")
        assert title.bounding_box()["height"] > line * 6
        bench.assert_clean()


def test_the_upload_limits_come_from_the_server(browser: Any, servers: Servers, tmp_path: Path) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0, max_upload_bytes=10_000) as bench:
        page = bench.page
        uploads = bench.api.get("/research/config.json").json()["uploads"]
        assert uploads == {"max_bytes": 10_000, "types": [".htm", ".html", ".md", ".pdf", ".txt"]}
        sent: list[str] = []
        page.on("request", lambda r: sent.append(r.url) if r.method == "PUT" else None)
        bench.goto("#documents")
        files = page.locator("#docs-files")
        expect(files).to_have_attribute("accept", ",".join(uploads["types"]))
        expect(page.locator("#docs-files-limits")).to_contain_text("at most 9.8 KB each")
        page.locator("#docs-collection").fill("notes")
        big = tmp_path / "big.md"
        big.write_text("# Big\n\n" + "word " * 4000, encoding="utf-8")
        files.set_input_files(str(big))
        line = page.locator('#docs-uploads .upload[data-file="big.md"]')
        expect(line).to_have_attribute("data-state", "refused")
        expect(line).to_contain_text("more than this server's limit of 10000 bytes")
        assert sent == []  # refused before anything was sent
        bench.assert_clean()


# Elements of the run view wider than their own box or sticking out of their column (scrollWidth against
# clientWidth; a box that scrolls on purpose, such as a code block, is left out).
OVERFLOW = """
() => {
  const out = [];
  const columns = [...document.querySelectorAll("#run-view :is(.main-col, .side-col, .run-head)")];
  for (const el of document.querySelectorAll("#run-view *")) {
    if (!el.getClientRects().length || el.closest(".sr-only")) continue;
    const style = getComputedStyle(el);
    const scrolls = ["auto", "scroll"].includes(style.overflowX);
    const name = `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join(".")}`;
    if (!scrolls && el.clientWidth && el.scrollWidth > el.clientWidth + 1 && style.display !== "inline") {
      out.push(`${name}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`);
    }
    const column = columns.find((c) => c.contains(el) && c !== el);
    if (column) {
      const box = el.getBoundingClientRect();
      const edge = column.getBoundingClientRect();
      if (box.width && box.right > edge.right + 1 && !el.closest("svg, pre, .tabs")) {
        out.push(`${name}: right ${Math.round(box.right)} beyond its column's ${Math.round(edge.right)}`);
      }
    }
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth) out.push(`page: ${page.scrollWidth} > ${page.clientWidth}`);
  return out.slice(0, 12);
}
"""
WIDTHS = (390, 700, 1280, 1440, 1920)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_the_reading_surface_fits_every_width(
    browser: Any, servers: Servers, tmp_path: Path, dark: bool
) -> None:
    with workbench(browser, servers, tmp_path, dark=dark, stage_delay_seconds=0.0) as bench:
        page = bench.page
        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(page.locator("#report h2").first).to_be_attached()
        expect(page.locator("#evidence .ev").first).to_be_attached()
        theme = "dark" if dark else "light"
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 1000})
            page.evaluate("Promise.all(document.getAnimations().map((a) => a.finished))")
            for main_tab, side_tab in (("Report", "Sources"), ("Activity", "Evidence")):
                page.get_by_role("tab", name=main_tab, exact=True).click()
                page.locator("#side-tabs").get_by_role("tab", name=side_tab).click()
                problems = page.evaluate(OVERFLOW)
                assert problems == [], f"{width}px {theme}, {main_tab} + {side_tab}: {problems}"
                if width in (700, 1920):
                    bench.shot(f"daily-run-{width}-{theme}-{main_tab.lower()}")
        bench.assert_clean()


NOTES = (
    "# Durable checkpoints\n\nA durable workflow checkpoint records the state of a research run after every "
    "stage, and SQLite write-ahead logging keeps each write safe, so a resumed run continues from the latest "
    "checkpoint instead of starting over.\n\n## Write-ahead logging\n\n- SQLite's **write-ahead log** "
    "appends changes to a separate file\n- checkpoints copy them into the database later, which keeps "
    "long workflow runs safe when a process stops mid-write.\n"
)


def test_passages_citations_sources_and_calls_can_be_read(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        put = bench.api.put(
            "/api/collections/notes/documents/checkpoints.md",
            content=NOTES.encode(),
            headers={"Content-Type": "text/markdown", "X-Requested-With": "deepresearch-workbench"},
        )
        assert put.status_code in (200, 201), put.text
        run_id = bench.api.post(
            "/api/runs", json={"question": QUESTION, "options": {"corpus": "notes"}}
        ).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)

        # passages rendered (the server's rule), never raw Markdown
        page.locator("#side-tabs").get_by_role("tab", name="Evidence").click()
        passages = page.locator("#evidence .ev-passage")
        expect(passages.first).to_be_visible()
        texts = passages.evaluate_all("els => els.map((e) => e.innerText)")
        assert texts and not [t for t in texts if re.search(r"(^|\n)#{1,6} |\*\*", t)], texts
        evidence = bench.api.get(f"/api/runs/{run_id}/artifacts/evidence.json").json()["evidence"]
        if any(item["passage"].lstrip().startswith("#") for item in evidence):
            expect(page.locator("#evidence .ev-passage :is(h1, h2)").first).to_be_attached()

        # hover and focus on [n] show the quoted passage
        page.get_by_role("tab", name="Report", exact=True).click()
        cite = page.locator("#report a.cite").first
        n = int(cite.get_attribute("data-source") or "0")
        cite.hover()
        tip = page.locator("#cite-preview")
        expect(tip).to_be_visible()
        expect(tip).to_contain_text(f"[{n}]")
        quoted = next(item["passage"] for item in evidence if item["n"] == n)
        expect(tip.locator(".source-passage").first).to_contain_text(re.findall(r"[A-Za-z]{6,}", quoted)[0])
        page.mouse.move(0, 0)
        expect(tip).to_be_hidden()
        cite.focus()
        expect(tip).to_be_visible()
        expect(cite).to_have_attribute("aria-describedby", "cite-preview")
        page.keyboard.press("Escape")
        expect(tip).to_be_hidden()

        # a source view with the fetched text and its passages
        page.locator("#side-tabs").get_by_role("tab", name="Sources").click()
        # a local document's date is when its file changed, in words (never "published" and raw ISO)
        local = page.locator("#sources .source", has_text="Durable checkpoints").first
        expect(local.locator(".source-meta")).to_contain_text(
            re.compile(r"file changed \w{3} \d{1,2}, \d{4}")
        )
        expect(local.locator(".source-meta")).not_to_contain_text(re.compile(r"published|\d{4}-\d{2}-\d{2}"))
        page.locator(f"#src-{n}").get_by_role("button", name="Read the source").click()
        reader = page.locator("dialog.source-reader")
        expect(reader).to_be_visible()
        expect(reader.locator(".source-passages li").first).to_be_visible()
        expect(reader.locator(".source-text-body")).to_contain_text("checkpoint")
        expect(reader).to_contain_text("characters")
        bench.shot("daily-source-reader")
        page.keyboard.press("Escape")
        expect(reader).to_be_hidden()

        # call rows open: what a query returned, where a fetch ended
        page.get_by_role("tab", name="Activity").click()
        search = page.locator('#timeline .call[data-kind="search"] .call-target').first
        search.click()
        expect(search).to_have_attribute("aria-expanded", "true")
        more = page.locator('#timeline .call[data-kind="search"] .call-more').first
        expect(more).to_contain_text("Query:")
        expect(more.locator(".call-results li").first).to_be_visible()
        fetch = page.locator('#timeline .call[data-kind="fetch"] .call-target').first
        fetch.click()
        expect(page.locator('#timeline .call[data-kind="fetch"] .call-more').first).to_contain_text(
            "Ended at:"
        )
        search.click()
        expect(search).to_have_attribute("aria-expanded", "false")
        bench.assert_clean()


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
