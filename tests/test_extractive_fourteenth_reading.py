"""A fourteenth reading (CMake's and BIND 9's Sphinx pages - bench/quality/JOURNAL.md, session 44): each case
is the smallest page that read wrong there, with its defect in a comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deepresearch.extractive.reading.leaning import faq
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages
from deepresearch.extractive.screening import rank_sources
from deepresearch.report.digest import extractive_report_body
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import extract_text
from tests._report_helpers import finding


def _labels(body: str) -> dict[str, str]:
    """Each quote of the page, by its text: the label it is quoted under."""
    page = f"<html><head><title>Lamp</title></head><body>{body}</body></html>"
    text = extract_text(Path("lamp.html"), page.encode()).text
    return {q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings)}


def test_the_prose_after_a_definition_list_is_the_sections_not_its_last_terms() -> None:
    # cmake-toolchains(7): "CMake find_* commands will look in the sysroot ..." labelled CMAKE_<LANG>_COMPILER
    labels = _labels(
        "<h1>Lamps</h1><section><h2>Trimming for Oil Lamps</h2><p>A typical trimming kit has content such "
        "as:</p><dl><dt><code>LAMP_SHEARS</code></dt><dd><p>is optional, and may be given if the shears are "
        "sharp.</p></dd><dt><code>LAMP_WICK</code></dt><dd><p>variable may be set to the length of the wick "
        "in inches.</p></dd></dl><p>The keeper trims the wick at dusk, and the soot tray is emptied in all "
        "cases.</p></section>"
    )
    assert labels["variable may be set to the length of the wick in inches."] == "LAMP_WICK", labels
    assert labels["The keeper trims the wick at dusk, and the soot tray is emptied in all cases."] == (
        "Trimming for Oil Lamps"
    )
    # ... and a short sentence that announces a sample after the list (C1's "For example, a toolchain file
    # might contain:")
    labels = _labels(
        "<h1>Lamps</h1><section><h2>Trimming</h2><dl><dt><code>LAMP_WICK</code></dt><dd><p>variable may be "
        "set to the length of the wick.</p></dd></dl><p>For example, a kit might contain:</p><pre>shears "
        "wick-trimmer oil-can</pre></section>"
    )
    assert labels["For example, a kit might contain: `shears wick-trimmer oil-can`"] == "Trimming", labels


def test_a_key_in_lower_case_is_a_term_though_a_field_bears_its_name() -> None:
    # CMake's presets: "description" read as a field, its text quoted under "displayName"
    labels = _labels(
        "<h1>Presets</h1><dl><dt><code>displayName</code></dt><dd><p>An optional string with a "
        "human-friendly name of the lamp.</p></dd><dt><code>description</code></dt><dd><p>An optional "
        "string with a human-friendly description of the lamp.</p></dd></dl>"
    )
    assert labels["An optional string with a human-friendly description of the lamp."] == "description"
    # ... a field's name in capitals still names no entry: its text stays under the entry's name
    labels = _labels(
        '<h1>Statements</h1><dl><dt id="lamp-statement-wick">wick</dt><dd><p><strong>Grammar: </strong>'
        '<div class="highlight"><pre>wick { length &lt;integer&gt;; };</pre></div></p>'
        "<p><strong>Tags: </strong>lamp</p><p>Sets the length of the wick that the keeper trims each "
        "evening.</p></dd></dl>"
    )
    assert labels["Sets the length of the wick that the keeper trims each evening."] == "wick", labels


def test_an_faqs_question_in_a_definition_list_labels_its_answer() -> None:
    # BIND's DNSSEC guide: "Yes and no. ..." under the term of the list before, its question dropped
    labels = _labels(
        "<h1>Lamps</h1><h2>Commonly Asked Questions</h2><dl><dt><code>LAMP_WICK</code></dt><dd><p>The "
        "length of the wick.</p></dd></dl><dl><dt>Can I use the same wick for two lamps?</dt><dd><p>Yes "
        "and no. Good practice suggests that each lamp burn its own wick.</p></dd></dl>"
    )
    assert labels["Yes and no. Good practice suggests that each lamp burn its own wick."] == (
        "Can I use the same wick for two lamps?"
    ), labels


async def test_a_sphinx_builds_pages_copied_without_its_theme_are_still_its_pages(tmp_path: Path) -> None:
    # the reading copied bind9-doc's pages without _static/: its index and search page were sources
    root = tmp_path / "docs"
    root.mkdir()
    page = "<html><head><title>{}</title></head><body><p>{}</p></body></html>"
    (root / "chapter2.html").write_text(page.format("Chapter", "The lantern wick is lit at dusk."))
    (root / "genindex.html").write_text(page.format("Index", "lantern wick, 1, 2, 3"))
    (root / "search.html").write_text(page.format("Search", "lantern wick: activate JavaScript"))
    (root / "notes").mkdir()  # without a search page beside it a genindex.html is the user's own page
    (root / "notes" / "genindex.html").write_text(page.format("Genes", "The lantern wick gene index."))
    corpus = CorpusIndex(tmp_path / "index.db", root)
    await corpus.reindex()
    found = sorted(r.url for r in await corpus.search("lantern wick", 10))
    assert found == ["corpus://chapter2.html", "corpus://notes/genindex.html"], found


@pytest.mark.parametrize(
    "warning",
    [
        "The log is kept in a binary format and should not be edited by hand.",  # BIND's journal file
        "Enabling the fog horn at night is thus not recommended for a manned station.",
    ],
)
def test_should_not_and_not_recommended_are_warnings(warning: str) -> None:
    main = "How does a lighthouse keep its log?"
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [main]},
        "sources": [{"n": 1, "url": "corpus://log.html", "title": "Log"}],
        "evidence": [{"sub_question": main}],
        "findings": {
            "fact_reviewer": {
                "findings": [
                    finding(
                        "The keeper writes each lamp lighting into the log.", 1, 0.9, 0, sub_question=main
                    )
                ]
            },
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {"findings": [finding(warning, 1, 0.8, 1, sub_question=main)]},
        },
    }
    rest = extractive_report_body(state).split("## Disagreements and risks")[1].split("## Open questions")[0]
    assert warning[:-1] in rest, rest


def test_a_contents_entry_that_asks_labels_nothing() -> None:
    # PostgreSQL's chapter contents, a <dl class="toc">: "32.1. What Is JIT compilation?" is a link
    labels = _labels(
        '<h1>Lamps</h1><dl class="toc"><dt><span class="sect1"><a href="why.html">1.1. Why Is the Lamp '
        "Trimmed?</a></span></dt></dl><p>The keeper trims the wick of every lamp before it is lit.</p>"
    )
    assert labels["The keeper trims the wick of every lamp before it is lit."] == "", labels


def test_a_page_that_is_one_entrys_names_the_subject_its_first_sentence_leaves_out() -> None:
    # CMake's variable pages: "Specifies the build type on single-configuration generators ..." was no quote
    labels = _labels(
        "<h1>LAMP_WICK_LENGTH</h1><p>Specifies the length of the wick on single-flame lamps (e.g. the "
        "harbour lamps). Typical values include short, long and trimmed.</p>"
    )
    assert labels["Specifies the length of the wick on single-flame lamps (e.g. the harbour lamps)."] == (
        "LAMP_WICK_LENGTH"
    ), labels
    # ... not a page titled in words: its sentence says nothing without a subject
    labels = _labels("<h1>Wick lengths</h1><p>Specifies the length of the wick on single-flame lamps.</p>")
    assert "Specifies the length of the wick on single-flame lamps." not in labels, labels


def test_a_synopsis_with_optional_parts_is_no_question() -> None:
    # PL/Tcl's "spi_exec ?-count n? ?-array name? command ?loop-body?" is a term, not an FAQ's question
    assert faq("Can I use the same wick for two lamps?") and not faq("Why Is the Lamp Trimmed? See below?")
    assert not faq("lamp_light ?-count n? ?-wick name? command ?loop-body?")
    assert not faq("1.1. Why Is the Lamp Trimmed?")


def test_each_chapter_of_a_guide_on_one_page_may_answer_with_a_question_of_its_own() -> None:
    # BIND's DNSSEC guide, one page: its FAQ's "Do I need to have special client software to use DNSSEC?"
    # took the place of the chapter "How Do I Know I Have a Validation Problem?" (one question per page)
    guide = (
        "# Lamp guide\n\n## Introduction\n\nThis guide is for the keepers of lighthouse lamps.\n\n"
        "## Lenses\n\n### How does a lighthouse lens concentrate the light of the lamp?\n\n"
        "Rings of glass around the lamp bend its light into one beam.\n\n## Questions\n\n"
        "### Does a lighthouse lens concentrate the lamp's light in fog?\n\n"
        "In fog the lens still concentrates the light of the lamp, but its beam reaches less far.\n\n"
        "### Does a lighthouse lens concentrate the lamp's light at dawn?\n\n"
        "At dawn the lens concentrates the light of the lamp as it does at night.\n"
    )
    question = "How does a lighthouse lens concentrate the lamp's light?"
    sources = [{"id": "S1", "n": 1, "title": "Lamp guide", "text": guide}]
    main = rank_sources(question, [question], sources, [4])[0][0]
    answering = {p["headings"][-1] for _, p in main if p.get("answer")}
    assert "How does a lighthouse lens concentrate the light of the lamp?" in answering, answering
    # ... one of the list of questions, not both: each answers another question
    assert len(answering & {h for h in answering if "fog" in h or "dawn" in h}) == 1, answering


def test_an_faq_in_chapters_answers_with_one_entry() -> None:
    # gitfaq(7): its entries under "Configuration", "Credentials", ... each answered another question
    faq = "# Lamp FAQ\n\n" + "".join(
        f"## {chapter}\n\n### How does the lighthouse lens concentrate the lamp's light {when}?\n\n"
        f"The lens concentrates the light of the lamp {when} with its rings.\n\n"
        f"### Why is the lighthouse lens cleaned {when}?\n\nThe lamp's soot dims the lens light {when}.\n\n"
        for chapter, when in (("Nights", "at night"), ("Weather", "in fog"))
    )
    question = "How does a lighthouse lens concentrate the lamp's light?"
    sources = [{"id": "S1", "n": 1, "title": "Lamp FAQ", "text": faq}]
    main = rank_sources(question, [question], sources, [4])[0][0]
    answering = {p["headings"][-1] for _, p in main if p.get("answer")}
    assert len({h for h in answering if h.endswith("?")}) == 1, answering


def test_a_sources_quotes_are_listed_in_its_pages_order() -> None:
    # BIND's "This key may then be copied to both hosts" stood eleven lines above the tsig-keygen sentence it
    # follows on the page: its passage (an answering section's) came first in the evidence
    main = "How do I secure the lamp room with a shared key?"
    filler = [  # the best quotes, long enough to fill the Summary
        "The keeper of a lamp room guards it with a shared key that both keepers hold, and the key opens the "
        "brass door of the lamp room and the cupboard where the oil for the lamp is kept through the winter.",
        "A lamp room secured with a shared key can be entered only by the two keepers, so the lamp cannot be "
        "put out by a visitor at night, and the log of who entered is kept by the door of the lamp room.",
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "question": main,
        "plan": {"sub_questions": [main]},
        "sources": [{"n": 1, "url": "corpus://keys.html"}, {"n": 2, "url": "corpus://rooms.html"}],
        "evidence": [
            {"sub_question": main, "sub_question_index": 0, "passage_id": "S1.5", "passage": "", "n": 1},
            {"sub_question": main, "sub_question_index": 0, "passage_id": "S1.4", "passage": "", "n": 1},
            {"sub_question": main, "sub_question_index": 0, "passage_id": "S2.1", "passage": "", "n": 2},
        ],
        "findings": {
            "fact_reviewer": {
                "findings": [
                    finding(filler[0], 1, 0.99, 2, sub_question=main) | {"citations": [2]},
                    finding(filler[1], 1, 0.98, 2, sub_question=main) | {"citations": [2], "order": [2, 1]},
                    finding(
                        "This key may then be copied to both lamp rooms by the keeper.",
                        1,
                        0.4,
                        0,
                        sub_question=main,
                    ),
                    finding(
                        "Shared keys for a lamp room are cut with the key press.",
                        1,
                        0.3,
                        1,
                        sub_question=main,
                    ),
                ]
            },
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {"findings": []},
        },
    }
    findings = extractive_report_body(state).split("## Findings")[1].split("## Disagreements")[0]
    assert findings.index("cut with the key press") < findings.index("copied to both lamp rooms"), findings


def test_a_front_matters_acknowledgements_are_no_evidence() -> None:
    # BIND's DNSSEC guide: "This document was originally authored by Josh Kuo ..." in 5 of 8 reports
    passage = "## Acknowledgements\n\nThis document was originally written by the keeper of the north lamp."
    assert quotes(passage, 1, ("Lamp guide", "Acknowledgements")) == []
    assert quotes(passage, 1, ("Lamp guide", "1.3. Acknowledgments")) == []
    lit = "## Acknowledging a lamp\n\nThe keeper acknowledges a lamp's signal by raising the flag at dusk."
    assert quotes(lit, 1, ("Lamp guide", "Acknowledging a lamp")), (
        "a section on acknowledging is no front matter"
    )
