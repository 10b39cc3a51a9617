"""Links in a report point only to sources the run fetched, however the page spelled them; a cited sentence
is checked against its source's passages."""

from __future__ import annotations

import re

from deepresearch.report.render import check_citations, render_html
from tests._report_helpers import finding, two_source_body


def test_links_to_unfetched_urls_are_removed_in_every_spelling() -> None:
    seen = {"https://ok.example/a"}
    markdown = (
        "Read [login](HTTPS://evil.example/login), [x](//evil.example/x), see:https://evil.example/y, "
        "[mixed](HtTp://evil.example/z) and keep https://ok.example/a, HTTPS://ok.example/a and "
        "corpus://docs.md."
    )
    checked, result = check_citations(markdown, {}, seen)
    assert sorted(result.unknown_urls_removed) == [
        "//evil.example/x",
        "HTTPS://evil.example/login",
        "HtTp://evil.example/z",
        "https://evil.example/y",
    ]
    assert "evil.example" not in checked
    assert "https://ok.example/a" in checked and "HTTPS://ok.example/a" in checked
    assert "corpus://docs.md" in checked
    html = render_html(checked, "report", seen)
    assert "evil.example" not in html


def test_every_markdown_spelling_of_a_link_is_checked_in_markdown_and_html() -> None:
    seen = {"https://ok.example/a", "corpus://manual/page.md"}
    markdown = "\n".join(
        [
            'Keep [ok](https://ok.example/a "title") and [doc](corpus://manual/page.md) and <https://ok.example/a>.',
            "Drop [js](javascript:alert(1)), [data](data:text/html;base64,PHNjcmlwdD4=), [ftp](ftp://evil.example/f)",
            "and ![pixel](https://evil.example/track.png) and [mail](mailto:boss@evil.example).",
            "A reference [click][r] and an autolink <HTTPS://evil.example/auto> and <boss@evil.example>.",
            "[r]: https://evil.example/ref",
            'Raw <a href="https://evil.example/raw">html</a> and <img src=x onerror=alert(1)> stay text.',
            "A search result [seen](https://searched.example/only) was never fetched.",
        ]
    )
    checked, result = check_citations(markdown, {}, seen)
    for bad in ("evil.example", "javascript:", "data:text", "ftp://", "mailto:", "searched.example"):
        assert bad not in checked, bad
    assert '[ok](https://ok.example/a "title")' in checked and "[doc](corpus://manual/page.md)" in checked
    assert "<https://ok.example/a>" in checked
    assert "<a " not in checked and "&lt;a href=" in checked  # the tag is text now, its URL gone
    # each URL once: <boss@evil.example> and [mail](mailto:boss@evil.example) are one target
    assert len(result.unknown_urls_removed) == 9, result.unknown_urls_removed
    html = render_html(checked, "report", seen)
    hrefs = re.findall(r'<a [^>]*href="([^"]*)"', html)
    assert set(hrefs) == {"https://ok.example/a"}, hrefs
    # a local document cannot be opened from a saved page: named (with its address), never a dead link
    assert (
        '<span class="local-doc" title="local document on the research server: corpus://manual/page.md">doc'
        in html
    )
    assert "<img" not in html and '<a href="https://evil' not in html
    # the HTML applies the rule on its own too: an unchecked Markdown gets no foreign link either
    raw = render_html("[x](https://evil.example/x) [y](HTTPS://OK.example/a)", "report", seen)
    assert "href" not in raw


def test_a_sentence_of_function_words_is_supported_word_for_word() -> None:
    # "Because that is what it does." has no content word to count: it was marked unverified beside the
    # sentence it answers, quoted from the same passage
    passage = 'Think of the lamp as a "clock that burns oil". Because that is what it does.'
    line = '- Think of the lamp as a "clock that burns oil" [1]. Because that is what it does [1].'
    checked, result = check_citations(line, {1: [passage]}, set())
    assert result.unverified_sentences == 0 and checked == line, checked
    # ... and only word for word: the same words the passage does not say are not supported
    checked, result = check_citations("- Because that is what it is [1].", {1: [passage]}, set())
    assert result.unverified_sentences == 1 and "*(unverified)*" in checked, checked


def test_a_quoted_code_sample_keeps_its_brackets_and_a_lone_mark_its_space() -> None:
    # Flask's API page: "app = Flask(__name__.split('.')[0])" was printed without its "[0]" (read as a
    # citation of no source and removed), and "the ? in the URL" as "the? in the URL"
    passage = (
        "Create it with one of the two versions below: app = Flask('yourapplication') "
        "app = Flask(__name__.split('.')[0]). A route in a Blueprint will prepend its name separated by a . "
        "to the endpoint. Arguments go after the ? in the URL."
    )
    markdown = (
        "- Create it with one of the two versions below: "
        "`app = Flask('yourapplication') app = Flask(__name__.split('.')[0])` [1]\n"
        "- A route in a Blueprint will prepend its name separated by a . to the endpoint [1].\n"
        "- Arguments go after the ? in the URL [1][7].\n"
        "- Arguments go [1] after the ? in the URL."
    )
    checked, result = check_citations(markdown, {1: [passage]}, set())
    assert "`app = Flask('yourapplication') app = Flask(__name__.split('.')[0])` [1]" in checked, checked
    assert "separated by a . to the endpoint [1]." in checked, checked
    assert "after the ? in the URL [1]." in checked, checked
    assert checked.splitlines()[-1] == "- Arguments go after the ? in the URL [1].", checked  # no gap left
    # the code's [0] is no citation: one marker of no source ([7]) was checked and removed, not two
    assert [r["citation"] for r in result.removed] == [7], result.removed
    assert result.supported == 4


def test_a_marker_after_etc_keeps_the_abbreviations_full_stop() -> None:
    passage = "Resolve symbols for dispatch tables etc. In other words: every symbol is resolved."
    checked, _ = check_citations(
        "- Resolve symbols for dispatch tables etc [1]. In other words: every symbol is resolved [1].",
        {1: [passage]},
        set(),
    )
    assert "dispatch tables etc. [1] In other words" in checked, checked


def test_a_quotes_asterisks_stay_asterisks() -> None:
    # rsyslog's "“*server.example.net”, “server*.example.net”" rendered in italics, its wildcards gone
    quote = "Names such as *lamp.example.net and lamp*.example.net match, and `a*b` is code."
    body = two_source_body([finding(quote, 1, 0.9, 0)])
    assert "Names such as \\*lamp.example.net and lamp\\*.example.net match, and `a*b` is code [1]." in body
    html = render_html(body, "report", set())
    assert "*lamp.example.net and lamp*.example.net" in html and "<em>" not in html, html
