"""What the readings of sessions 39-40 left and session 40 mended (issue [quality] part 2; libvirt's docutils
pages, the zsh manual and its FAQ, Node's API pages; bench/quality/JOURNAL.md session 40): labels that
outlived what they name, and a page's own backquotes as the report shows them. Invented inputs."""

from __future__ import annotations

import html
from pathlib import Path

from markdown_it import MarkdownIt

from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.reading.leaning import term_line
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import code_span, heading_passages
from deepresearch.report.lines import cite
from deepresearch.report.render import markdown_text
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import extract_text


def _page(body: str) -> str:
    """The text the corpus reads from a page of this body."""
    html = f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>".encode()
    return extract_text(Path("lamp.html"), html).text


def _labelled(text: str) -> dict[str, str]:
    """Each quote of the page's passages, with the label the report prints before it."""
    return {q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)}


def test_a_definition_lists_last_term_does_not_label_the_paragraph_after_the_list() -> None:
    # libvirt's qemu-threads.html: "qemuDomainObjExitMonitor()" over its list of steps, then after the
    # list "These functions must not be used by an asynchronous job." was quoted under that one function
    text = _page(
        "<h1>Lamp rules</h1><section><h2>Keeper methods</h2><dl>"
        "<dt><code>lightLamp()</code></dt><dd><ul><li><p>Takes the wick lock</p></li>"
        "<li><p>Strikes the flint</p></li></ul></dd>"
        "<dt><code>trimLamp()</code></dt><dd><ul><li><p>Cuts the charred wick</p></li>"
        "<li><p>Releases the wick lock</p></li></ul></dd></dl>"
        "<p>The keeper must never call either method while the beacon turns at night.</p>"
        "<dl><dt><code>dimLamp()</code></dt>"
        "<dd><p>Lowers the flame of the lamp to half its height.</p></dd></dl>"
        "</section>"
    )
    labels = _labelled(text)
    assert labels["The keeper must never call either method while the beacon turns at night."] == (
        "Keeper methods"
    )
    # a term's own description is still labelled with it
    assert labels["Lowers the flame of the lamp to half its height."] == "dimLamp()"


def test_the_last_of_a_run_of_code_paragraphs_is_no_term_over_the_paragraph_after_it() -> None:
    # libvirt's java.html: two C signatures, "become", two Java names, then prose that was quoted under
    # "virDomain.setMaxMemory(long memory)"; Python's descriptor HOWTO's "descr.__delete__(self, obj) -> None"
    text = _page(
        "<h1>Lamp bindings</h1><p>The C functions:</p>"
        '<p><span class="docutils literal">int lampLight (lampPtr lamp);</span></p>'
        '<p><span class="docutils literal">int lampTrim (lampPtr lamp, unsigned long wick);</span></p>'
        "<p>become</p>"
        '<p><span class="docutils literal">Lamp.light()</span></p>'
        '<p><span class="docutils literal">Lamp.trim(long wick)</span></p>'
        "<p>Some functions map less directly and take extra classes for their complex arguments.</p>"
    )
    assert "- Lamp.light(): Lamp.trim" not in text and "- Lamp.trim(long wick): Some" not in text
    labels = _labelled(text)
    assert (
        labels["Some functions map less directly and take extra classes for their complex arguments."] == ""
    )


def _shown(markdown: str) -> str:
    """The HTML a reader's viewer makes of a report line."""
    return MarkdownIt("js-default").renderInline(markdown)


def test_a_tex_style_quote_in_a_page_opens_no_code_span_in_the_report() -> None:
    # the zsh FAQ (YODL) writes `ksh' for 'ksh': as Markdown fences the quote read "names ksh' or sh'"
    quote = "It is set when the lamp is lit with the names `wick' or `flame', or an alias to them."
    shown = _shown(markdown_text(quote))
    assert "<code>" not in shown and "names `wick' or `flame', or" in html.unescape(shown)
    # ... and a page's backquote before the report's own code span leaves that span code
    sample = "Make judicious use of `trim': " + code_span('wick="long" trim "wick=($wick)"')
    shown = html.unescape(_shown(markdown_text(sample)))
    assert shown == 'Make judicious use of `trim\': <code>wick="long" trim "wick=($wick)"</code>'
    # the label a FAQ's question gives its quotes
    label = cite({"statement": "It lights.", "citations": [2], "section": "3.3: Why `trim' and LAMP_OIL?"})
    assert html.unescape(_shown(label)) == "<em>3.3: Why `trim' and LAMP_OIL?</em>: It lights [2]."


async def test_a_short_term_on_many_pages_is_structure_not_boilerplate(tmp_path: Path) -> None:
    # the zsh manual's builtins share "-r:" over a different description each: left out as boilerplate,
    # each description was quoted under the term before it ("-R [ n ]:" labelled typeset's -U)
    root = tmp_path / "docs"
    root.mkdir()
    tools = ["wick", "lens", "flint", "bell"]
    for tool in tools:
        entries = (
            f"<dt><code>-k</code></dt><dd><p>Keeps the {tool} lit through the storm until the keeper"
            f" returns.</p></dd><dt><code>-r</code></dt>"
            f"<dd><p>Removes the {tool} from its bracket before the winter.</p></dd>"
        )
        body = f"<h1>The {tool} command</h1><p>The {tool} command tends the {tool}.</p><dl>{entries}</dl>"
        page = f"<html><head><title>{tool}</title></head><body>{body}<p>Home | Index</p></body></html>"
        (root / f"{tool}.html").write_text(page)
    index = CorpusIndex(tmp_path / "index.db", root)
    await index.reindex()
    text = (await index.read("corpus://lens.html")).text
    assert "Home | Index" not in text  # on every page: boilerplate, still left out
    labels = _labelled(text)
    assert labels["Removes the lens from its bracket before the winter."] == "-r"
    assert labels["Keeps the lens lit through the storm until the keeper returns."] == "-k"


def test_an_option_named_in_capitals_with_its_flags_is_a_term_not_a_sentence() -> None:
    # zsh's Options page: "CLOBBER (+C, ksh: +C) <D>" read as a sentence announcing a list, so CLOBBER's
    # description was quoted under the option before it ("ALIASES <D>")
    entries = [
        ("<code>LAMPS</code> &lt;D&gt;", "Light the lamps at dusk."),
        (
            "<code>WICK_TRIM</code> (<code>+W</code>, ksh: <code>+W</code>) &lt;D&gt;",
            "Trims the wick of a lamp.",
        ),
        ("<code>BEAM_TURN</code> &lt;K&gt; &lt;S&gt;", "If set, the beam turns once a minute at night."),
        ("Rotating Lens Assembly (rla)", "The lens turns on a bath of mercury."),
    ]
    terms = "".join(f"<dt>{term}</dt><dd><p>{described}</p></dd>" for term, described in entries)
    labels = _labelled(_page(f"<h1>Lamp options</h1><h2>Lighting</h2><dl>{terms}</dl>"))
    assert labels["Trims the wick of a lamp."] == "WICK_TRIM (+W, ksh: +W) <D>"
    assert labels["If set, the beam turns once a minute at night."] == "BEAM_TURN <K> <S>"
    assert labels["The lens turns on a bath of mercury."] == "Rotating Lens Assembly (rla)"
    # a sentence that announces what follows is still no term
    for announcing in ("The order of lighting is:", "In these Cases:", "Lamps Are Lit As Follows:"):
        assert not term_line(announcing), announcing


def test_a_list_item_that_ends_in_a_colon_labels_no_passage_after_it() -> None:
    # Node's net.html: "- options <Object> Required. Supports the following properties:" was handed to the
    # next passage as its term and labelled ten quotes of server.listen()
    items = "".join(
        f"<li>Keeper {i} trims the wick of lamp {i} every evening at dusk and dawn.</li>" for i in range(12)
    )
    text = _page(
        "<h1>Lamp</h1><h2>lamp.light(options)</h2><ul><li><code>options</code> &lt;Object&gt; Required. "
        f"Supports the following properties:<ul>{items}</ul></li></ul>"
        "<p>The lamp stays lit until the keeper puts it out with the snuffer.</p>"
    )
    passages = heading_passages(text, 300, 500)
    assert len(passages) > 1
    assert not any(p.term.startswith("- ") for p in passages), [p.term for p in passages]


def test_a_headings_permalink_mark_is_no_text_and_a_class_section_is_what_this_object_names() -> None:
    # Node's "<h3>Class: <code>Immediate</code><span><a class="mark" href="#class-immediate">#</a></span>":
    # the "#" ended 92 labels ("Timers#"), and "This object is created internally ..." at the class's
    # section start was labelled with the page, which has two such objects
    text = _page(
        '<h2>Lamps<span><a class="mark" href="#lamps">#</a></span></h2>'
        "<p>The lamp module lights the lamps of the tower at dusk and puts them out at dawn.</p>"
        '<h3>Class: <code>Wick</code><span><a class="mark" href="#class-wick">#</a></span></h3>'
        "<p>This object is created internally and is returned from lightLamp() each evening.</p>"
        '<h3>lamp.trim(length)<a href="#trim">&#167;</a></h3>'
        "<p>This method cuts the wick to the given length.</p>"
    )
    assert "#" not in text.replace("## Lamps", "").replace("### ", "") and "§" not in text
    labels = _labelled(text)
    assert labels["This object is created internally and is returned from lightLamp() each evening."] == (
        "Class: Wick"
    )
    assert labels["This method cuts the wick to the given length."] == "lamp.trim(length)"


def test_a_term_after_a_sentence_announcing_the_list_takes_no_sample_of_it() -> None:
    # zsh's glob qualifiers: "A qualifier may be any one of the following:" then the term "/" and its
    # description "directories": quoted "A qualifier may be any one of the following: `directories`"
    passage = (
        "A lamp may be any one of the following:\n\n/:\n\ndirectories\n\nF:\n\n"
        "The full lamps, lit from the inside. Note that the opposite sense lights the empty lamps too."
    )
    found = {q.text: q.section for q in quotes(passage, 1, ("Lamp", "Kinds"))}
    assert not any("`directories`" in text for text in found), found
    assert found["Note that the opposite sense lights the empty lamps too."] == "F"


def test_a_context_said_before_the_question_goes_to_its_first_clause() -> None:
    # "Inside a zsh function, what's the difference between local and typeset, and how do I ...?" planned
    # only its second clause: the comparison asked was never a sub-question
    plan = keyword_plan(
        "Inside a lighthouse, what's the difference between a wick and a mantle, and how do I trim the wick?",
        4,
    )
    assert plan.sub_questions[:2] == [
        "What's the difference between a wick and a mantle inside a lighthouse?",
        "How do I trim the wick?",
    ]
    assert keyword_plan("In the tower, how do I trim a wick?", 4).sub_questions[0] == (
        "How do I trim a wick in the tower?"
    )
    # a discourse marker is no context
    assert keyword_plan("For example, how do I trim a wick?", 4).sub_questions[0] == (
        "For example, how do I trim a wick?"
    )


def test_a_second_question_opening_on_and_asks_what_it_asks() -> None:
    # "... pushed commit? And what happens to others?" read as a condition: "... when And what happens ...?"
    plan = keyword_plan("How do I relight a lamp at sea? And what happens to the other lamps?", 4)
    assert plan.sub_questions[:2] == [
        "How do I relight a lamp at sea?",
        "What happens to the other lamps?",
    ]


def test_a_term_over_a_list_of_forms_labels_nothing_after_the_list_in_any_passage() -> None:
    # Node's net.html: "Possible signatures:" over a list of call forms labelled the rest of server.listen()'s
    # section, the EADDRINUSE answer in the Summary with it - in this passage and the ones after it
    forms = "".join(f"<li>lamp.light(wick{i}[, callback])</li>" for i in range(4))
    paragraphs = "".join(
        f"<p>Lighting step {i} turns the lens a little further so the beam sweeps the whole bay at night.</p>"
        for i in range(12)
    )
    text = _page(f"<h1>Lamp</h1><h2>lamp.light()</h2><p>Possible forms:</p><ul>{forms}</ul>{paragraphs}")
    passages = heading_passages(text, 300, 500)
    assert len(passages) > 2
    units = [q for p in passages for q in quotes(p.text, 1, p.headings, p.term)]
    assert units and all(q.section == "lamp.light()" for q in units), {q.section for q in units}


def test_a_numbered_term_is_still_handed_to_the_next_passage() -> None:
    # zsh's "Rules" of parameter expansion: "1. Nested substitution:" over a description that runs past the
    # passage's end (a bullet item ending in a colon is no term, a numbered term is)
    description = " ".join(
        f"The keeper trims wick number {i} before the beam turns at dusk." for i in range(30)
    )
    text = _page(
        "<h1>Lamp</h1><h2>Rules</h2><dl><dt>1. <em>Nested trimming</em></dt>"
        f"<dd><p>{description}</p></dd></dl>"
    )
    passages = heading_passages(text, 300, 500)
    assert len(passages) > 1 and all(p.term == "1. Nested trimming:" for p in passages[1:]), passages


def test_a_label_with_brackets_is_no_link_in_the_report() -> None:
    # Node's "timeout[Symbol.toPrimitive]()": as Markdown "[Symbol.toPrimitive]()" is a link, and the
    # report's link check replaced it ("[link removed: not a fetched source]")
    shown = html.unescape(
        _shown(cite({"statement": "It lights.", "citations": [1], "section": "wick[Symbol.x]()"}))
    )
    assert "wick[Symbol.x]()" in shown and "href" not in shown
    words = cite({"statement": "It lights.", "citations": [1], "section": "The lamp [ n ] and the wick"})
    assert "The lamp [ n ] and the wick" in html.unescape(_shown(words))


def test_an_index_anchor_on_a_few_terms_of_a_long_list_makes_no_heading() -> None:
    # zsh's builtins: Texinfo put an index anchor id on read's term (and autoload's), which made each a
    # heading over every builtin after it: typeset's flags were quoted in "read [...]"'s section
    names = [f"tool{i}" for i in range(25)]
    terms = "".join(
        f"<dt{' id=idx-' + name if name in ('tool3', 'tool7') else ''}><code>{name}</code> [ -abc ]</dt>"
        f"<dd><p>The {name} builtin tends the {name} of the lamp at dusk.</p></dd>"
        for name in names
    )
    text = _page(f"<h1>Lamp builtins</h1><dl>{terms}</dl>")
    assert "###### " not in text
    labels = _labelled(text)
    assert labels["The tool9 builtin tends the tool9 of the lamp at dusk."] == "tool9 [ -abc ]"


def test_a_flags_term_inside_a_commands_description_names_the_command() -> None:
    # zsh's read: "<dt>read [ -rszpqAclneE ] ...</dt><dt>[ -u n ] ...</dt><dd>...<dl><dt>-r</dt>": a bare
    # "-r" label under a question on typeset read as typeset's -r (readonly); git-reset's modes the same
    flags = "<dl><dt><code>-r</code></dt><dd><p>Raw mode keeps every backslash of the line.</p></dd></dl>"
    text = _page(
        "<h1>Builtins</h1><dl><dt><code>light</code> [ <code>-rs</code> ] [ <code>-t</code> num ]</dt>"
        f"<dt>[ <code>-u</code> n ] [ name ... ]</dt><dd><p>Lights the lamp.</p>{flags}</dd>"
        "<dt><code>git lamp</code> [&lt;mode&gt;]</dt><dd><dl><dt>--soft</dt>"
        "<dd><p>Leaves the wick untouched but trims the lamp glass.</p></dd></dl></dd></dl>"
    )
    labels = _labelled(text)
    assert labels["Raw mode keeps every backslash of the line."] == "light -r"
    assert labels["Leaves the wick untouched but trims the lamp glass."] == "git lamp --soft"
