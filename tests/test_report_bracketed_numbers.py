"""A number in brackets that is no citation stays text, from the Markdown to the HTML (session 43, the
thirteenth reading: the asker's "[1] + suspended (tty output)" became a citation of source 1 in seven
template lines and was counted by the check; a page's escaped "filename\\[9\\]" lost its escape when the
link rule rebuilt the report, and the HTML linked it to a source 9 that did not exist)."""

from __future__ import annotations

import re
from pathlib import Path

from deepresearch.engine.core import open_engine
from deepresearch.report.links import sanitize_links
from deepresearch.report.render import cited_numbers, render_html
from tests._search_helpers import corpus_settings

OK = "https://ok.example/a"


def test_a_rebuild_keeps_a_pages_escaped_number_text_and_a_marker_a_marker() -> None:
    # raw HTML in a quote ("EXIF:<tag>") makes the link rule rebuild the whole report
    markdown = "- It writes filename\\[9\\] for each frame, as EXIF:<tag> says [2].\n"
    rebuilt, _ = sanitize_links(markdown, {OK})
    assert rebuilt != markdown  # rebuilt: the raw HTML is text now
    assert "filename\\[9\\]" in rebuilt and cited_numbers(rebuilt) == {2}, rebuilt


def test_the_html_links_only_the_markdowns_markers() -> None:
    markdown = f"# Q\n\n- It reads args\\[1\\] before the lamp [1].\n\n## Sources\n\n1. [Lamp]({OK})\n"
    html = render_html(markdown, "Q", {OK})
    assert "args[1] before" in html  # shown as written, not a link
    assert len(re.findall(r'class="cite">\[1\]</a>', html)) == 1  # the marker


async def test_the_askers_bracketed_number_is_theirs_not_a_citation(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lamp.html").write_text(
        "<html><head><title>Keeping the lamp lit</title></head><body><main><h1>Keeping the lamp lit</h1>"
        "<p>A lamp started from the keeper's shell in the background stops when it reads from the "
        "terminal. Start the lamp with its input from /dev/null to keep it lit in the background.</p>"
        "</main></body></html>"
    )
    settings = corpus_settings(tmp_path, corpus)
    # (one clause: after the quotation's full stop, "How do I keep it lit?" asks of the lamp alone)
    question = 'Why does my lamp stop with "[1] + suspended (tty input)" when started with &?'
    async with open_engine(settings) as engine:
        run = await engine.create_run(question)
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    report = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    assert report.startswith('# Why does my lamp stop with "\\[1\\] + suspended (tty input)" when')
    # every line that names the question writes its number as the asker's
    named = [line for line in report.splitlines() if "suspended (tty input)" in line]
    assert len(named) >= 3 and all('"\\[1\\] + suspended' in line for line in named), named
    html = (folder / "deepresearch-report.html").read_text(encoding="utf-8")
    assert '"[1] + suspended' in html and '"<a href="#source-1"' not in html
