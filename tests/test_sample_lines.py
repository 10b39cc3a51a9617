"""A sample's lines, kept apart from the page to the report: a <pre> sample is one line of the corpus text
(the search and the sentence rules read it so), its line breaks a mark of their own (LINE_BREAK), and a
report shows each line as a code span of its own. Joined by spaces, a report quoted "$ cd .. $ git clone
super cloned $ cd cloned" and a .gitignore as one line (bench/quality/JOURNAL.md, session 42)."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.engine.core import open_engine
from deepresearch.extractive.reading.text import LINE_BREAK, split_sentences
from deepresearch.report.render import check_citations, render_fragment
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import extract_text
from deepresearch.search.preformatted import prose_text
from peers.servers import Servers
from tests._search_helpers import corpus_settings

CLONE_PAGE = """<html><head><title>Copying the logbook</title></head><body><main>
<h1>Copying the lighthouse logbook</h1>
<p>The logbook lives in a repository in the tower, beside the lamp room. To copy the lighthouse logbook to a
new machine, run these commands:</p>
<pre>$ cd ..
$ git clone tower logbook
$ cd logbook
</pre>
<p>The copy keeps every entry that the keepers wrote since the tower was built, with its keeper's name.</p>
<p>A logbook copied this way can be read on the new machine without the tower's network.</p>
</main></body></html>"""

IGNORE_PAGE = """<html><head><title>Ignoring lamp files</title></head><body><main>
<h1>Ignoring the lamp's files</h1>
<p>The keepers leave the lamp's oil records out of the logbook. The ignore file of the logbook reads:</p>
<pre># leave out every oil record
/oil/*
!/oil/summary.txt
</pre>
<p>Only the oil summary is kept with the logbook entries.</p>
</main></body></html>"""


def _text(page: str, name: str = "clone.html") -> str:
    return extract_text(Path(name), page.encode()).text


def test_a_samples_lines_are_one_line_of_the_corpus_text_kept_apart_by_their_mark() -> None:
    text = _text(CLONE_PAGE)
    sample = LINE_BREAK.join(["$ cd ..", "$ git clone tower logbook", "$ cd logbook"])
    assert sample in text.split("\n"), text
    # as long as the line the spaces made, and a sentence's end at a line's end still ends it
    assert len(sample) == len("$ cd .. $ git clone tower logbook $ cd logbook")
    assert split_sentences(f"Run it.{LINE_BREAK}Then stop.") == ["Run it.", "Then stop."]
    # a comment that opens a sample is escaped as before: no heading
    ignore = LINE_BREAK.join(["\\# leave out every oil record", "/oil/*", "!/oil/summary.txt"])
    assert ignore in _text(IGNORE_PAGE)


def test_an_examples_lines_in_a_manual_set_in_pre_stay_apart_and_its_prose_stays_one_paragraph() -> None:
    block = "\n".join(
        [
            "The keeper can change the wick of the lamp in the tower at any time of the night, when the",
            "flame burns low and the ships still pass the point in the dark. First trim the wick, then",
            "set its length with the wick command:",
            "",
            "\t:set wicklength=3",
            "\t:trim 8",
            "",
            "The trim command cuts the wick to the length that the keeper set before, and the lamp burns",
            "with the same flame as before it was trimmed.",
        ]
        * 25
    )
    paragraphs = (prose_text(block) or "").split("\n\n")
    assert f":set wicklength=3{LINE_BREAK}:trim 8" in paragraphs, paragraphs[:6]
    assert not any(LINE_BREAK in p for p in paragraphs if p.startswith("The ")), paragraphs[:6]


def test_the_workbench_shows_a_samples_lines_as_a_block_even_with_backticks_in_it() -> None:
    sample = LINE_BREAK.join(["VERSION=`lamp --version`", 'echo "Lighting `basename $PWD`"'])
    shown = render_fragment(f"Light it so:\n\n{sample}\n\nThe lamp burns.", set())
    block = '<pre><code>VERSION=`lamp --version`\necho "Lighting `basename $PWD`"\n</code></pre>'
    assert block in shown, shown


def test_a_report_shows_a_samples_lines_as_spans_and_the_mark_nowhere() -> None:
    passages = {1: [f"To copy it, run these commands: $ cd ..{LINE_BREAK}$ git clone tower logbook"]}
    body = (
        f"- To copy it, run these commands: `$ cd ..{LINE_BREAK}$ git clone tower logbook` [1].\n"
        f"- A model copied the mark: run cd ..{LINE_BREAK}git clone tower logbook [1]."
    )
    checked, check = check_citations(body, passages, set(), quoted=True)
    assert "run these commands: `$ cd ..` `$ git clone tower logbook` [1]." in checked, checked
    assert "run cd .. git clone tower logbook [1]." in checked, checked
    assert LINE_BREAK not in checked and check.supported == check.checked == 2


async def test_the_search_finds_a_samples_words_and_its_snippet_holds_no_mark(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "clone.html").write_text(CLONE_PAGE)
    (corpus / "ignore.html").write_text(IGNORE_PAGE)
    index = CorpusIndex(tmp_path / "index.db", corpus)
    await index.reindex()
    # words at either side of a line break are words of their own ("..", "$" and "git" were never one)
    (hit,) = await index.search("git clone tower logbook", 1)
    assert hit.url == "corpus://clone.html"
    (hit,) = await index.search("oil summary", 1)
    assert hit.url == "corpus://ignore.html" and LINE_BREAK not in hit.snippet, hit.snippet
    # ... nor the escape the corpus text puts before the comment that opens the sample
    (hit,) = await index.search("leave out every oil record", 1)
    assert "# leave out every oil record /oil/*" in hit.snippet and "\\#" not in hit.snippet, hit.snippet


async def test_an_extractive_report_quotes_a_sample_line_by_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "clone.html").write_text(CLONE_PAGE)
    (corpus / "ignore.html").write_text(IGNORE_PAGE)
    settings = corpus_settings(tmp_path, corpus)
    async with open_engine(settings) as engine:
        run = await engine.create_run("How do I copy the lighthouse logbook to a new machine?")
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    folder = settings.workspace_dir / (final.artifact_dir or "")
    report = (folder / "deepresearch-report.md").read_text(encoding="utf-8")
    assert "`$ cd ..` `$ git clone tower logbook` `$ cd logbook`" in report, report
    assert LINE_BREAK not in report
    assert LINE_BREAK not in (folder / "deepresearch-report.html").read_text(encoding="utf-8")
    # the report's JSON files hold a sample as Markdown (a script met "\u2424" between its lines); the
    # stage's own file keeps the engine's text, which the bench replays
    written = (folder / "evidence.json").read_text(encoding="utf-8")
    assert LINE_BREAK not in written and "\\u2424" not in written
    assert LINE_BREAK in (folder / "evidence-table.json").read_text(encoding="utf-8")
    evidence = json.loads(written)
    check = evidence["citation_check"]
    assert check["citations_supported"] == check["citations_checked"] > 0
    # the workbench shows a passage's sample as a block of its lines (the one rendering rule)
    (passage,) = {e["passage"] for e in evidence["evidence"] if "git clone tower" in e["passage"]}
    assert "```\n$ cd ..\n$ git clone tower logbook\n$ cd logbook\n```" in passage, passage
    shown = render_fragment(passage, set())
    assert "<pre><code>$ cd ..\n$ git clone tower logbook\n$ cd logbook\n</code></pre>" in shown, shown
    assert LINE_BREAK not in shown


async def test_a_model_is_shown_a_samples_lines_not_their_mark(servers: Servers, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "clone.html").write_text(CLONE_PAGE)
    settings = servers.settings(tmp_path, llm=True, corpus_dir=corpus, corpus_only=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run("How do I copy the lighthouse logbook to a new machine?")
        final = await engine.execute(run.run_id)
    assert final.status == "completed", final.error
    prompts = [json.dumps(body, ensure_ascii=False) for body in servers.llm.calls]
    shown = [p for p in prompts if "git clone tower logbook" in p]
    # the screening's and the writers' passages hold the sample as a block of its lines
    assert len(shown) >= 2 and all("$ cd ..\\n$ git clone tower logbook\\n$ cd logbook" in p for p in shown)
    assert not any(LINE_BREAK in p for p in prompts)
