"""What the twelfth reading found and session 42 mended (issue [quality] part 2; GLib's gtk-doc pages and
Eigen's Doxygen pages; bench/quality/JOURNAL.md session 42). Invented inputs in the shapes of those pages."""

from __future__ import annotations

from pathlib import Path

from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.asking.verbclues import verb_of_subject
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import LINE_BREAK, code_like, heading_passages
from deepresearch.search.documents import extract_text


def _page(body: str, head: str = "<title>Lamp</title>") -> str:
    page = f"<html><head>{head}</head><body>{body}</body></html>".encode()
    return extract_text(Path("lamp.html"), page).text


def _labelled(text: str) -> list[tuple[str, str]]:
    """Each quote of the page's passages, with the label the report prints before it."""
    passages = heading_passages(text)
    return [(q.section, q.text) for p in passages for q in quotes(p.text, 1, p.headings, p.term)]


_TOOLTIP = (
    '<div class="ttc" id="aLamp"><div class="ttname"><a href="classLamp.html">Lamp</a></div>'
    '<div class="ttdoc">The lamp class, for every tower.</div>'
    '<div class="ttdef"><b>Definition:</b> Lamp.h:180</div></div>'
)
DOXYGEN_PAGE = """
<div class="header"><div class="headertitle"><div class="title">Lamps and many keepers<div class="ingroups">
<a class="el" href="group__Keepers.html">Keepers</a> &raquo; Shifts</div></div></div></div>
<div class="contents"><div class="textblock">
<h1><a class="anchor" id="c1"></a>Cause 1: Keepers sharing one lamp</h1>
<p>When several keepers tend the same lamp at once, each of them must light it before the night shift begins.
You have to light the lamp by calling the following routine before the keepers start their shifts:</p>
<div class="fragment"><div class="line"><span class="preprocessor">#include &lt;Lamp/Core&gt;</span></div>
<div class="line"><span class="keywordtype">int</span> main(<span class="keywordtype">int</span> argc)</div>
<div class="line">{</div>
<div class="line">  <a class="code" href="classLamp.html">Lamp</a>::lightOnce();</div>
<div class="line">}</div>
</div><!-- fragment -->
TOOLTIP
<p>If you can light every lamp of the tower with a [c++17] keeper only (e.g., GCC&gt;=7, clang&gt;=5,
MSVC&gt;=19.12), then the keepers light it for you and you can stop reading.</p>
<table class="example"><tr><th>Example:</th><th>Output: </th></tr>
<tr><td><div class="fragment"><div class="line">Lamp lamp(3);</div>
<div class="line">cout &lt;&lt; lamp.wick();</div></div></td><td><pre class="fragment">4 0
0 4
</pre></td></tr></table>
</div></div>
""".replace("TOOLTIP", _TOOLTIP)


def test_a_doxygen_sample_set_line_by_line_is_one_sample_quoted_whole_and_its_tooltips_no_text() -> None:
    text = _page(DOXYGEN_PAGE)
    sample = LINE_BREAK.join(["#include <Lamp/Core>", "int main(int argc)", "{", "Lamp::lightOnce();", "}"])
    assert f"\\{sample}" in text.split("\n\n"), text  # its "#" escaped: no heading
    assert "Definition:" not in text and "The lamp class, for every tower." not in text
    quoted = [q for _, q in _labelled(text)]
    # the announcing sentence quoted with the whole sample, down to the routine on its fourth line
    assert any(q.endswith(f"shifts: `{sample}`") for q in quoted), quoted


def test_a_doxygen_pages_title_heads_it_and_its_sections_label_their_quotes() -> None:
    text = _page(DOXYGEN_PAGE)
    assert text.split("\n\n")[0] == "# Lamps and many keepers", text  # no breadcrumbs ("Keepers » Shifts")
    assert "## Cause 1: Keepers sharing one lamp" in text.split("\n\n")
    labels = {label for label, _ in _labelled(text)}
    assert labels == {"Cause 1: Keepers sharing one lamp"}, _labelled(text)


def test_a_table_of_samples_is_its_samples_one_after_another() -> None:
    blocks = _page(DOXYGEN_PAGE).split("\n\n")
    at = blocks.index(f"Lamp lamp(3);{LINE_BREAK}cout << lamp.wick();")
    # the output, though all numbers, is no listing's line numbers; the columns' names label nothing
    assert blocks[at + 1] == f"4 0{LINE_BREAK}0 4", blocks
    assert "Example:" not in blocks and "Output:" not in blocks
    # ... so a sentence that announces the table's sample quotes it
    announced = _page(
        DOXYGEN_PAGE.replace("stop reading.</p>", "stop reading. Here is the keeper's example:</p>")
    )
    quoted = [q for _, q in _labelled(announced)]
    assert any(
        q.endswith(f"Here is the keeper's example: `Lamp lamp(3);{LINE_BREAK}cout << lamp.wick();`")
        for q in quoted
    ), quoted


def test_a_version_bound_and_a_bracketed_standard_do_not_make_prose_code() -> None:
    answer = next(q for _, q in _labelled(_page(DOXYGEN_PAGE)) if q.startswith("If you can light"))
    assert "GCC>=7" in answer
    assert code_like("if (lamp >= 3) { wick[i] = oil[j]; } else { keeper <= 2; }")


GTKDOC_PAGE = """
<h2>Running lamps</h2>
<div class="refsect2"><h3>Environment variables</h3>
<p>The runtime behaviour of lamp applications can be influenced by a number of environment variables.</p>
<p><a name="LAMP_SLICE"></a><b><code class="envar">LAMP_SLICE</code>. </b>
    This environment variable allows reconfiguration of the wick allocator of the lamp.
    </p>
<div class="variablelist"><table border="0" class="variablelist"><tbody>
<tr><td><p><span class="term">always-oil</span></p></td>
<td><p>This will cause all wicks trimmed through lamp_trim() to be actually burnt with plain oil from the
tower. This is most useful for keepers who check the flame.</p></td></tr>
<tr><td><p><span class="term">fatal-smoke</span></p></td>
<td><p>Causes the lamp to go out at the first sign of smoke in the lamp room.</p></td></tr>
</tbody></table></div>
<p>For instance, the following binding:</p>
<div class="informalexample"><table class="listing_frame" border="0"><tbody><tr>
<td class="listing_lines" align="right"><pre>1
2</pre></td>
<td class="listing_code"><pre class="programlisting">lamp_bind (lamp1, "flame",
           lamp2, "flame");</pre></td></tr></tbody></table></div>
<div class="refsect3"><h4>Members</h4>
<table class="struct_members"><tbody>
<tr><td class="struct_member_name"><p>trim ()</p></td>
<td class="struct_member_description"><p>the trimming function of the lamp, called at dusk.
Before returning, it must hand the wick back to the keeper of the lamp room.</p></td>
<td class="struct_member_annotations"> </td></tr>
<tr><td class="struct_member_name"><p>light ()</p></td>
<td class="struct_member_description"><p>the lighting function of the lamp, called at dusk.</p></td>
<td class="struct_member_annotations"><span class="annotation">[nullable]</span></td></tr>
</tbody></table></div>
</div>
"""


def test_a_run_in_title_and_a_variable_list_laid_out_as_a_table_are_terms_of_their_descriptions() -> None:
    labelled = _labelled(_page(GTKDOC_PAGE))
    slice_ = "This environment variable allows reconfiguration of the wick allocator of the lamp."
    assert ("LAMP_SLICE", slice_) in labelled, labelled
    # a definition's first "This will ..." is about its term: quoted under it
    assert any(label == "always-oil" and q.startswith("This will cause all wicks") for label, q in labelled)
    smoke = "Causes the lamp to go out at the first sign of smoke in the lamp room."
    assert ("fatal-smoke", smoke) in labelled, labelled


def test_a_listing_is_its_code_without_line_numbers_and_an_empty_last_cell_hides_no_name() -> None:
    blocks = _page(GTKDOC_PAGE).split("\n\n")
    assert f'lamp_bind (lamp1, "flame",{LINE_BREAK}lamp2, "flame");' in blocks, blocks
    assert not any(block.startswith("1") for block in blocks), blocks
    # a member's name over its description, as a definition's term: it labels all of it
    assert blocks[blocks.index("trim ():") + 1].startswith("the trimming function of the lamp"), blocks
    # ... with its annotations after its description
    assert (
        blocks[blocks.index("light ():") + 1]
        == "the lighting function of the lamp, called at dusk. [nullable]"
    )
    handed = "Before returning, it must hand the wick back to the keeper of the lamp room."
    assert ("trim ()", handed) in _labelled(_page(GTKDOC_PAGE))


def _row(name: str, words: str = "") -> str:
    described = f"<td>{words}</td>" if words else ""
    return f'<tr><td>void</td><td><a href="lamp.html#{name}">{name}</a> ()</td>{described}</tr>'


def test_a_table_of_links_into_the_page_without_sentences_is_its_table_of_contents() -> None:
    entries = "".join(
        f'<h3><a name="{n}"></a>{n} ()</h3><p>Trims the {n} wick.</p>' for n in ("trim", "light", "douse")
    )
    index = "".join(_row(n) for n in ("trim", "light", "douse"))
    summary = "".join(
        _row(n, f"Does what the keeper asks of the {n} wick at dusk") for n in ("trim", "light", "douse")
    )
    text = _page(f"<h2>Functions</h2><table>{index}</table><h2>Summary</h2><table>{summary}</table>{entries}")
    assert "void: trim ()" not in text.split("\n\n"), text
    assert "void | trim () | Does what the keeper asks of the trim wick at dusk" in text, text
    short = "".join(_row(n, f"Trims the {n} wick.") for n in ("trim", "light", "douse"))
    assert "void | trim () | Trims the trim wick." in _page(f"<table>{short}</table>{entries}")
    # a parameters table whose short descriptions name a type of the page is no table of contents
    parameters = "".join(
        f'<tr><td><p>{n}</p></td><td><p>a <a href="lamp.html#trim">trim</a> wick</p></td></tr>'
        for n in ("trim", "light", "douse")
    )
    assert "trim: a trim wick" in _page(f"<h4>Parameters</h4><table>{parameters}</table>{entries}")
    # links to other pages are no table of contents of this one
    elsewhere = index.replace("lamp.html#", "tower.html#")
    assert "void: trim ()" in _page(f"<h2>Functions</h2><table>{elsewhere}</table>").split("\n\n")


def test_a_statement_of_code_in_a_question_ends_no_clause_with_its_semicolon() -> None:
    plan = keyword_plan(
        "Why does lamp = lamp.trim(); give me a dark tower while lamp = 2*lamp works fine?", 4
    )
    assert plan.sub_questions[0].startswith("Why does lamp = lamp.trim(); give me a dark tower"), plan
    asked = "I replaced Wick w = A*B; with auto w = A*B; and now my lamp goes dark. What's going on?"
    assert (
        "I replaced Wick w = A*B; with auto w = A*B; and now my lamp goes dark"
        in keyword_plan(asked, 4).sub_questions[0]
    )
    # a question after a statement still asks on its own ("... = 150; is that enough?")
    plan = keyword_plan("I set MaxKeepers = 150; is that enough for a busy lighthouse?", 4)
    assert plan.sub_questions[0] == "Is that enough for a busy lighthouse when I set MaxKeepers = 150?", plan


def test_a_sentence_that_opens_on_the_same_leans_on_the_one_before() -> None:
    text = _page(
        "<h2>Smoke</h2><p>Trim the wick of the lamp before dusk, so that the flame burns without smoke all"
        " night. The same solution also works for the second lamp of the tower, with a longer wick.</p>"
    )
    quoted = [q for _, q in _labelled(text)]
    assert not any(q.startswith("The same") for q in quoted), quoted
    assert any(q.startswith("Trim the wick") and q.endswith("with a longer wick.") for q in quoted), quoted


def test_a_sections_text_after_its_sub_section_stands_under_its_own_heading_again() -> None:
    text = _page(
        '<h1>Lamp manual</h1><div class="refsect1"><h2>Running lamps</h2><p>Lamps run all night.</p>'
        '<div class="refsect2"><h3>Locale</h3><p>The keeper sets the lamp to the local time of the tower.</p>'
        "</div><hr><p>The tower ships with a set of macros for the keeper's logbook.</p></div>"
        '<div class="refsect1"><div class="refsect2"><h3>Oil</h3><p>Oil is kept in the cellar.</p></div>'
        "<p>Every keeper fills the lamp before dusk and trims its wick at dawn.</p></div>"
    )
    labelled = _labelled(text)
    macros = next(label for label, q in labelled if q.startswith("The tower ships"))
    assert macros == "Running lamps", labelled
    # ... not over a line of a few words (gtk-doc's "Since: 2.14" after each function's parameters)
    since = _page(
        '<h1>Lamp manual</h1><div class="refsect2"><h3>lamp_trim ()</h3><p>Trims the wick of the lamp.</p>'
        '<div class="refsect3"><h4>Parameters</h4><p>The wick to trim, and how far.</p></div>'
        "<p>Since: 2.14</p></div>"
    )
    assert since.count("### lamp_trim ()") == 1, since
    # a parent section with no heading of its own heads nothing again (not "Oil")
    assert text.count("### Oil") == 1 and text.count("## Running lamps") == 2, text


def test_this_section_at_a_sections_start_is_labelled_with_the_section_not_the_page() -> None:
    text = _page(
        "<h1>Keeping lamps</h1><h2>The case of the brass lamp</h2>"
        "<p>This section is for keepers of brass lamps only, who trim their wicks every night.</p>"
    )
    assert _labelled(text) == [
        (
            "The case of the brass lamp",
            "This section is for keepers of brass lamps only, who trim their wicks every night.",
        )
    ]


def test_a_terms_description_in_lower_case_is_quoted_when_a_verb_makes_it_a_sentence() -> None:
    text = _page(
        "<h1>Lamp</h1><h2>Members</h2><dl><dt>douse ()</dt><dd><p>the dousing function is supposed to put out"
        " the flame of the lamp, but keep the wick intact. Before returning, it must close the lamp room.</p>"
        "</dd><dt>light ()</dt><dd><p>the generic lighter for all lamps of this tower.</p></dd>"
        "<dt>Step 2</dt><dd><p>the keeper is the one who lights the lamp at dusk every night.</p></dd></dl>"
    )
    labelled = _labelled(text)
    douse = "the dousing function is supposed to put out the flame of the lamp, but keep the wick intact."
    assert ("douse ()", douse) in labelled, labelled
    # a noun phrase alone is no sentence; a remark's lower-case text no definition
    assert not any(q.startswith(("the generic lighter", "the keeper is")) for _, q in labelled), labelled
    # ... nor one whose verb is in a clause that qualifies its noun (gtk-doc's parameters)
    assert verb_of_subject("the dousing function is supposed to put out the flame.")
    assert not verb_of_subject("the path to the wick you are interested in.")
    assert not verb_of_subject("the lamp whose wicks are trimmed.")
