"""What a fourth reading of corpora nobody tuned on showed in the report (session 34: bind9-doc and
python-celery-doc, 12 questions of a helper's own): a page's footnote mark read as the report's citation,
a sentence cut at "Inc.", a prose line, an admonition's title or a version note shown as the code sample the
sentence before announces, an option's summary and its first sentence quoted back to back, release notes
under a release's sub-headings taken for an answer (tests/test_extractive_answers.py). Each case is the
shape seen there, on words of our own."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from deepresearch.extractive.reading.pages import navigation, release_pages
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages, section_label, split_sentences
from deepresearch.report.lines import cite
from deepresearch.report.render import cited_numbers, markdown_text
from deepresearch.search.documents import extract_text
from tests._report_helpers import finding, two_source_body


@pytest.mark.parametrize(
    ("quote", "shown"),
    [
        (
            "Every wick comes with a spare, known as a SPARE [5].",
            "Every wick comes with a spare, known as a SPARE.",
        ),
        (
            "Paraffin is inherently smoky [*], and should be avoided.",
            "Paraffin is inherently smoky, and should be avoided.",
        ),
        # a number in brackets that ends no clause is the text's own: shown, not a citation
        ("Trim it [2] and light it [3]", "Trim it \\[2\\] and light it"),
    ],
)
def test_a_pages_footnote_mark_is_not_quoted(quote: str, shown: str) -> None:
    assert markdown_text(quote) == shown.replace("*", "\\*")
    assert cited_numbers(markdown_text(quote)) == set()


@pytest.mark.parametrize(
    "quote",
    [
        # mutt: "These may include ^C, ^\\, ^Q" was quoted "^C, ^, ^Q" (a backslash before punctuation is an
        # escape in Markdown)
        "These may include ^C, ^\\, ^Q and ^Z.",
        "Match \\. and \\( literally, or a*b and *.lamp.example.net, and \\* too.",
        "Set _PATH_ to C:\\lamps\\ or C:\\oil\\_wick, and snake_case stays, and so does \\[1] and wick[2].",
        "The pattern `a\\.b_` is code, and so is `*_x_*`.",
    ],
)
def test_a_quote_reads_in_the_report_as_its_source_wrote_it(quote: str) -> None:
    shown = MarkdownIt("js-default").render(markdown_text(quote))
    assert html.unescape(re.sub(r"<[^>]+>", "", shown)).strip() == quote.replace("`", ""), shown


def test_an_index_in_brackets_is_shown_and_cites_nothing() -> None:
    shown = markdown_text("Pass wicks[1] to the lamp, and `lamps[2]` stays code.")
    assert shown == "Pass wicks\\[1\\] to the lamp, and `lamps[2]` stays code."
    assert cited_numbers(shown) == set()


@pytest.mark.parametrize(
    "text",
    [
        "Say a company named Lamps, Inc. (lamps.example) has three sites. Each burns oil.",
        "As Wick et al. showed, lamps burn all night. Each burns oil.",
        "Lanterns Ltd. sells wicks to every keeper. Each burns oil.",
    ],
)
def test_a_companys_abbreviation_ends_no_sentence(text: str) -> None:
    # bind9-doc's "Let's say a company named Example, Inc. (example.com) has ..." was quoted "Let's say a
    # company named Example, Inc [1]."
    assert split_sentences(text) == [text.removesuffix(" Each burns oil."), "Each burns oil."]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        # bind9-doc: a prose paragraph that announces the log line after it was shown as code
        ("At level 1 or higher each lamp that fails is logged as follows:", None),
        ("Warning", None),  # celery: the admonition's title in place of the `celery purge` sample
        ("New in version 3.0.18.", None),  # celery: a version note
        ("Disabled.", None),
        ("ps aux | grep lamp", "`ps aux | grep lamp`"),  # a pipeline is a sample
        ("north | lamp | Bright", None),  # celery: a table's row ("+ | latitude | North")
        ("make clean.", "`make clean.`"),
        ("lamp --trim=2 --wick", "`lamp --trim=2 --wick`"),  # a sample still is one
        # Apache's mod_filter: a term's description before its sample, shown as the term's code
        ("A simple case of replacing TrimWicks", None),
        ("To trim the wick of a new or smoky lamp, use", None),  # git's user manual, before its command
        ("lamp trim all Wicks", "`lamp trim all Wicks`"),  # plain words, none that prose is made of
    ],
)
def test_only_a_sample_is_quoted_as_the_sample_a_sentence_announces(line: str, shown: str | None) -> None:
    passage = f"## Lamps\n\nThe keeper lights every lamp of the tower with this command:\n\n{line}\n"
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    intro = "The keeper lights every lamp of the tower with this command: "
    # (with no sample to show, the sentence is quoted alone, what it announces elided: "...: …")
    samples = [u for u in units if u.startswith(intro) and u != f"{intro}…"]
    assert [u.rsplit(": ", 1)[1] for u in samples] == ([shown] if shown else []), units


@pytest.mark.parametrize(
    "passage",
    [
        "## Lamps\n\nChanged in version 3.2: The wick of every lamp is now trimmed at dusk by the keeper.\n\n"
        "The keeper trims the wick of every lamp at dusk and at dawn.\n",
        # ... within a paragraph too
        "## Lamps\n\nThe keeper trims the wick of every lamp at dusk and at dawn. Changed in version 3.2: "
        "The wick of every lamp is now trimmed at dusk by the keeper.\n",
    ],
)
def test_a_version_note_is_no_quote(passage: str) -> None:
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    assert units == ["The keeper trims the wick of every lamp at dusk and at dawn."], units


@pytest.mark.parametrize("apparatus", ["New in version 3.0.18.", "Warning"])
def test_a_sample_after_a_version_note_is_still_the_sample_announced(apparatus: str) -> None:
    # celery: "You can disable untrusted content by specifying a white-list of accepted content-types in
    # the accept_content setting:", then "New in version 3.0.18.", then the setting's sample
    intro = "You can refuse wet wicks by listing the dry ones in the wick setting:"
    passage = f"## Lamps\n\n{intro}\n\n{apparatus}\n\nwick = ['dry']\n"
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    assert units == [
        "You can refuse wet wicks by listing the dry ones in the wick setting: `wick = ['dry']`"
    ], units


@pytest.mark.parametrize(
    "repeat",
    [
        "This sets the maximum wick length that the keeper trims, in inches.",
        "This option sets the maximum wick length trimmed by the keeper.",
    ],
)
def test_a_sentence_that_repeats_the_one_before_it_is_quoted_once(repeat: str) -> None:
    # bind9-doc's option entries: "Sets the maximum EDNS UDP message size sent by named [1]. This sets the
    # maximum EDNS UDP message size that named sends, in bytes [1]."
    first = "Sets the maximum wick length trimmed by the keeper."
    after = "Valid values are 1 to 4; values outside this range are silently adjusted."
    line = cite({"statement": f"{first} {repeat} {after}", "citations": [1], "section": "max-wick"})
    assert line == f"*max-wick*: {first[:-1]} [1]. {after[:-1]} [1].", line
    # two sentences that say different things stay
    other = "The keeper trims the wick at dusk and lights the lamp at night."
    assert cite({"statement": f"{first} {other}", "citations": [2]}).count("[2]") == 2


def test_this_option_at_an_entrys_start_is_labelled_with_the_entry() -> None:
    # bind9-doc's manual pages: "*Manual Pages*: This option is used with the -a option to specify a
    # directory where named runs chrooted." - the page's title where the option's name was meant
    passage = "###### -t wickdir\n\nThis option is used with the -a option to name the folder of the trims.\n"
    units = quotes(passage, 1, ("Keeper Pages", "trim - the wick trimmer", "Options", "-t wickdir"))
    assert [(u.section, u.text[:11]) for u in units] == [("-t wickdir", "This option")], units
    # a section in words still points "This module ..." at the page's subject
    passage = "## Basics\n\nThis module implements the lamp protocol for all keepers of the tower.\n"
    assert quotes(passage, 1, ("lamp module", "Basics"))[0].section == "lamp module"
    # ... but "This option ..." in a passage cut past the option's name names no option: not the page's
    # ("*git-cherry-pick(1) Manual Page*: This option determines how the commit message ...", session 35)
    passage = "## OPTIONS\n\nThis option decides how the wick is trimmed before the lamp is lit.\n"
    assert quotes(passage, 1, ("trim(1) Manual Page", "OPTIONS")) == []
    # ... and under a section named after one entry, it is that entry's
    passage = "## wick_length\n\nThis setting decides how the wick is trimmed before the lamp is lit.\n"
    assert [u.section for u in quotes(passage, 1, ("Lamp settings", "wick_length"))] == ["wick_length"]
    # (gitattributes(5)'s "eol": "This attribute sets a specific line-ending style ...")
    passage = "#### eol\n\nThis attribute decides how the wick is trimmed before the lamp is lit.\n"
    assert [u.section for u in quotes(passage, 1, ("Lamp attributes", "EFFECTS", "eol"))] == ["eol"]


def test_read_first_names_the_section_of_the_strongest_quote_not_the_pages_title() -> None:
    # bind9-doc: "Read first ... no. 1, Manual Pages — BIND 9 ... (section Manual Pages)", celery: "(section
    # id)" - the section of the first quote the report listed, not of its strongest
    findings = [
        finding("The keeper trims the lamp wick of the station at dusk.", 1, 0.7, 0, section="id"),
        finding("A first-order lens concentrates the lamp's light into a beam.", 1, 0.9, 1, section="Lenses"),
        finding(
            "The lamp's light is concentrated by the lens of the station.", 2, 0.5, 0, section="Lamp Pages"
        ),
    ]
    body = two_source_body(findings)
    read_first = next(line for line in body.splitlines() if line.startswith("- Read first"))
    assert "no. 1, corpus://a.html (section Lenses)" in read_first, read_first
    titled = two_source_body(
        [{**f, "section": "corpus://a.html"} if f["citations"] == [1] else f for f in findings]
    )
    assert "(section corpus://a.html)" not in titled, titled


@pytest.mark.parametrize(
    "announcing",
    [
        "The following are lamps on which the wick is known to burn all night.",
        "The meaning of the other marks on the wick is summarized in the following list.",
        "The following is a list of the available wicks, in the order that they were made.",
    ],
)
def test_a_sentence_that_announces_a_list_in_its_words_is_not_quoted_without_it(announcing: str) -> None:
    # bind9-doc: "The following are platforms on which BIND is known to build and run [1]." (no list)
    passage = f"## Lamps\n\n{announcing}\n\nThe keeper trims the wick of every lamp at dusk and at dawn.\n"
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    assert units == ["The keeper trims the wick of every lamp at dusk and at dawn."], units
    listed = f"## Lamps\n\n{announcing}\n\n- the north lamp\n- the south lamp\n"
    units = [q.text for q in quotes(listed, 1, ("Lamp", "Lamps"))]
    assert len(units) == 1 and units[0].startswith(announcing[:-1]) and "south lamp" in units[0], units


def test_sentences_a_review_found_the_new_rules_must_keep() -> None:
    # negated or naming another setting: no repeat of the sentence before it
    for pair in (
        "The wick is trimmed when the lamp is lit. The wick is not trimmed when the lamp is out.",
        "Set `wick_min` to the shortest wick you trim. Set `wick_max` to the longest wick you trim.",
    ):
        assert cite({"statement": pair, "citations": [1]}).count("[1]") == 2, pair
    # a note that opens a line leaves the sentence after it; "Here are ..." and "The following is ...: ..."
    # state something whole
    kept = [
        "The keeper trims the wick of every lamp at dusk and at dawn.",
        "Here are the two rules: the wick must be dry and the oil must be clean.",
        "The following is true of every lamp in the tower: it burns all night.",
    ]
    passage = "## Lamps\n\nNew in version 3.0.18. " + " ".join(kept) + "\n"
    assert [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))] == kept
    # a number in brackets that is the text's own stays, and cites nothing
    shown = markdown_text("Valid answers are [1] for yes and [2] for no.")
    assert shown == "Valid answers are \\[1\\] for yes and \\[2\\] for no." and not cited_numbers(shown)
    # "Ltd." before a capital ends its sentence, as "etc." does
    assert split_sentences("It is made by Lanterns Ltd. It burns oil.") == [
        "It is made by Lanterns Ltd.",
        "It burns oil.",
    ]


def test_read_first_hides_only_a_section_named_as_its_page() -> None:
    findings = [
        finding("A first-order lens concentrates the lamp's light into a beam.", 1, 0.9, 0, section="a")
    ]
    assert "(section a)" in two_source_body(findings)  # not the title "corpus://a.html"


def test_a_how_to_titled_changes_is_no_release_notes() -> None:
    passages = [
        {"n": 1, "headings": ["Changes to make before refitting the lamp", f"Step {i}"]} for i in range(4)
    ] + [{"n": 2, "headings": ["Change history for Lamp 1.0", f"Lens fixes {i}"]} for i in range(4)]
    assert release_pages(passages) == {2}


def test_a_sample_after_an_admonition_is_still_the_sample_announced() -> None:
    # celery: "... in the accept_content setting:", a version note, a "Note" and its body, then the sample
    passage = (
        "## Lamps\n\nYou can refuse wet wicks by listing the dry ones in the wick setting:\n\n"
        "New in version 3.0.18.\n\nNote\n\nThis setting was first read by the keepers of the old tower.\n\n"
        "wick = ['dry']\n\nThe keeper trims the wick of every lamp at dusk and at dawn.\n"
    )
    units = [q.text for q in quotes(passage, 1, ("Lamp", "Lamps"))]
    wanted = "You can refuse wet wicks by listing the dry ones in the wick setting: `wick = ['dry']`"
    assert wanted in units, units
    assert units[-1] == "The keeper trims the wick of every lamp at dusk and at dawn.", units


def test_a_header_row_is_no_sample() -> None:
    # celery: "Possible event types are: `Event: Meaning`"
    passage = "## Lamps\n\nPossible lamp states are:\n\n| State | Meaning |\n\nlit: The lamp burns.\n"
    assert not any("Meaning" in q.text for q in quotes(passage, 1, ("Lamp", "Lamps")))


def test_an_item_of_a_long_list_is_quoted_with_what_announced_it() -> None:
    # haproxy-doc's "HAProxy is not : - an explicit HTTP proxy, i.e. the proxy that browsers use ...": each
    # item too long to quote the list whole, and none a sentence alone - the answer was quoted nowhere
    horn = " to warn the ships in the bay when the fog rolls in from the sea at dusk or at dawn" * 4
    beacon = ", so a captain finds the harbour entrance by the light of the lamp and the chart alone" * 4
    passage = (
        "The lamp is not :\n\n"
        f"- a fog horn : it makes no sound{horn}.\n\n"
        f"- a radio beacon : it sends no signal{beacon}.\n"
    )
    texts = [u.text for u in quotes(passage, 1, ("Lamp", "What the lamp is not"))]
    assert any(t.startswith("The lamp is not : a fog horn : it makes no sound") for t in texts), texts
    # (the items before it left out, it says so: "… a radio beacon")
    assert any(t.startswith("The lamp is not : … a radio beacon : it sends no signal") for t in texts), texts


def test_a_name_before_a_bracket_after_a_space_is_no_call() -> None:
    # postconf(5)'s "smtpd_recipient_restrictions (default: see "postconf -d" output)" was labelled
    # "smtpd_recipient_restrictions()"
    heading = 'wick_length_restrictions (default: see "lampconf -d" output)'
    assert section_label(heading) == heading
    assert section_label("lamp.trim(wick, length=12, *, keeper=None, tower=None, bay=None)") == "lamp.trim()"


def test_a_manuals_version_banner_is_no_section_to_quote() -> None:
    # haproxy-doc: "##### version 2.6.12-1+deb12u4 (Debian)" over "Note to documentation contributors : This
    # document is formatted with 80 columns per line ..." - quoted as the best page's opening in 11 of 12
    note = "Note to the keepers : this handbook is written with 80 columns per line and no tabs at all."
    assert quotes(note, 1, ("Lamp", "Starter Guide", "version 2.6.12-1+deb12u4 (Lighthouse)")) == []
    assert navigation(["Lamp", "version 2.6.12-1+deb12u4 (Lighthouse)"])
    # a release's section in release notes is no banner
    assert not navigation(["Lamp", "Version 1.2.4 (2023-03-24)"]) and not navigation(["Lamp", "Versioning"])


def test_a_books_index_is_navigation() -> None:
    # the Exim specification's Concept Index: "Kaspersky:" over "Content scanning at ACL time [Scanning for
    # viruses]", under the letter K, quoted as 23 findings of one report
    entry = "Sophos and Sophie:\n\nContent scanning at the lamp [Scanning for smoke]. It names the tower."
    assert quotes(entry, 1, ("Lamp", "Chapter 63 - Concept Index", "S")) == []
    assert navigation(["Lamp", "Option Index", "A"]) and navigation(["Index"])
    # ... not a list of modules with what each does, nor a section on an index
    assert not navigation(["Lamp", "Module Index"]) and not navigation(["Lamp", "CREATE INDEX"])
    assert not navigation(["Lamp", "Reading the index"])


def test_an_entry_with_a_long_default_is_labelled_with_its_name() -> None:
    # postconf(5): "`smtpd_relay_restrictions (default: permit_mynetworks,…`" cut at 80 characters
    long = "wick_length_restrictions (default: trim_at_dusk, trim_at_dawn, trim_when_smoking, defer_unknown)"
    assert section_label(long) == "wick_length_restrictions"
    short = 'wick_length (default: see "lampconf -d" output)'
    assert section_label(short) == short  # short enough to show whole, its default with it


def test_a_clause_before_a_sample_labels_nothing() -> None:
    # django: "*- In your settings file, define STATIC_URL, for example*: This method is grossly inefficient
    # and probably insecure" told a reader that defining STATIC_URL is insecure (the item, cut from the
    # passages after it, labelled them); "*`raw()` supports indexing, so if you need only the first result
    # you can write*:" labelled the sentence after its sample
    page = (
        "<h1>Lamps</h1><h2>Serving the lamps</h2><ul><li><p>Make sure that the oil is listed in your store."
        "</p></li><li><p>In your lamp file, define LAMP_URL, for example:</p><div class='highlight'><pre>"
        "LAMP_URL = 'lamps'</pre></div></li><li><p>Store your lamps in a folder called lamps in your tower."
        "</p></li></ul>"
        "<p>Serving lamps from a file is slow and smoky, so it is unsuited to a harbour.</p>"
        "<h2>Wick lookups</h2><p><code>wick()</code> supports the indexing of the wicks in a lamp:</p>"
        "<pre>wick()[0]</pre><p>The indexing of the wicks is not done by the lamp itself.</p>"
        "<h2>Options</h2><dl><dt><code>--trim</code></dt><dd><p>Trim the wick of the lamp at dusk.</p></dd>"
        "</dl>"
    )
    text = extract_text(Path("lamp.html"), f"<html><body>{page}</body></html>".encode()).text
    passages = heading_passages(text, target_chars=100)
    labels = {q.text: q.section for p in passages for q in quotes(p.text, 1, p.headings, p.term)}
    assert labels["Serving lamps from a file is slow and smoky, so it is unsuited to a harbour."] == (
        "Serving the lamps"
    ), labels
    assert labels["The indexing of the wicks is not done by the lamp itself."] == "Wick lookups", labels
    assert labels["Trim the wick of the lamp at dusk."] == "--trim", labels  # a name is a term still


def test_a_pages_navigation_row_is_no_quote() -> None:
    # mutt (DocBook): "*3. Searching and Limiting*: Security Considerations | Home | Chapter 9 [1]." - the
    # page's navigation footer, quoted as a finding (it stays in the text: PostgreSQL's names the chapter)
    page = (
        "<h1>Chapter 8. Lamps</h1><h2>3. Lighting</h2><p>The keeper lights the lamp of the tower at dusk.</p>"
        '<div class="navfooter"><table summary="Navigation footer"><tr><td><a href="a.html">Prev</a></td><td>'
        '</td><td><a href="c.html">Next</a></td></tr><tr><td>Chapter 7. Wicks of the tower </td><td><a href="'
        'index.html">Home</a></td><td> Chapter 9. Oil and its keepers</td></tr></table></div>'
    )
    text = extract_text(Path("lamp.html"), f"<html><body>{page}</body></html>".encode()).text
    assert "Chapter 7. Wicks of the tower | Home | Chapter 9. Oil and its keepers" in text, text
    found = [q.text for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)]
    assert found == ["The keeper lights the lamp of the tower at dusk."], found
    # ... while a table's row of data is quoted
    row = "<tr><td>D</td><td>Dim</td><td>The lamp burns low all night.</td></tr>"
    page = f"<html><body><h1>Lamps</h1><h2>Flags</h2><table>{row}</table></body></html>"
    text = extract_text(Path("lamp.html"), page.encode()).text
    assert [q.text for p in heading_passages(text) for q in quotes(p.text, 1, p.headings)] == [
        "D | Dim | The lamp burns low all night."
    ]


def test_an_admonitions_title_labels_no_quote() -> None:
    # mutt (DocBook): "*Note*: Perhaps you wish to use lynx to view text/html files ..." - the text after a
    # note's box (titled by an h3) was labelled "Note", and the Recommendations said "(section Note)"
    page = (
        "<h1>Chapter 3. Lamps</h1><h2>9. Lighting the lamp</h2><p>The keeper lights the lamp at dusk.</p>"
        '<div class="note"><h3 class="title">Note</h3><p>A wet wick never lights at the first try.</p></div>'
        "<p>The keeper trims the wick before he lights the lamp.</p>"
    )
    text = extract_text(Path("lamp.html"), f"<html><body>{page}</body></html>".encode()).text
    labels = {
        q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)
    }
    assert set(labels.values()) == {"9. Lighting the lamp"}, labels
    assert "The keeper trims the wick before he lights the lamp." in labels, labels
    # ... nor one right under the page's title: the page is the source, so its quotes have no label
    text = extract_text(
        Path("lamp.html"),
        f"<html><body>{page.replace('<h2>9. Lighting the lamp</h2>', '')}</body></html>".encode(),
    ).text
    labels = {
        q.text: q.section for p in heading_passages(text) for q in quotes(p.text, 1, p.headings, p.term)
    }
    assert set(labels.values()) == {""} and len(labels) == 3, labels
