"""Prose a page sets in <pre> (search/preformatted.py): a manual page rendered by nroff and a manual kept
as plain text are read as headings, paragraphs, terms and list items; a code sample stays one line. The
shapes are those of postfix-doc's smtpd.8.html and haproxy-doc's intro.html (session 35), on words of our
own; a click-only menu (haproxy's keyword menus) is no text of the page; and a reference's entries (haproxy's
keyword blocks, postconf(5)'s named terms over long descriptions) head their descriptions."""

from __future__ import annotations

from pathlib import Path

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import LINE_BREAK
from deepresearch.search.documents import extract_text
from deepresearch.search.entries import shared_words
from deepresearch.search.preformatted import prose_text

MANUAL_PAGE = """LAMPD(8)                                                              LAMPD(8)

NAME
       lampd - the lighthouse lamp daemon

DESCRIPTION
       The lamp daemon lights the lamp at dusk and trims the wick when the
       flame smokes.  It runs as the keeper and is started by the tower's
       master(8)  process  manager,  which  restarts it whenever it exits
       with a recipi-
       ent of the last log message named in the configura-
       tion file.

SECURITY
       The lamp daemon is moderately security-sensitive.  It talks to the
       fog horn and to the weather station over the tower's own network.

COMMANDS
       light  Light the lamp at dusk, whatever the  weather  says,  and  keep
              it lit until the sun is up again over the bay.

CONFIGURATION PARAMETERS
       wick_length (12)
              The length of the wick that the daemon trims to, in milli-
              metres, every time the flame smokes in the night.
"""


def _html(body: str) -> bytes:
    return f"<html><head><title>page</title></head><body><main>{body}</main></body></html>".encode()


def test_a_manual_page_in_pre_reads_as_headings_paragraphs_and_terms() -> None:
    text = prose_text(MANUAL_PAGE)
    assert text is not None
    # a manual page's lists of names are short lines: it is read as prose still
    listed = (
        MANUAL_PAGE + "\nSEE ALSO\n" + "".join(f"       lamp{n}(8), the lamp part {n}\n" for n in range(12))
    )
    assert "## SEE ALSO" in (prose_text(listed) or "")
    page = extract_text(Path("lampd.8.html"), _html(f"<pre>{MANUAL_PAGE}</pre>")).text
    opening = "# LAMPD(8)\n\n## NAME\n\nlampd - the lighthouse lamp daemon\n\n## DESCRIPTION"
    assert page.startswith(opening), page
    blocks = text.split("\n\n")
    # the page's header line heads its sections, once (a quote under DESCRIPTION is labelled so)
    assert blocks[:4] == ["# LAMPD(8)", "## NAME", "lampd - the lighthouse lamp daemon", "## DESCRIPTION"]
    assert text.count("LAMPD(8)") == 1
    assert blocks[4].startswith(
        "The lamp daemon lights the lamp at dusk and trims the wick when the flame smokes."
    )
    # a word hyphenated at a line's end is one word again
    assert "with a recipient of the last log message named in the configuration file." in blocks[4]
    assert "## SECURITY" in blocks and "## CONFIGURATION PARAMETERS" in blocks
    assert "wick_length (12):" in blocks  # a parameter over its indented description is its term
    # ... and a command on the line its description starts on
    light = blocks[blocks.index("light:") + 1]
    assert light.startswith("Light the lamp at dusk, whatever the weather says"), blocks
    assert "The length of the wick that the daemon trims to, in millimetres, every time" in text
    # ... so that the report labels the description with the parameter
    passage = "\n\n".join(blocks[blocks.index("## CONFIGURATION PARAMETERS") :])
    units = quotes(passage, 1, ("lampd", "CONFIGURATION PARAMETERS"))
    assert [u.section for u in units] == ["wick_length (12)"], units


def test_a_manual_kept_as_text_in_pre_reads_as_paragraphs_and_list_items() -> None:
    block = (
        "The lighthouse is :\n\n"
        "  - a lamp holder : it can hold a lamp of any size and keep it lit through\n"
        "    the night, whatever the wind does to the tower and its windows.\n"
        "  - a fog signal : it sounds the horn every thirty seconds when the keeper\n"
        "    cannot see the next buoy from the gallery of the tower.\n\n"
        "The keeper trims the wick at dusk and lights the lamp when the sun has\n"
        "gone down behind the hill on the far side of the bay.\n"
    )
    blocks = (prose_text(block) or "").split("\n\n")
    assert blocks[0] == "The lighthouse is :"
    assert blocks[1].startswith("- a lamp holder : it can hold a lamp") and blocks[1].endswith("its windows.")
    assert blocks[2].startswith("- a fog signal :")
    assert blocks[3].startswith("The keeper trims the wick at dusk and lights the lamp when the sun has gone")


def test_a_code_sample_in_pre_stays_one_line_its_lines_kept_apart() -> None:
    commented = "".join(
        f"# the keeper trims the wick of lamp number {n} at dusk every night\n" for n in "12345"
    )
    samples = [
        commented + "wick_length = 12\n",  # comments read as prose, but every line is code
        "1 /etc/lamp/main.cf:\n2     wick_length = 12\n3     keeper = $tower\n",
        "CREATE TABLE lamp(\n  wick   TEXT,    -- the wick's kind, as the keeper names it\n  oil    INT\n);",
        "# light the lamp at dusk and trim the wick every night of the year\nlampd --light --trim\n",
        "sqlite> SELECT wick FROM lamp WHERE the keeper says so;\nwick one two three\n",
    ]
    for sample in samples:
        assert prose_text(sample) is None, sample
        page = extract_text(Path("p.html"), _html(f"<p>The lamp's setup:</p><pre>{sample}</pre>")).text
        # one line, its lines apart by the sample's line break (tests/test_sample_lines.py)
        lines = [" ".join(line.split()) for line in sample.splitlines() if line.strip()]
        assert LINE_BREAK.join(lines) in page.replace("\\#", "#"), page


def test_a_menu_shown_only_on_a_click_is_no_text_of_the_page() -> None:
    # haproxy-doc: "The "bindThis keyword is available in sections :Log forwarding..." keyword supports ..."
    body = (
        '<p>The "<span class="dropdown"><a class="dropdown-toggle" href="#">wick<span></span></a>'
        '<ul class="dropdown-menu"><li class="dropdown-header">This keyword is available in sections :</li>'
        '<li><a href="#a">Lamp options</a></li></ul></span>" keyword trims the lamp.</p>'
        "<p hidden>A note the page does not show.</p>"
    )
    text = extract_text(Path("p.html"), _html(body)).text
    assert text == 'The "wick" keyword trims the lamp.', text
    # ... but a tab's panel that waits for its click is the page's text (the other system's instructions)
    tabs = '<div role="tabpanel"><p>Keepers light it.</p></div>' + (
        '<div role="tabpanel" hidden><p>It glows.</p></div>'
    )
    assert extract_text(Path("p.html"), _html(tabs)).text == "Keepers light it.\n\nIt glows."


def test_a_keyword_entry_marked_by_its_class_heads_its_description() -> None:
    # haproxy-doc: a thousand keywords under one heading of the configuration manual, each a
    # <div class="keyword">; each is a section of its own now, its description labelled with its name
    body = (
        "<h2>4.2. Keywords</h2>"
        '<div class="keyword"><b><a class="anchor" name="wick"></a><a href="#4-wick">wick</a></b> '
        '<span style="color: #080">&lt;length&gt;</span></div>'
        "<pre>Trims the wick of the lamp to the given length before it is lit at dusk,\n"
        "whatever the keeper has set for the other lamps of the tower and the bay.\n"
        "The length is given in millimetres and may not exceed the lamp's own height.\n"
        "Lamps without a wick ignore this keyword and keep burning as they were.\n</pre>"
    )
    text = extract_text(Path("lamp.html"), _html(body)).text
    assert "###### wick <length>\n\nTrims the wick of the lamp" in text, text
    units = quotes(
        text.split("###### wick <length>\n\n", 1)[1], 1, ("Lamp", "4.2. Keywords", "wick <length>")
    )
    assert units[0].section == "wick <length>" and units[0].text.startswith("Trims the wick"), units


def test_a_named_term_over_a_long_description_heads_it() -> None:
    # postconf(5): "<DT><b><a name="smtpd_recipient_restrictions">...</a> (default: ...)</b></DT><DD><p>...
    # </p><p>...</p>" - a passage cut inside the description was labelled with the page's only heading
    paragraphs = "".join(f"<p>The keeper trims the wick, paragraph {n} of the entry.</p>" for n in range(3))
    body = (
        '<dl><dt><b><a name="wick_length">wick_length</a> (default: 12)</b></dt>'
        f"<dd>{paragraphs}</dd>"
        '<dt><b><a name="oil">oil</a></b></dt><dd><p>The lamp burns colza oil.</p></dd>'
        "<dt><b>fog</b></dt><dd>" + paragraphs + "</dd></dl>"
    )
    text = extract_text(Path("lamp.html"), _html(body)).text
    assert "###### wick_length (default: 12)\n\nThe keeper trims the wick, paragraph 0" in text, text
    assert "\n\noil:\n\nThe lamp burns colza oil." in text, text  # a glossary's short term stays a term
    assert "\n\nfog:\n\n" in text, text  # ... and so does one with no name of its own


def test_a_second_form_of_a_keyword_is_a_line_under_the_first() -> None:
    # "balance <algorithm>" then "balance url_param <param>": the description was labelled with the second
    body = (
        '<div class="keyword"><b>wick</b> &lt;length&gt;</div><a class="anchor" name="x"></a>'
        '<div class="keyword"><b>wick</b> auto</div>'
        "<pre>Trims the wick of the lamp to the given length before it is lit at dusk,\n"
        "whatever the keeper has set for the other lamps of the tower and the bay.\n"
        "The length is given in millimetres and may not exceed the lamp's own height.\n"
        "Lamps without a wick ignore this keyword and keep burning as they were.\n</pre>"
    )
    text = extract_text(Path("lamp.html"), _html(body)).text
    # the words the forms share head the text (the first form labelled the text on the others: HAProxy's
    # "redirect location <loc> ..." over the words on "redirect scheme <sch>"), each form a line under them
    assert text.startswith("###### wick\n\nwick <length>\n\nwick auto\n\nTrims the wick"), text
    # ... unless they part inside a name: the first form heads them ("set-var", "set-var-fmt")
    named = body.replace("<b>wick</b> auto", "<b>wick-fast</b> auto")
    text = extract_text(Path("lamp.html"), _html(named)).text
    assert text.startswith("###### wick <length>\n\nwick-fast auto\n\nTrims the wick"), text
    assert shared_words(["no option wick", "option wick"]) == ""  # no shared opening word
    assert shared_words(["lamp set-wick <n>", "lamp set-wick-fast <n>"]) == ""  # "lamp" names neither
    assert shared_words(["wick <length> dusk", "wick <length> dawn"]) == "wick"  # an argument is no name


def test_a_sample_inside_prose_in_pre_gives_no_term_and_a_wrapped_hyphen_stays() -> None:
    block = (
        "The keeper writes the lamp's settings in a section of its own, like this one\n"
        "for the north tower, and reads them again at every dusk before the lamp is lit:\n\n"
        "    tower north\n"
        "        wick 12\n\n"
        "The wick is trimmed to the length set there, in millimetres, whatever the comma-\n"
        "delimited list of the other towers says about their own lamps and their wicks.\n"
    )
    bullet = "\n       o\n              The keeper trims the wick of the lamp every evening at dusk.\n"
    assert "\n\no:\n\n" not in (prose_text(MANUAL_PAGE + bullet) or ""), "a bullet is no term"
    text = prose_text(block) or ""
    assert "tower north:" not in text, text  # a sample's line over its indented lines is no term
    assert "comma-delimited list" in text, text  # a hyphen the writer wrapped after is no nroff hyphenation


def test_a_manual_page_with_examples_of_its_own_is_still_prose() -> None:
    examples = "".join(f"           wick_length = {n}\n" for n in range(6))
    said = "\nEXAMPLES\n       The keeper sets these in the lamp's main file, one per line:\n"
    page = MANUAL_PAGE + said + examples
    assert "## EXAMPLES" in (prose_text(page) or "")


def test_a_value_named_at_the_margin_of_a_manual_in_pre_heads_its_description() -> None:
    """HAProxy's "mode" arguments: "tcp       The instance will work ..." over lines indented to its
    description. Each value is a term (its sentence opens on a lower-case name otherwise, and is no sentence
    to quote); a table's row and a list item over the same indent are none."""
    block = (
        "lamp      The tower works as a lighthouse. The keeper lights the lamp at dusk\n"
        "          and trims the wick whenever the flame smokes in the night.\n\n"
        "horn      The tower works as a fog signal. The keeper sounds the horn every\n"
        "          thirty seconds while the next buoy cannot be seen from the gallery.\n\n"
        "The keeper chooses the mode of the tower for each season and writes it down\n"
        "in the log book that the harbour master reads every month of the year.\n\n"
        "  - wick_log  Records the length of the wick after it was trimmed at dusk\n"
        "              by the keeper of the tower, in millimetres, every night.\n"
    )
    text = prose_text(block) or ""
    blocks = text.split("\n\n")
    assert blocks[blocks.index("lamp:") + 1].startswith("The tower works as a lighthouse. The keeper lights")
    assert blocks[blocks.index("horn:") + 1].endswith("cannot be seen from the gallery.")
    assert "- wick_log:" not in blocks and blocks[-1].startswith("- wick_log Records the length"), blocks
    units = quotes("\n\n".join(blocks[: blocks.index("horn:")]), 1, ("page", "Arguments"))
    assert [u.section for u in units] == ["lamp"] * len(units) and units, units
    # a table among enough prose for the block to be prose: its row over the indent names no term
    prose = "".join(
        f"The keeper of tower {n} lights the lamp at dusk and trims the wick at dawn.\n" for n in range(30)
    )
    table = "              | DAY | FOG\n   tower     LAMP | LAMP | HORN\n             ---+-----+----\n"
    assert "tower:" not in (prose_text(f"{prose}\n{table}") or "tower:").split("\n\n")


def test_an_option_named_by_a_one_row_table_heads_its_description() -> None:
    # the Exim specification: "forbid_filter_reply | Use: redirect | Type: boolean | Default: false", then
    # "If this option is true, this router may not generate an automatic reply ..." under no name at all
    row = (
        "<table><tr><td><span>wick_trim</span></td><td>Use: <em>lamp</em></td><td>Type: <em>boolean</em></td>"
        "<td>Default: <em>false</em></td></tr></table>"
    )
    body = (
        "<h2>10. Private options for the lamp</h2>" + row + "<p>If this option is true, the keeper trims the "
        "wick of the lamp at dusk. This option is forced to be true if the lamp smokes.</p>"
        "<table><tr><td>wick</td><td>Use: oil</td></tr><tr><td>lens</td><td>Use: glass</td></tr></table>"
    )
    text = extract_text(Path("lamp.html"), _html(body)).text
    assert "###### wick_trim\n\nUse: lamp\n\nType: boolean\n\nDefault: false\n\nIf this option" in text, text
    assert "wick: Use: oil\n\nlens: Use: glass" in text  # a table of two rows is a table
    passage = text.split("\n\n", 1)[1]
    units = quotes(passage, 1, ("Lamp", "10. Private options for the lamp", "wick_trim"))
    assert [u.section for u in units] == ["wick_trim"] * 2 and units[0].text == "Default: `false`", units


def test_an_action_named_with_an_ellipsis_heads_its_description() -> None:
    # Postfix's header_checks(5): "DISCARD optional text..." over its description was read as a sentence glued
    # to it, and its text was labelled with the entry before it ("BCC user@domain")
    page = MANUAL_PAGE.replace(
        "CONFIGURATION PARAMETERS",
        "ACTIONS\n       DIM optional reason...\n"
        "              Dim the lamp to half its light and log the optional reason when it\n"
        "              is given, otherwise log a generic message for the keeper.\n\n"
        "CONFIGURATION PARAMETERS",
    )
    blocks = (prose_text(page) or "").split("\n\n")
    assert "DIM optional reason...:" in blocks, blocks
    assert blocks[blocks.index("DIM optional reason...:") + 1].startswith("Dim the lamp to half its light")
