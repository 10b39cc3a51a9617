"""The workbench for daily use (issue 11) in a real browser against the real runner, with the fixtures of
test_workbench.py: honest inputs (the server's bounds from config.json, an out-of-range value is an error that
starts nothing, never a silently changed one; the question's length shown before it is too long; a long title
clamped with "show all"; the upload limits offered before anything is sent) and the reading surface (it fits
every width in both themes; passages, citations, sources and calls can be read). History, downloads, the theme
and plain errors are in test_workbench_daily_tools.py.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Servers
from tests.test_workbench import NOTES, QUESTION, browser, expect, workbench

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
        expect(page.locator("#docs-files-limits")).to_contain_text("at most 10 kB each")
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
        # "cited N× in the report" counts the text's citations, not the Sources list's own "[n]"
        markdown = bench.api.get(f"/api/runs/{run_id}/artifacts/deepresearch-report.md").text
        cited = Counter(int(m) for m in re.findall(r"\[(\d{1,3})\]", markdown.split("\n## Sources")[0]))
        rows = page.locator("#sources .source[id^='src-']")
        expect(rows.first).to_be_visible()
        for row in rows.all():
            number = int((row.get_attribute("id") or "src-0").removeprefix("src-"))
            tag = row.locator(".tag.is-cited")
            if cited[number]:
                expect(tag).to_have_text(f"cited {cited[number]}× in the report")
            else:
                expect(tag).to_have_count(0)
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
