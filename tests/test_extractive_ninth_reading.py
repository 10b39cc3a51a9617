"""What a ninth reading on manuals nobody tuned on found (issue [quality] part 2; libvirt's docutils pages and
the Rust book, bench/quality/JOURNAL.md session 39): sentences that name a type or an element in angle
brackets, "a.k.a.", docutils' inline code, and what the report made of them. Invented inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import code_like, heading_passages, split_sentences
from deepresearch.search.documents import extract_text


def _page(body: str) -> str:
    """The text the corpus reads from a page of this body."""
    html = f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>".encode()
    return extract_text(Path("lamp.html"), html).text


@pytest.mark.parametrize(
    "sentence",
    [
        # the Rust book's "Fortunately, Arc<T> is a type like Rc<T> that is safe to use in concurrent ..."
        "Fortunately, Lamp<T> is a lamp like Wick<T> that is safe to light in a gale.",
        "The <beam> element names the <lens> the keeper turns at dusk.",  # libvirt's "<forward>", "<bridge>"
        "Each <Tower> section holds the <Lamp> sections of its floors.",  # Apache's "<VirtualHost>" in prose
    ],
)
def test_a_sentence_that_names_things_in_angle_brackets_is_prose_and_quoted(sentence: str) -> None:
    assert not code_like(sentence)
    passage = f"## Lamps\n\n{sentence} The keeper trims the wick of every lamp at dawn.\n"
    assert sentence in [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]


@pytest.mark.parametrize(
    "sample",
    [
        '<tower><lamp>north</lamp><beam mode="red"/></tower>',
        "<Tower /north> Lamps +Bright </Tower>",  # a block with its closing tag
        "if (lamp[i] == lit) { wick = 1; }",
    ],
)
def test_a_sample_with_tags_or_code_stays_code(sample: str) -> None:
    assert code_like(sample)


def test_aka_ends_no_sentence() -> None:
    # libvirt's NAT definition was cut after "a.k.a." and its gold sentences lost
    text = (
        "This mode is known as NAT, a.k.a. IP masquerading of the guests. Guests reach the world through it."
    )
    assert split_sentences(text) == [
        "This mode is known as NAT, a.k.a. IP masquerading of the guests.",
        "Guests reach the world through it.",
    ]


def test_docutils_inline_code_that_opens_a_sentence_is_a_code_span() -> None:
    # plain docutils (rst2html) writes inline code as <span class="docutils literal">: libvirt's "level refers
    # to the minimum priority level ..." opened in lower case and was never quoted
    body = (
        '<h2>Lamps</h2><p><span class="docutils literal">wickd</span> trims the wick whenever the flame '
        'smokes at night. The keeper runs <span class="docutils literal">lampd</span> by hand.</p>'
    )
    page = _page(body)
    assert "`wickd` trims the wick" in page and "runs lampd by hand" in page, page
    (passage,) = heading_passages(page)
    units = [q.text for q in quotes(passage.text, 1, ("Lamp", "Lamps"))]
    assert "`wickd` trims the wick whenever the flame smokes at night." in units, units


def test_this_at_a_sub_sections_start_is_labelled_with_that_sub_section() -> None:
    # libvirt's "*Network XML format*: This example is the so called "default" virtual network" - the
    # example of its sub-section "NAT based network", not of the page; at a page's first section "This
    # module ..." is still the page's
    sentence = "This example is the lamp that the keeper lights first on every winter night."
    deep = quotes(f"### Red sector\n\n{sentence}\n", 1, ("Lamp manual", "Examples", "Red sector"))
    assert [(q.section, q.text) for q in deep] == [("Red sector", sentence)]
    opening = "This module lights every lamp of the tower at dusk and puts them out at dawn."
    top = quotes(f"## Summary\n\n{opening}\n", 1, ("Module mod_lamp", "Summary"))
    assert [(q.section, q.text) for q in top] == [("Module mod_lamp", opening)]


def test_a_paragraph_of_names_in_code_over_their_description_is_one_item_with_it() -> None:
    # libvirt's daemon options: "<p>-d, --daemon</p><p>Run as a daemon & write PID file.</p>" was quoted as
    # "*OPTIONS*: Run as a daemon & write PID file", the option lost; an element over its block quote the
    # same - and the names label their description only (as a term line, "virDomainObj" over a block quote
    # labelled every paragraph after it)
    body = (
        '<h2>Options</h2><p><span class="docutils literal">-l</span>, <span class="docutils literal">'
        "--light</span></p><p>Light every lamp of the tower at dusk and keep them lit.</p>"
        '<p><span class="docutils literal">wick</span></p><blockquote><p>This element sets how long the wick '
        "of each lamp is trimmed.</p></blockquote><p>The keeper locks the lamp room before every night.</p>"
        # a sample a sentence announces, a name over the rest of a sentence, a table's cell: no items
        "<p>To light them all, run:</p><p><code>lampctl light</code></p><p>The keeper checks each flame.</p>"
        "<p><code>lampctl trim</code></p><p>and then the wicks are cut.</p>"
        "<table><tr><td><p><code>flame_id</code></p><p>Identifier of the flame</p></td></tr></table>"
    )
    page = _page(body)
    assert "\n\n- -l, --light: Light every lamp of the tower at dusk and keep them lit.\n\n" in page, page
    assert "\n\n- wick: This element sets how long" in page, page
    assert "lampctl light:" not in page and "lampctl trim:" not in page and "flame_id:" not in page, page
    (passage,) = heading_passages(page)
    labelled = {q.text: q.section for q in quotes(passage.text, 1, ("Lamp", "Options"))}
    assert labelled["Light every lamp of the tower at dusk and keep them lit."] == "-l, --light", labelled
    assert labelled["This element sets how long the wick of each lamp is trimmed."] == "wick", labelled
    assert labelled["The keeper locks the lamp room before every night."] == "Options", labelled


def test_a_samples_hidden_lines_are_no_text() -> None:
    # mdBook hides a sample's scaffolding ("fn main() {") behind a toggle; the Rust book's quotes showed it
    body = (
        "<h2>Lamps</h2><p>The keeper lights the lamp with this call:</p><pre><code>"
        '<span class="boring">fn main() {\n</span>let lamp = Lamp::light();\n<span class="boring">}</span>'
        "</code></pre>"
    )
    page = _page(body)
    assert "let lamp = Lamp::light();" in page and "fn main" not in page, page
