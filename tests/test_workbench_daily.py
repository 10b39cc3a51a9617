"""The workbench for daily use (issue 11) in a real browser against the real runner, with the fixtures of
test_workbench.py: honest inputs (the server's bounds from config.json, an out-of-range value is an error that
starts nothing, never a silently changed one; the question's length shown before it is too long; a long title
clamped with "show all"; the upload limits offered before anything is sent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
