"""What a first reading of two corpora nobody tuned on showed (session 33: borgbackup-doc and
python-flask-doc, 16 questions of a helper's own): section titles that did not read as questions, labels
cut at a bracket, a sentence quoted twice, a code sample shown with the corpus text's escape. Each case is
the shape seen there, on words of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.asking.comparison import quoted_whole
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan, question_topic
from deepresearch.extractive.reading.leaning import leans_back, stands_alone
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import (
    code_span,
    heading_passages,
    sample_code,
    section_label,
    split_sentences,
)
from deepresearch.search.documents import extract_text


def test_a_follow_up_that_opens_on_its_condition_is_a_question_of_its_own() -> None:
    # "Can I use flask run to serve my site in production when If not, what should I use instead?"
    question = "Can I use lamp trim to clean my wick at sea? If not, what should I use instead?"
    plan = keyword_plan(question, 5, rarity={"lamp trim": 0.3, "lamp": 0.5, "trim": 0.3, "wick": 0.01})
    assert plan.topic == "wick"
    assert plan.sub_questions[:2] == [
        "Can I use lamp trim to clean my wick at sea?",
        "What should I use instead of lamp trim?",  # what "use" used before, not the topic ("my wick")
    ], plan.sub_questions
    assert not any(" when if " in sq.lower() for sq in plan.sub_questions)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "wick vs mantle lamps: what is the difference and which one should I choose?",
            [
                "What is the difference between wick and mantle lamps?",
                "Which of wick and mantle lamps should I choose?",
            ],
        ),
        ("oil vs paraffin: which is cheaper?", ["Which of oil and paraffin is cheaper?"]),
        ("oil vs paraffin: how do they differ?", ["How do oil and paraffin differ?"]),
    ],
)
def test_a_titled_comparison_names_the_two_where_the_question_refers_to_them(
    question: str, expected: list[str]
) -> None:
    # "Which one should I choose when repokey vs keyfile encryption: what is the difference?"
    plan = keyword_plan(question, 5)
    assert plan.sub_questions[: len(expected)] == expected, plan.sub_questions


def test_a_titled_comparison_that_refers_to_neither_is_left_as_asked() -> None:
    assert keyword_plan("oil vs paraffin: should I switch?", 5).sub_questions[0].startswith("Oil vs paraffin")


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        # "... and delete everything older": an indefinite pronoun opens the object too
        (
            "keep a week of daily logs and a month of weekly ones, and delete everything older",
            "keeping a week of daily logs and a month of weekly ones, and deleting everything older",
        ),
        # "... and copy out a single file": the particle stands between the verb and its object
        (
            "look through an old log like a folder and copy out a single line",
            "looking through an old log like a folder and copying out a single line",
        ),
    ],
)
def test_a_coordinated_verb_before_a_pronoun_or_a_particle_takes_ing_too(task: str, expected: str) -> None:
    assert f"What are the limitations of {expected}?" in keyword_plan(f"How do I {task}?", 5).sub_questions


def test_out_of_is_a_preposition_not_a_particle_after_a_verb() -> None:
    # "keep the secret key and database password out of my source code": "password" is no verb
    phrases = noun_phrases("How do I keep the lamp key and cellar password out of my logbook")
    assert ("the lamp key and cellar password", ("lamp key", "cellar password")) in [
        (p.text, p.items) for p in phrases
    ], phrases


def test_different_compares_only_with_what_it_differs_from() -> None:
    # "... and load different settings in production" asked "What is secret key?" and "What is database?"
    plain = keyword_plan(
        "How do I keep the lamp key and cellar password out of my logbook and load different settings?", 5
    )
    assert not any(sq.startswith("What is") for sq in plain.sub_questions), plain.sub_questions
    compared = keyword_plan("How is the lamp key different from the cellar password?", 5)
    assert any(sq.startswith("What is") for sq in compared.sub_questions), compared.sub_questions


def test_a_span_of_time_of_something_is_a_quantity_of_it() -> None:
    # "keep a week of daily backups, a month of weekly ones": the topic was "a month"
    question = "How do I keep a week of daily backups and a month of weekly ones?"
    assert question_topic(question, {"daily backups": 0.02, "backups": 0.2, "month": 0.1, "week": 0.1}) == (
        "daily backups"
    )


def test_a_quoted_message_is_the_topic_whole() -> None:
    # "Why do I get 'Working outside of application context' ..., and how do I fix it?" asked "How do I
    # fix Working outside?"
    plan = keyword_plan(
        "Why do I get 'Burning outside of lamp context' when I light my wick from a script, and how do I "
        "fix it?",
        5,
    )
    assert plan.topic == "'Burning outside of lamp context'"
    assert "How do I fix 'Burning outside of lamp context'?" in plan.sub_questions, plan.sub_questions


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        # a heading in words that holds a bracket is no signature: "I" and "Pre" were the labels
        ("I am seeing 'A' (added) status for a file!?", "I am seeing 'A' (added) status for a file!?"),
        ("Pre-1.0.9 lamp spoofing flaw (CVE-2016-10099)", "Pre-1.0.9 lamp spoofing flaw (CVE-2016-10099)"),
        ("HTTP/2 in a VirtualHost context (TLS only)", "HTTP/2 in a VirtualHost context (TLS only)"),
        # a signature still is
        ("lamp.trim(wick, *, length=None, square=False, timeout=None)", "lamp.trim()"),
    ],
)  # fmt: skip
def test_a_label_is_cut_to_a_name_only_for_a_signature(heading: str, expected: str) -> None:
    assert section_label(heading) == expected


def test_etc_before_a_capital_ends_its_sentence() -> None:
    text = "The keeper stores oil, wicks etc. This can be done at dusk. Use (oil, wicks, etc.) and go."
    assert split_sentences(text) == [
        "The keeper stores oil, wicks etc.",
        "This can be done at dusk.",
        "Use (oil, wicks, etc.) and go.",
    ]


def test_a_sentence_that_leans_back_and_announces_a_sample_is_quoted_once() -> None:
    # Flask's "... on the g object etc. This however can easily be done yourself. Just call
    # preprocess_request(): `...`" was quoted as two units that both held "This however ..."
    passage = (
        "## Lighting\n\nBy just striking a match, you still have not run the code that is normally run "
        "before dusk. This might leave the lamp dark if the wick is wet, the glass is sooty etc. This "
        "however can easily be done yourself. Just call trim_wick():\n\nlamp = Lamp() lamp.trim_wick()\n"
    )
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lighting"))]
    assert sum("easily be done yourself" in unit for unit in units) == 1, units
    assert any(unit.endswith("`lamp = Lamp() lamp.trim_wick()`") for unit in units), units


def test_a_samples_intro_quoted_alone_just_before_stays_a_quote_of_its_own() -> None:
    # Apache's handler page: "In order to implement the handler features, an addition has been made to the
    # Apache API ..." answers on its own and with the sample its next sentence announces (quoting it only
    # with the sample cost what-is-a-handler its gold page: bench/quality/JOURNAL.md, session 33)
    passage = (
        "## Keeper's Note\n\nIn order to implement the beam features, an addition has been made to the lamp "
        "API that you may wish to make use of. Specifically, a new record has been added to the lens "
        "structure:\n\nchar *beam\n"
    )
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Keeper's Note"))]
    first = (
        "In order to implement the beam features, an addition has been made to the lamp API that you may "
        "wish to make use of."
    )
    assert units[0] == first, units
    assert units[1].startswith(first) and units[1].endswith("`char *beam`"), units


def test_a_code_sample_is_shown_as_the_page_shows_it() -> None:
    # the corpus text escapes a comment that opens a sample ("\\# smartctl -a /dev/sda"): a code span shows
    # the backslash, so it goes; a backtick in the sample takes a longer fence (and reads back as the code)
    assert code_span("\\# trim -a /dev/wick") == "`# trim -a /dev/wick`"
    assert code_span("echo `date`") == "`` echo `date` ``"
    assert sample_code("`` echo `date` ``") == "echo `date`"
    assert sample_code("`trim` and `light`") is None  # prose that names code
    page = extract_text(Path("lamp.html"), _html(_CHECK + "<pre># trim -a /dev/w\n</pre>")).text
    (passage,) = heading_passages(page)
    assert passage.headings == ("Checking",)  # the comment heads nothing
    assert any("`# trim -a /dev/w`" in q.text for q in quotes(passage.text, 1, ("Lamp", "Checking")))


_CHECK = "<h2>Checking</h2><p>The keeper can check the wick of the lamp in question:</p>"
# a template the page shows: its sentences are the template's (postfix-doc's bounce(5): "I'm sorry to have
# to inform you that your message could not be delivered ..." was quoted as the manual's own claim)
_TEMPLATE = (
    "notice_template = &lt;&lt;EOF\nSubject: Undelivered letter\n\n"
    "This is the lighthouse of the north tower.\n\n"
    "I'm sorry to have to inform you that your letter could not\nbe delivered to the keeper of the tower.\n"
)


def _html(body: str) -> bytes:
    return f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>".encode()


def test_a_sample_is_quoted_with_the_sentence_that_announces_it() -> None:
    # a paragraph that is one code span is a sample (a Markdown file's; a page's <pre> stays a plain line:
    # as a code span it cost held-out Git a gold page, bench/quality/JOURNAL.md, session 36)
    template = " ".join(_TEMPLATE.replace("&lt;", "<").split())
    notes = " Returned with the keeper's notes."
    signed = "The keeper signs every notice with the name of the tower and the date of the night."
    units = []
    # a short template; a longer message, which its intro announces (git-tag(1): "... making a very public
    # announcement saying:"); one too long to quote with its intro
    for sample in (template, template + notes, template + notes * 15):
        passage = f"## Notices\n\nThe notice a ship gets reads:\n\n`{sample}`\n\n{signed}\n"
        units.append([q.text for q in quotes(passage, 1, ("Lamp", "Notices"))])
    short, message, longest = units
    assert short[0].startswith("The notice a ship gets reads: `notice_template = <<EOF Subject:"), short
    assert short[0].endswith("to the keeper of the tower.`"), short
    assert message[0].endswith("Returned with the keeper's notes.`"), message
    assert short[1:] == message[1:] == [signed], units
    # the longest is read as the page's lines, as a sample not so marked is
    assert "I'm sorry to have to inform you that your letter could not be delivered" in " ".join(longest)
    # ... nor is code announced so quoted past a sample's length
    code = " ".join(f"lamp{n} = {{wick: {n}, oil: [{n}, {n}]}}" for n in range(10))
    passage = f"## Notices\n\nThe lamps are set so:\n\n`{code}`\n\n{signed}\n"
    assert [q.text for q in quotes(passage, 1, ("Lamp", "Notices"))] == [signed]


def test_a_paragraph_on_the_sample_before_it_takes_no_sample_after_it() -> None:
    # the Exim specification: "These commented-out lines are examples of how you could ... The first
    # statement rejects messages from blacklisted hosts ..." (on the sample above it) was quoted with the
    # next, unrelated sample "`# require verify = csa`"
    passage = (
        "## Lamp rules\n\n`# deny wick = short # warn oil = low`\n\n"
        "These commented-out lines are examples of how you could check the lamp before dusk. The first rule "
        "refuses a short wick, whereas the second just warns the keeper.\n\n`# require lens = clean`\n\n"
        "In this example the keeper lights the lamp of the north tower at dusk every night.\n\n"
        "`light north_tower at = dusk`\n"
    )
    texts = [q.text for q in quotes(passage, 1, ("Lamp", "Lamp rules"))]
    assert not any("require lens" in text for text in texts), texts
    # ... while a paragraph that names the sample after it as an example is still quoted with it
    assert any(t.endswith("every night. `light north_tower at = dusk`") for t in texts), texts


def test_a_name_in_code_that_opens_a_sentence_is_quoted_with_it() -> None:
    # the Debian handbook's "<code>anacron</code> is the daemon that completes cron ..." opened in lower case:
    # never quoted (the gold answer), or glued to the sentence before ("... within the project. apt is ...")
    body = (
        "<h2>Lamps</h2><p><code>lampd</code> is the daemon that lights the lamp of the tower at dusk. The "
        "keeper starts it once a night. <code>wickd</code> trims the wick whenever the flame smokes.</p>"
        "<p>The keeper runs <code>lampd</code> by hand. Use <code>wickd --once</code> for one trim.</p>"
        "<ul><li><code>hornd</code> sounds the horn in the fog.</li></ul>"
    )
    page = extract_text(Path("lamp.html"), _html(body)).text
    assert "`lampd` is the daemon" in page and "night. `wickd` trims" in page, page
    assert "runs lampd by hand" in page and "Use wickd --once for" in page  # inside a sentence: as it was
    assert "- hornd sounds" in page  # a list item's name stays its own (its term)
    (passage,) = heading_passages(page)
    units = [q.text for q in quotes(passage.text, 1, ("Lamp", "Lamps"))]
    assert "`lampd` is the daemon that lights the lamp of the tower at dusk." in units, units
    assert "`wickd` trims the wick whenever the flame smokes." in units, units


def test_the_text_after_a_sidebar_or_an_example_is_its_sections_again() -> None:
    # the Debian handbook's sidebars and example captions (DocBook): the box's bold title is a heading in the
    # text, and the section's text after the box was labelled with it
    body = (
        "<h2>9.8. Lighting the lamp</h2><p>The keeper lights the lamp of the tower every night at dusk.</p>"
        '<div class="sidebar"><div class="titlepage"><p class="title"><strong>BACK TO BASICS Wicks</strong>'
        "</p></div><p>A wick draws the oil up to the flame of the lamp all night long.</p></div>"
        "<p>Installation of the new lens deactivates the old one at the next dusk.</p>"
        '<div class="example"><p class="title"><strong>Example 9.1. Lighting by hand</strong></p>'
        "<pre>lampd --light</pre></div><p>If the lamp does not light, the keeper trims the wick first.</p>"
        '<div class="table"><p class="title"><strong>Table 9.2. Wick lengths</strong></p><table><tr>'
        "<td>short</td><td>12</td></tr></table></div><p>A long wick smokes in the wind of the gallery.</p>"
    )
    page = extract_text(Path("lamp.html"), _html(body)).text
    labels = {}
    for passage in heading_passages(page, target_chars=60):
        for unit in quotes(passage.text, 1, ("Lamp", *passage.headings)):
            labels[unit.text] = unit.section
    boxed = "A wick draws the oil up to the flame of the lamp all night long."
    assert labels[boxed] == "BACK TO BASICS Wicks"
    after = ["Installation of the new lens deactivates the old one at the next dusk."]
    after += ["If the lamp does not light, the keeper trims the wick first."]
    assert [labels[text] for text in after] == ["9.8. Lighting the lamp"] * 2, labels
    # ... but not after a table's (nor an admonition's, nor a box under a heading of its own, Apache's
    # "Example"): PostgreSQL's and Apache's recall fell with those
    assert labels["A long wick smokes in the wind of the gallery."] == "Table 9.2. Wick lengths", labels
    caption = '<p class="title"><strong>Example 9.1. Lighting by hand</strong></p>'
    apache = extract_text(Path("lamp.html"), _html(body.replace(caption, "<h3>Example</h3>"))).text
    assert "9.8. Lighting the lamp" not in apache.split("### Example")[-1], apache
    # ... and a note's title before the box is not the section the box stands in (mutt: "### Note" after it)
    note = '<div class="note"><h3 class="title">Note</h3><p>Never light a wet wick.</p></div>'
    mutt = extract_text(
        Path("lamp.html"), _html(body.replace('<div class="example">', f'{note}<div class="example">'))
    )
    assert mutt.text.split("lampd --light", 1)[1].lstrip().startswith("## 9.8. Lighting the lamp\n"), (
        mutt.text
    )


def test_a_handbooks_navigation_bar_is_no_text() -> None:
    # the Debian handbook's "Prev | The Debian Administrator's Handbook | Next" (Publican's ul.docnav); not
    # PostgreSQL's navheader, which names the page's chapter (its citation precision fell without it)
    body = (
        '<ul class="docnav"><li><a accesskey="p" href="a.html"><strong>Prev</strong></a></li></ul>'
        '<div class="navheader"><table><tr><th>Chapter 9. Lamps</th></tr></table></div>'
        "<h2>9.8. Lighting the lamp</h2><p>The keeper lights the lamp of the tower every night at dusk.</p>"
    )
    page = extract_text(Path("lamp.html"), _html(body)).text
    lit = "The keeper lights the lamp of the tower every night at dusk."
    assert page == f"Chapter 9. Lamps\n\n## 9.8. Lighting the lamp\n\n{lit}", page


def test_a_manuals_links_to_the_pages_around_it_are_no_text() -> None:
    # Texinfo's header line (diffutils' "Next: ..., Up: ... [Contents][Index]" quoted as a code span); not
    # DocBook's footer, which names the chapter (PostgreSQL's precision fell 0.82 -> 0.77 without it)
    lit = "The keeper lights the lamp of the tower every night at dusk."
    texinfo = (
        '<div class="header"><p>Next: <a href="b.html" rel="next">Wicks</a>, Up: '
        '<a href="index.html" rel="up">Lamps</a> [<a href="index.html#SEC_Contents">Contents</a>]</p></div>'
    )
    for chrome in (texinfo, texinfo.replace('class="header"', 'class="nav-panel"')):
        page = extract_text(Path("lamp.html"), _html(f"<h2>Lighting</h2><p>{lit}</p>{chrome}")).text
        assert page == f"## Lighting\n\n{lit}", page
    # a header that links nowhere around it is the page's own
    own = '<div class="header"><p>Lamps of the northern coast</p></div>'
    page = extract_text(Path("lamp.html"), _html(f"{own}<p>{lit}</p>")).text
    assert page.startswith("Lamps of the northern coast"), page


def test_a_list_inside_a_terms_description_labels_nothing_after_it() -> None:
    # diffutils: --palette's description lists its capabilities under anchors ("ln=36"), which became
    # headings and labelled every option after them ("*ln=36*: Strip any trailing carriage return ...")
    nested = (
        "<dl><dt><samp>--palette=colours</samp></dt><dd><p>Choose the colours of the lamp's glass.</p>"
        '<dl><dt id="index-red"><code>red=31</code></dt><dd><p>The colour of the harbour light.</p></dd>'
        '<dt id="index-green"><code>green=32</code></dt><dd><p>The colour of the river light.</p></dd></dl>'
        "</dd><dt><samp>--trim</samp></dt><dd><p>Trim the wick of the lamp before it is lit at dusk.</p></dd>"
        "</dl>"
    )
    page = extract_text(Path("lamp.html"), _html(f"<h2>Options</h2>{nested}")).text
    assert "#" not in page.split("## Options", 1)[1], page
    labels = {q.text: q.section for p in heading_passages(page) for q in quotes(p.text, 1, p.headings)}
    assert labels["Trim the wick of the lamp before it is lit at dusk."] == "--trim", labels
    # ... but an API entry's methods inside its class's description head their own (Sphinx)
    api = nested.replace("<dt><samp>--palette", '<dt id="lamp.Palette"><samp>--palette')
    page = extract_text(Path("lamp.html"), _html(f"<h2>Options</h2>{api}")).text
    assert "###### red=31" in page and "###### --palette=colours" in page, page


def test_a_table_cells_inline_markup_reads_as_the_page_shows_it() -> None:
    # aptitude: a DocBook note laid out in a table quoted "(such as “ ~N edit ” )" for "(such as “~N edit”)"
    note = (
        '<div class="note"><table><tr><td><img alt="[Note]" src="note.png"/></td><td><p>A pattern (such as '
        '<span class="quote">“<span class="quote"><code class="literal">~N edit</code></span>”</span>) '
        "matches only new lamps.</p><p>The keeper trims the wick.</p></td></tr></table></div>"
    )
    page = extract_text(Path("lamp.html"), _html(note)).text
    assert "A pattern (such as “~N edit”) matches only new lamps. The keeper trims the wick." in page, page


def test_a_plain_terms_inline_markup_reads_as_the_page_shows_it() -> None:
    # diffutils' "*--fuzz= lines*" and aptitude's "*-r , --with-recommends*" for "--fuzz=lines" and "-r,
    # --with-recommends": a plain <dt>'s (and a heading's) inline parts were joined with spaces; Django's
    # "Limiting QuerySet s", and its entries labelled "clean_savepoints(using=None)[source]"
    terms = (
        "<dl><dt><code>--fuzz=<var>lines</var></code></dt><dd><p>Trim the wick by this many lines.</p></dd>"
        "<dt><code>-r</code>, <code>--with-reeds</code></dt><dd><p>Light the reeds with the lamp.</p></dd>"
        "<dt>Lamp<br/>oil</dt><dd><p>The oil that the keeper pours into the lamp.</p></dd></dl>"
        '<h3>Limiting <code class="literal"><span class="pre">Lamp</span></code>s</h3><dl><dt id="lamp.dim">'
        '<code>dim</code>(<em>wick</em>)<a href="_modules/lamp.html">'
        '<span class="viewcode-link">[source]</span></a></dt><dd><p>Dim the lamp.</p></dd></dl>'
    )
    page = extract_text(Path("lamp.html"), _html(f"<h2>Options</h2>{terms}")).text
    assert "--fuzz=lines:" in page and "-r, --with-reeds:" in page and "Lamp oil:" in page, page
    assert "### Limiting Lamps\n" in page and "###### dim(wick)\n" in page, page
    labels = {q.text: q.section for p in heading_passages(page) for q in quotes(p.text, 1, p.headings)}
    assert labels["Light the reeds with the lamp."] == "-r, --with-reeds", labels


def test_a_page_that_only_sends_the_browser_elsewhere_is_no_document() -> None:
    # 89 of diffutils' 112 pages are Texinfo's "The node you are looking for is at Binary." (listed as read)
    stub = (
        '<html><head><title>Binary</title><meta http-equiv="Refresh" content="0; url=Comparison.html#Binary">'
        '</head><body><p>The node you are looking for is at <a href="Comparison.html#Binary">Binary</a>.</p>'
        "</body></html>"
    )
    assert extract_text(Path("Binary.html"), stub.encode()).text == ""
    # ... but a page with a text of its own is read, whatever its head says
    lit = "The keeper lights the lamp of the tower every night at dusk, and trims the wick at midnight. " * 4
    whole = stub.replace("<p>The node", f"<p>{lit}</p><p>The node")
    assert extract_text(Path("Binary.html"), whole.encode()).text.startswith(lit.strip())
    # ... and so is one that reloads itself (no url=)
    again = stub.replace("0; url=Comparison.html#Binary", "30")
    assert "The node you are looking for" in extract_text(Path("Binary.html"), again.encode()).text


@pytest.mark.parametrize(
    "sentence",
    [
        # the borgbackup and Flask reports opened quotes on these: what "this" or "it" is was not quoted
        "To avoid this, you could bind mount your lamp directory in a directory with the new name.",
        "You can avoid this by not lighting the lamp in a gale.",
        "You can keep it to speed up the next lighting.",
        "In many cases, this can avoid a sooty glass.",
        "Easy, this will usually just work with a dry wick.",
        "Conversely, wicks can fail completely with no advance warning.",
        "The text shown above needs to be written on a single line!",
        "Because of this, the oldest lamp of the tower is kept.",
        "Another possible reason is that the wicks do not have the same length.",
        "E.g. a wick of two inches burns through the night.",
        # haproxy-doc (session 35): "Currently, these protocols are proxy-protocol and SSL."
        "Currently, these lamps are the oil lamp and the gas lamp.",
        # diffutils (session 37): a Summary opened on "In these cases, you should probably look at ..."
        "In these cases, you should probably look at the wick before you light the lamp.",
        "In those situations the keeper lights the second lamp.",
        # CMake's guide (session 44): its Summary took the sentence this one leans on
        "If we don't do this, when the keeper lights the lamp it will smoke all night.",
        "Without it, the lens would scorch the wick.",
    ],
)
def test_opening_words_that_refer_back_lean_on_the_sentence_before(sentence: str) -> None:
    assert leans_back(sentence) and not stands_alone(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "To use this option, set the length of the wick in inches.",  # the option its term names
        "By default, this option is off for the lamps of a new tower.",
        "In this module, every lamp is lit at dusk.",
        "In addition to the lamps set in the log, the keeper lights a lantern.",  # no connective
        "You can use the lantern to trim the wick at night.",
        "In practice, it is safe to trim a cold wick.",
        "The keeper stores this oil in the cellar.",
        "Because of its weight, the lens turns on a bath of mercury.",
        "If you do not trim the wick, the lamp smokes all night.",
    ],
)
def test_words_that_name_their_own_thing_do_not_lean(sentence: str) -> None:
    assert not leans_back(sentence) and stands_alone(sentence)


def test_a_sentence_whose_opening_refers_back_is_quoted_with_the_one_before() -> None:
    passage = (
        "## Lamps\n\nIP-based lighting is a method to apply different wicks based on the lamp's port. "
        "Most commonly, this is used to light different lamps on different towers.\n"
    )
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    assert units == [
        "IP-based lighting is a method to apply different wicks based on the lamp's port. Most commonly, "
        "this is used to light different lamps on different towers."
    ], units


def test_an_api_pages_field_and_its_type_is_no_quote() -> None:
    # Flask's API page: "*Parameters*: Return type : `IO`" was a finding, 222 times over the page
    passage = (
        "## trim_wick(length=None)\n\nTrim the wick of the lamp to the given length in inches.\n\n"
        "Return type :\n\nOptional[Wick]\n\nFor example, to trim it by two inches:\n\nlamp.trim_wick(2)\n"
    )
    units = [q.text for q in quotes(passage, 1, ("Lamp", "trim_wick(length=None)"))]
    assert not any("Return type" in unit for unit in units), units
    assert "For example, to trim it by two inches: `lamp.trim_wick(2)`" in units, units  # a sample still is


def test_an_error_has_no_limitations_to_ask_about() -> None:
    # "Borg reports an IntegrityError ...; what should I do?" asked "What are the limitations of an
    # IntegrityError?"
    plan = keyword_plan("The lamp reports a WickError on my tower. What should I do?", 5)
    assert not any("limitations" in sq for sq in plan.sub_questions), plan.sub_questions
    assert any("limitations" in sq for sq in keyword_plan("How do I trim a wick?", 5).sub_questions)


def test_a_topic_is_widened_to_a_quotation_only_when_its_words_are_in_it() -> None:
    question = "Why does my lamp print 'Burning outside of lampshade context' at dusk?"
    assert quoted_whole(question, noun_phrases("lamp")[0]).text == "lamp"  # not the "lamp" of "lampshade"
    widened = quoted_whole(question, noun_phrases("lampshade")[0])
    assert widened.text == "'Burning outside of lampshade context'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # diffutils: "The basic algorithm is described by Eugene W [6]." (the page: "Eugene W. Myers in ...")
        (
            "The lamp was designed by Augustin J. Fresnel in 1822. It is still made.",
            ["The lamp was designed by Augustin J. Fresnel in 1822.", "It is still made."],
        ),
        # a thing and its letter, or a sentence after the initial, end the sentence
        ("See Appendix A. Fresnel lenses are listed.", ["See Appendix A.", "Fresnel lenses are listed."]),
        ("The keeper was Anna B. The lamp was hers.", ["The keeper was Anna B.", "The lamp was hers."]),
    ],
)
def test_a_names_initial_ends_no_sentence(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
