"""What the eleventh reading found and session 41 mended (issue [quality] part 2; Vim's help pages, set by
makehtml.awk in one <pre> each, and libcurl's man pages by roffit; bench/quality/JOURNAL.md session 41).
Invented inputs in the shapes of those pages."""

from __future__ import annotations

import html
from pathlib import Path

from markdown_it import MarkdownIt

from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages
from deepresearch.report.links import _VIEWERS, REMOVED, sanitize_links
from deepresearch.search.documents import extract_text
from deepresearch.search.preformatted import DOCUMENT_LINES, prose_text


def _page(body: str) -> str:
    """The text the corpus reads from a page of this body."""
    page = f"<html><head><title>Lamp</title></head><body><main>{body}</main></body></html>".encode()
    return extract_text(Path("lamp.html"), page).text


def _labelled(text: str) -> dict[str, str]:
    """Each quote of the page's passages, with the label the report prints before it."""
    return {q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)}


_RULE = "=" * 78
_ENTRY = """
\t\t\t\t *'{name}'* *'{short}'* *'no{name}'*
'{name}' '{short}'\tboolean\t(default off)
\t\t\tlocal to lamp
\tWhen on, the keeper trims the {name} wick before the lamp is lit at
\tdusk.  The trimmed wick burns with a steadier flame through the
\tnight.  See also |'flame'| and |trim-{short}|.  Example:
\t    :set {short} fl=<Tab>{{len}}

\tThe {name} wick is never trimmed while the lamp burns, because the
\tkeeper would put out the flame and lose the light for the ships.
"""
_WORDS = ("amber", "brass", "cedar", "dune", "ember", "flint", "gale", "harbor", "iris", "jetty", "kelp")
_WORDS += ("lantern", "moss", "north", "ocean", "pier")
VIM_PAGE = (
    "\n*lamp.txt*\tFor Lamp version 9.0.  Last change: 2026 Dec 07\n\n"
    "\t\t  LAMP REFERENCE MANUAL    by the keepers\n\n"
    "Options of the lighthouse lamp, set with |:set|.\n\n"
    f"{_RULE}\n1. Wick options\t\t\t\t\t*lamp-wick-options*\n\n"
    "The wick options say how the keeper trims the wick.  Each has a short name\n"
    "and a long one, and is off until it is set in the keeper's lamprc file.\n"
    + "".join(_ENTRY.format(name=f"{word}wick", short=word[:2] + "w") for word in _WORDS)
    + "\nThe keeper writes every one of the wick options in the lamprc file at the top of the tower.\n"
    + f"\n{_RULE}\n*2.1*\tThe fog horn\n\n"
    "   The fog horn sounds every minute while the fog lies over the bay and the\n"
    "lamp cannot be seen from the ships that pass the point at night.\n\n"
    "SOUNDING THE HORN\n\n"
    ":horn[!] [count]\t\t\t\t\t*:horn* *:ho*\n"
    "\t\tSound the horn [count] times, or until the fog lifts with [!].\n\n"
    "COMMANDS\t\t\t\t      MODES ~\n"
    ":horn  :unhorn\t\t    Fog, Storm\n"
    ":bell  :unbell\t\t    Night\n\n"
    "\t# a comment of the horn's script, no heading\n"
    "\t:horn 3\n\n"
    "There are two ways to sound it:\n"
    "1.\tPull the horn's cord once for every ship that passes the point at night.\n"
    "2.\tTurn the horn's crank until the fog lifts from the bay and the ships are seen.\n\n"
    "The horn may fail for a few reasons:\n"
    "*E901*\tThe horn cannot sound, because the keeper has not filled its air tank.\n"
    "-----------------------------------------\n"
    "This line after a table's last rule is no title.\n"
    f"\n{_RULE}\n*2.2*\tThe bell\n\n"
    "The bell rings when the horn is broken and the fog is too thick for the lamp.\n"
)


def test_a_manual_set_in_pre_with_its_notation_is_read_as_sections_entries_and_paragraphs() -> None:
    # vim-doc's options.html: one <pre> whose |link|, {arg} and <Key> notation and examples are a fifth to a
    # third of its lines; it was read as one sample - the whole page one line, every quote glued to the next
    # entry's anchors and header, no label (1 of 392 quotes)
    lines = [line for line in VIM_PAGE.splitlines() if line.strip()]
    assert len(lines) >= DOCUMENT_LINES
    assert prose_text(VIM_PAGE) is not None
    text = _page(f"<h1>Lamp options</h1><pre>{html.escape(VIM_PAGE)}</pre>")
    assert max(len(line) for line in text.splitlines()) < 400, "a line of its own per paragraph"
    assert "\n## 1. Wick options\n" in text, text[:600]  # the title after a rule, its anchors no text
    assert "\n## 2.1 The fog horn\n" in text  # an anchor before a title
    # the first line of a paragraph indented otherwise than the rest is one paragraph with it
    assert "The fog horn sounds every minute while the fog lies over the bay and the lamp cannot" in text
    assert "\n### SOUNDING THE HORN\n" in text  # a heading in capitals is under its section's title
    assert "\n## 2.2 The bell\n" in text and "## This line" not in text  # a "-" rule closes a table
    # anchors after a line's text head it, and so do those before it ("*E822*  It cannot be opened ...")
    assert "\n###### :horn\n\n:horn[!] [count] Sound the horn [count] times" in text, text[-900:]
    assert "\n###### E901\n\nThe horn cannot sound, because the keeper has not filled its air tank." in text
    assert "\\# a comment of the horn's script" in text  # an example's comment is no heading
    # a numbered item is no term over itself ("*1.*: Use a mix of <Tab> and space characters")
    assert "\n\n1. Pull the horn's cord once" in text and "\n\n2. Turn the horn's crank" in text, text
    # a table's rows, their columns apart (map.html's "COMMANDS  MODES" table read as one sentence)
    assert "\n\nCOMMANDS | MODES\n\n:horn :unhorn | Fog, Storm\n\n:bell :unbell | Night\n\n" in text
    assert "\n###### 'cedarwick'\n\n'cedarwick' 'cew' boolean (default off)\n\nlocal to lamp\n\n" in text
    assert "\n\n:set cew fl=<Tab>{len}\n\n" in text  # the example, a line of its own
    assert "*'" not in text  # the anchors head the entries, they are not quoted
    labelled = _labelled(text)
    steadier = "The trimmed wick burns with a steadier flame through the night."
    assert labelled[steadier].startswith("'") and labelled[steadier] != "'amberwick'", labelled[steadier]
    because = next(q for q in labelled if q.startswith("The cedarwick wick is never trimmed"))
    assert labelled[because] == "'cedarwick'"
    # an entry ends where prose at the margin follows its indented description: the section's again
    margin = "The keeper writes every one of the wick options in the lamprc file at the top of the tower."
    assert labelled[margin] == "1. Wick options", labelled[margin]
    assert next(v for k, v in labelled.items() if k.startswith("The horn cannot sound, because")) == "E901"
    rings = "The bell rings when the horn is broken and the fog is too thick for the lamp."
    assert labelled[rings] == "2.2 The bell", labelled[rings]


def test_a_long_block_of_prose_with_samples_in_it_is_read_as_paragraphs_without_headings_of_its_own() -> None:
    # haproxy's management.html: 368 lines of options described with hanging indents, with their samples;
    # a sixth of the lines read as code, so the block was one sample line; without anchors it gains no title
    option = (
        "  -f{n} <cfgfile> : adds <cfgfile> to the list of configuration files to be\n"
        "        loaded by the keeper.  If <cfgfile> is a directory, all the files\n"
        "        it contains are loaded in the order of their names.  Example:\n\n"
        "          $ lampd -f{n} /etc/lamp.cfg\n\n"
    )
    block = "The lamp daemon takes these options on its command line :\n\n" + "".join(
        option.format(n=n) for n in range(40)
    )
    text = prose_text(block)
    assert text is not None and "#" not in text, (text or "")[:300]
    assert (
        "-f3 <cfgfile> : adds <cfgfile> to the list of configuration files to be loaded by the keeper."
    ) in text
    assert "\n\n$ lampd -f3 /etc/lamp.cfg\n\n" in text
    # a short block of the same lines is still a sample, as before
    assert prose_text(option.format(n=1) * 3) is None


def test_a_plans_topic_is_no_filler_the_question_wraps_its_subject_in() -> None:
    # vim and libcurl questions planned on "a series", "the middle", "confused", "some time": the rarest
    # phrase in an API's pages is often the asker's filler, and the sub-questions and queries followed it
    question = "How can I record a series of keystrokes in the lampctl shell and replay them?"
    assert keyword_plan(question, 4).topic == "keystrokes"
    rare = {"lamp": 0.3, "dark": 0.2, "watch": 0.2, "middle": 0.01, "the middle": 0.001}
    assert (
        keyword_plan("Why does the lamp go dark in the middle of my watch?", 4, rarity=rare).topic
        != "the middle"
    )
    rare = {"confused": 0.001, "wicks": 0.2, "flames": 0.2, "chimneys": 0.2, "lamp": 0.3}
    question = (
        "I'm confused by wicks, flames and chimneys in a lamp. How are they different and how do they relate?"
    )
    confused = keyword_plan(question, 4, rarity=rare)
    assert not any("confused" in sq for sq in confused.sub_questions), confused.sub_questions
    hangs = keyword_plan(
        "My lamp hangs forever when the oil runs out. How do I make it give up after some time?", 4
    )
    assert hangs.sub_questions[0] == "How do I make my lamp give up after some time?", hangs.sub_questions
    hangs = keyword_plan("My lamp hangs forever in the tower when the oil is out. How do I make it stop?", 4)
    assert hangs.sub_questions[0] == "How do I make my lamp stop?", hangs.sub_questions
    # "Why does vim suddenly jump to a new line ...": the verb after a manner adverb was the topic "jump"
    phrases = noun_phrases("Why does the lamp suddenly flicker in the middle of my watch")
    assert [p.text for p in phrases] == ["the lamp", "my watch"]
    rare = {"wick": 0.2, "burn": 0.3, "time": 0.01, "some time": 0.002}  # "some time" rare in an API's pages
    assert keyword_plan("Why does the wick burn out after some time?", 4, rarity=rare).topic == "the wick"


def test_a_tagged_paragraphs_tag_in_a_roffit_page_heads_its_description() -> None:
    # curl's man pages by roffit: ".IP CURL_GLOBAL_SSL" is <p class="level0"><span class="nroffip">, and its
    # description's "if this bit is not set, ..." was quoted without the flag it is about
    body = (
        '<h2 class="nroffsh">FLAGS</h2><p class="level0">'
        '<p class="level0"><a name="LAMPWICK"></a><span class="nroffip">LAMP_WICK</span> '
        '<p class="level1">Trim the wick. '
        '<p class="level1">The implication here is that if this bit is not set, the keeper trims it by hand. '
        '<p class="level0"><a name="LAMPOIL"></a><span class="nroffip">LAMP_OIL</span> '
        '<p class="level1">Fill the lamp with oil before the keeper lights it at dusk. '
        '<p class="level0">Both flags are set by <span class="nroffip">LAMP_ALL</span> as well. '
        '<p class="level0">The keeper reads the flags from the log book of the lamp every morning. '
    )
    text = _page(body)
    assert "###### LAMP_WICK\n\nTrim the wick." in text, text
    labelled = _labelled(text)
    assert (
        labelled["The implication here is that if this bit is not set, the keeper trims it by hand."]
        == "LAMP_WICK"
    )
    assert next(v for k, v in labelled.items() if k.startswith("Fill the lamp with oil")) == "LAMP_OIL"
    assert "LAMP_ALL as well" in text  # a tag inside a sentence is no term
    # the list ends at the margin: what follows it is the section's again, not the last flag's
    assert (
        "LAMP_OIL" not in labelled["The keeper reads the flags from the log book of the lamp every morning."]
    )
    assert text.count("## FLAGS") == 2


def test_an_address_a_quote_holds_is_shown_as_its_page_wrote_it_and_is_no_link() -> None:
    # libcurl-security.html: "A redirect such as ftp://some-internal-server/private-file would then return
    # data ..." - the address is the point; the extractive report showed "[link removed: not a fetched
    # source]"
    line = "- A redirect such as ftp://lamp-room/private-file would then return the oil log [1]."
    shown, removed = sanitize_links(line, {"https://lamp.example/"}, quoted=True)
    reader = MarkdownIt("js-default", {"linkify": True}).enable("linkify")
    assert "ftp://lamp-room/private-file would then" in reader.render(shown)
    assert removed == ["ftp://lamp-room/private-file"]
    for viewer in _VIEWERS:  # no viewer links it
        assert not [t for block in viewer.parse(shown) for t in block.children or [] if t.type == "link_open"]
    # a model's words are no quote: an address it writes that the run never fetched is still removed
    assert REMOVED in sanitize_links(line, {"https://lamp.example/"})[0]


def test_a_roffit_pages_footnote_marks_are_no_text_and_its_notes_head_nothing() -> None:
    # libcurl-tutorial.html: "... after being set[4]." read as a citation of the report's fourth source; its
    # notes are tagged paragraphs "[1]" ... "[4]", which would have labelled each note "[4]"
    body = (
        "<p class=\"level0\">Set the wick with the 'trim-tool'[1] before the lamp is lit, or the keeper "
        "finds it charred after being set[2]. The lamp holds oil for a night (see list[3] in the code).</p>"
        '<h2 class="nroffsh">Footnotes</h2>'
        '<p class="level0"><a name="1"></a><span class="nroffip">[1]</span> '
        '<p class="level1">The trim tool is kept in the lamp room. '
        '<p class="level0"><a name="2"></a><span class="nroffip">[2]</span> '
        '<p class="level1">Before version 2 the wick was trimmed by hand. '
    )
    text = _page(body)
    assert "'trim-tool' before the lamp is lit" in text and "after being set. The lamp" in text, text
    assert "list[3]" in text  # no note of the page's: an index, kept
    assert "[1]" not in text and "[2]" not in text
    assert "#" not in text.split("## Footnotes", 1)[1], text


def test_a_page_in_utf8_that_declares_a_one_byte_charset_reads_as_utf8() -> None:
    # Debian's Vim help pages declare ISO-8859-1 over UTF-8 bytes: options.html's "ΑA,ΒB" read "ÎA,ÎB"
    head = '<html><head><meta http-equiv="Content-type" content="text/html; charset=ISO-8859-1">'
    utf8 = f"{head}<title>Lamp</title></head><body><p>The keeper maps ΑA and ΒB, café.</p></body></html>"
    assert "maps ΑA and ΒB, café." in extract_text(Path("lamp.html"), utf8.encode()).text
    # a page really in that charset is not valid UTF-8: it reads as it declares
    latin = f"{head}<title>Lamp</title></head><body><p>The keeper's café.</p></body></html>"
    assert "The keeper's café." in extract_text(Path("lamp.html"), latin.encode("latin-1")).text


def test_a_short_help_page_with_anchors_is_read_by_its_anchors_too() -> None:
    # if_ole.html (143 lines): "*ole-sendkeys*" over "SendKeys(keys)  Execute a series of keys." was quoted
    # glued to the methods around it, in the Summary of a question on recording keystrokes
    entries = "".join(
        f"\t\t\t\t\t\t\t*lamp-{name}*\n{name.title()}(keys)\tRing the {name} bell a series of times.\n\n"
        f"This method takes a single parameter, the number of times the keeper rings the {name} bell.\n\n"
        for name in ("fog", "storm", "noon")
    )
    page = (
        f"*lamp_bells.txt*\tFor Lamp version 9.0.\n\n{_RULE}\n2. Methods\t\t\t\t*lamp-methods*\n\n{entries}"
    )
    assert len([line for line in page.splitlines() if line.strip()]) < DOCUMENT_LINES
    text = _page(f"<h1>Lamp bells</h1><pre>{html.escape(page)}</pre>")
    assert "\n## 2. Methods\n" in text and "\n###### lamp-storm\n\nStorm(keys) Ring the storm bell" in text, (
        text
    )


def test_stopping_it_after_a_why_stops_what_happens_not_its_subject() -> None:
    # "Why does vim suddenly jump to a new line ..., and how do I stop it?" planned "How do I stop vim?"
    plan = keyword_plan("Why does the lamp suddenly flicker at dusk, and how do I stop it?", 4)
    assert plan.sub_questions[1] == "How do I stop the lamp from suddenly flickering at dusk?", (
        plan.sub_questions
    )
    plan = keyword_plan("Why does the keeper keep waking at dawn, and how can I prevent it?", 4)
    assert plan.sub_questions[1] == "How can I prevent the keeper from waking at dawn?", plan.sub_questions
    plan = keyword_plan("Why does the keeper keep the old wick, and how do I stop it?", 4)
    assert plan.sub_questions[1] == "How do I stop the keeper from keeping the old wick?", plan.sub_questions


def test_a_line_of_an_ordinary_manual_that_opens_with_a_hash_is_no_heading() -> None:
    # only a whole manual's own headings (_document_lines escapes the page's "#") are headings
    block = (
        "The lamp daemon lights the lamp at dusk and trims the wick when the flame smokes.\n"
        "It runs as the keeper and is started by the tower's process manager at night.\n"
        "# the keeper's note: the daemon restarts the lamp whenever the flame goes out\n"
        "and it writes every restart to the log book of the tower for the next keeper.\n"
    ) + "".join(
        f"The keeper reads the log book of the tower on the {n}th night of the month.\n" for n in range(8)
    )
    text = prose_text(block)
    assert text is not None and not text.startswith("#") and "\n#" not in text, text
