"""Pages of the thirteenth reading's generators, read as they show (session 43: FFmpeg's texi2html manuals and
Doxygen pages, gnuplot's LaTeX2HTML pages, ImageMagick's site - /tmp/probe26-findings.md then). Each case is
the shape seen there, on words of our own."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages
from deepresearch.search.corpus import CorpusIndex, IndexStats
from deepresearch.search.documents import extract_text


def _text(body: str, head: str = "<title>Lamp</title>") -> str:
    page = f"<html><head>{head}</head><body>{body}</body></html>"
    return extract_text(Path("lamp.html"), page.encode()).text


def test_an_empty_main_role_before_the_main_content_is_passed_over() -> None:
    # ImageMagick's template: an empty <div role="main"> before its <main> (123 of 126 pages read as empty)
    text = _text(
        '<div role="main" class="container"> </div><main class="container"><h1>Trimming</h1>'
        "<p>Trim the wick before the lamp is lit each evening.</p></main>"
    )
    assert "Trim the wick before the lamp is lit each evening." in text


def test_a_headings_hidden_back_link_is_no_part_of_it() -> None:
    # texi2html: "3.19 How do I run ffmpeg as a background task? TOC"
    text = _text(
        '<h1>Lamp FAQ</h1><h3 class="section">3.1 Why does the lamp smoke?<span class="pull-right">'
        '<a class="anchor hidden-xs" href="#smoke" aria-hidden="true">#</a> <a class="anchor hidden-xs"'
        'href="#toc-smoke" aria-hidden="true">TOC</a></span></h3><p>A wick trimmed too long smokes.</p>'
    )
    assert "### 3.1 Why does the lamp smoke?\n" in text, text


def test_doxygen_says_where_an_entry_is_defined_and_who_calls_it_in_no_text() -> None:
    text = _text(
        "<h1>Lamp API</h1><div class='memdoc'><p>Light the lamp with the given wick length.</p>"
        '<p class="definition">Definition at line 564 of file lamp.h.</p>'
        '<p class="reference">Referenced by trim(), and main().</p></div>'
    )
    assert "Light the lamp with the given wick length." in text
    assert "Definition at line" not in text and "Referenced by" not in text


def test_latex2html_navigation_and_its_page_references_are_no_text() -> None:
    text = _text(
        '<DIV CLASS="navigation"><B> Next:</B> <A HREF="node2.html">Trim</A> <B> Up:</B> '
        '<A HREF="node0.html">Lamps</A></DIV><H1>Lighting</H1><P>Light the lamp after trimming, see '
        'trim (p.&nbsp;<A HREF="node2.html#trim"><IMG ALT="[*]" SRC="crossref.png"></A>), and fill it.</P>'
        '<DIV CLASS="navigation"><B> Next:</B> <A HREF="node2.html">Trim</A></DIV>'
    )
    assert "Next:" not in text and "Up:" not in text
    assert "Light the lamp after trimming, see trim, and fill it." in text, text


async def test_files_that_hold_no_text_are_counted_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lamp.html").write_text(
        "<html><body><main><p>Trim the wick each evening.</p></main></body></html>"
    )
    for name in ("a.html", "b.html", "c.html", "d.html"):
        (corpus / name).write_text("<html><body><main><script>draw()</script></main></body></html>")
    index = CorpusIndex(tmp_path / "index.db", corpus)
    with caplog.at_level(logging.WARNING, logger="deepresearch.search.corpus"):
        assert await index.reindex() == IndexStats(added=1, empty=4)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning == "corpus: 4 of 5 files hold no text to search (a.html, b.html, c.html, ...)"
    assert await index.reindex() == IndexStats(unchanged=5)  # recorded: not read again while unchanged


def test_a_terms_description_after_a_list_nested_in_it_is_the_terms_again() -> None:
    # texi2html: "-hwaccel" over its values "none" ... "qsv", then "Note that most acceleration methods ..."
    page = _text(
        "<h1>Lamp options</h1><dl><dt><samp>-flame <var>kind</var></samp></dt><dd><p>Choose the flame. "
        "The kinds are:</p><dl><dt>steady</dt><dd><p>Burn without flicker for the whole night.</p></dd>"
        "<dt>signal</dt><dd><p>Flash once every ten seconds for passing ships.</p></dd></dl>"
        "<p>Note that most flames are meant for calm weather and will not last in a storm.</p></dd>"
        "<dt><samp>-wick <var>length</var></samp></dt><dd><p>Set the wick length first.</p></dd></dl>"
    )
    labels = {
        q.text: q.section for p in heading_passages(page) for q in quotes(p.text, 1, p.headings, p.term)
    }
    assert labels["Note that most flames are meant for calm weather and will not last in a storm."] == (
        "-flame kind"
    ), labels
    assert labels["Flash once every ten seconds for passing ships."] == "signal", labels


def test_an_entry_with_an_id_is_not_written_again() -> None:
    page = _text(
        '<h1>Lamp API</h1><dl><dt id="lamp.light">lamp.light(kind)</dt><dd><p>Light the lamp.</p>'
        "<dl><dt>kind</dt><dd><p>The flame to burn.</p></dd></dl><p>It returns the lit lamp.</p></dd></dl>"
    )
    assert page.count("lamp.light(kind)") == 1, page


def test_a_remark_under_an_admonitions_title_is_not_labelled_with_it() -> None:
    passage = (
        "## Lighting\n\nlight():\n\nLights the lamp with the wick trimmed to its set length.\n\n"
        "Warning:\n\nThe lamp may smoke until the wick has burnt for a minute or two.\n"
    )
    labels = {q.text: q.section for q in quotes(passage, 1, ["Lamp", "Lighting"])}
    assert labels["The lamp may smoke until the wick has burnt for a minute or two."] == "Lighting", labels


def test_a_fields_name_is_no_sample_of_the_sentence_before_it() -> None:
    passage = (
        "## Inputs\n\nAny wick and any oil can serve as input to the lamp:\n\nExamples:\n\n- lamp -w cotton\n"
    )
    assert not any("`Examples:`" in q.text for q in quotes(passage, 1, ["Lamp", "Inputs"]))


def test_an_editors_note_in_brackets_is_no_sentence_before_the_first() -> None:
    # gnuplot's "[DEPRECATED in version 5.4]" over "This command is deprecated in favor of ...": dropped
    passage = "# Rekindle\n\n[DEPRECATED in version 5.4]\n\nThis command is deprecated in favor of timers.\n"
    assert [(q.section, q.text) for q in quotes(passage, 1, ["Rekindle"])] == [
        ("Rekindle", "This command is deprecated in favor of timers.")
    ]


def test_a_list_not_announced_or_a_section_after_it_takes_no_term_again() -> None:
    # SQLite's unclosed lists hold the sections after them inside a term's description
    page = _text(
        "<h1>Lamp constants</h1><dl><dt>LAMP_STEADY</dt><dd><p>Burn without flicker.</p>"
        "<dl><dt>LAMP_DIM</dt><dd><p>Burn low.</p></dd></dl><p>Every lamp burns steady by default.</p>"
        "<dl><dt>LAMP_OUT</dt><dd><p>Put the lamp out.</p></dd></dl><h2>Lighting</h2><p>Light it at dusk.</p>"
        "</dd></dl>"
    )
    assert page.count("LAMP_STEADY") == 1, page


def test_latex2html_placeholders_for_formulas_it_could_not_set_are_no_text() -> None:
    # gnuplot's "set boxwidth <width>": LaTeX2HTML wrote "<" and ">" as "4#4" and "5#5"
    text = _text(
        '<H1>Boxes</H1><P>The default width of the box can be set via <B>set boxwidth <SPAN CLASS="MATH">'
        '4#4</SPAN>width<SPAN CLASS="MATH">5#5</SPAN></B> or may be given with the plot.</P>'
        '<P>The result is <SPAN CLASS="MATH">x^2</SPAN> at most.</P>'
    )
    assert "#" not in text.replace("# Boxes", ""), text
    assert "set boxwidth width" in text and "x^2" in text, text
