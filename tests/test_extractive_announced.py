"""An announcing sentence whose sample cannot be quoted with it, and a long sample's lines (session 43, from
the twelfth reading's re-run: Eigen's "... simply use the transposeInPlace() function:", its sample in the
next passage, and "... suffices for computing least squares solutions:" over a whole program were no quote;
GLib's listing gave "1 : 0);␤array->clear = (clear ?" as a finding). Each case is the shape seen there, on
words of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.reading.leaning import as_statement, stands_alone
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import LINE_BREAK, chunk_passages
from deepresearch.search.documents import extract_text

_PROGRAM = "\n".join(
    [
        "#include &lt;lamp.h&gt;",
        "#include &lt;wick.h&gt;",
        "int main(void) {",
        "    struct lamp *lamp = lamp_open(LAMP_TOWER, LAMP_NORTH_GALLERY);",
        "    struct wick *w = wick_new(3);",
        "    w->lit = (lit ? 1 : 0);",
        "    w->clear = (clear ? 1 : 0);",
        "    lamp_light(w, LAMP_STEADY | LAMP_SHIELDED);",
        "    lamp_close(lamp);",
        "    return lit;",
        "}",
    ]
)


def _quoted(body: str) -> list[str]:
    page = f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>"
    text = extract_text(Path("lamp.html"), page.encode()).text
    return [q.text for passage in chunk_passages(text) for q in quotes(passage, 1)]


def test_an_intro_over_a_sample_too_long_to_quote_is_quoted_alone_and_the_program_is_no_sentence() -> None:
    quoted = _quoted(
        "<h1>Lighting the lamp</h1><p>Trimming alone is not enough; the keeper also needs a shielded flame, "
        "which the steady mode of the lamp keeps burning through the night:</p>"
        f"<pre>{_PROGRAM}</pre><p>The lamp then burns until its oil runs out.</p>"
    )
    stated = (
        "Trimming alone is not enough; the keeper also needs a shielded flame, which the steady mode of the "
        "lamp keeps burning through the night: …"  # what it announces elided, its colon kept
    )
    assert stated in quoted, quoted
    # a sentence across the program's lines is code cut at a "?", never a quote
    assert not any(LINE_BREAK in q for q in quoted), quoted
    assert "The lamp then burns until its oil runs out." in quoted


def test_an_intro_that_ends_its_passage_is_quoted_alone() -> None:
    # the passage is cut after the intro, its sample opens the next one
    passage = (
        "## Turning the wick\n\nThe wick burns evenly only when the keeper turns it a quarter round every "
        "hour, which the winding key of the brass lamp performs automatically:"
    )
    assert [q.text for q in quotes(passage, 1)] == [
        "The wick burns evenly only when the keeper turns it a quarter round every hour, which the winding "
        "key of the brass lamp performs automatically: …"
    ]


def test_a_hard_wrapped_sentence_in_a_sample_with_a_semicolon_inside_its_line_is_still_prose() -> None:
    quoted = _quoted(
        "<h1>Keeper's notes</h1><pre>The logbook is kept in the watch room; for the\n"
        "winter months the keeper writes it by the stove.\n</pre>"
    )
    assert any("The logbook is kept in the watch room; for the" in q for q in quoted), quoted


@pytest.mark.parametrize(
    "intro",
    [
        "There are some numbers about lamps in general, like a survey in 1902 that said:",  # its object next
        "Why does my lamp keep smoking even after the wick has been trimmed?:",  # a question over its answer
        "Let's see what happens when the keeper lights the lamp at dusk:",  # points ahead
        "Example of a lamp that is lit by the keeper at dusk:",  # a caption
        "Keepers light the lamp by filling the reservoir, then turning:",  # an action without its object
        "The lamp's logbook file has been modified as shown:",  # BIND's named.conf: what it shows is gone
    ],
)
def test_an_intro_that_says_nothing_alone_is_no_statement(intro: str) -> None:
    assert as_statement(intro) == ""


def test_it_is_not_enough_to_opens_on_no_antecedent() -> None:
    assert stands_alone("It is not enough to trim the wick; the lamp must be shielded too.")
    assert stands_alone("It is sufficient to fill the reservoir once a night.")


def test_a_sample_of_calls_cut_at_its_ellipses_is_no_sentence() -> None:
    # CMakePackageConfigHelpers: "CACHE )␤set(LIB_INSTALL_DIR lib/ ..." was quoted, labelled "CMakeLists.txt"
    calls = [f"set({name}_LAMP_DIR lamp/{name.lower()}/ ... CACHE )" for name in ("WICK", "OIL", "SOOT")]
    installs = [f"lamp_install(TARGET t{i} ...)" for i in range(9)]
    program = "\n".join([*calls, "#...", "include(LampHelpers)", *installs])
    quoted = _quoted(f"<h1>Lamp helpers</h1><p><code>Lamplist.txt</code>:</p><pre>{program}</pre>")
    assert not any("CACHE" in q for q in quoted), quoted
