"""The Markdown report links only to fetched sources as a viewer reads it: markdown-it (CommonMark with
linkify, with and without tables) rendering the sanitised Markdown shows no other link or image target.

The vectors are a red-team pass's: a reference definition whose URL is on the next line, definitions inside
list items and block quotes, destinations with nested parentheses, a link broken across lines, bare www. and
e-mail addresses, raw HTML, images, angle-bracket autolinks, titles and entity-encoded schemes.
"""

from __future__ import annotations

import random
import time
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from deepresearch.report.compose import build_report_bundle
from deepresearch.report.links import REMOVED, sanitize_links
from deepresearch.report.render import check_citations, render_fragment, render_html

OK = "https://ok.example/a"
DOC = "corpus://manual/page.md"
FETCHED = {OK, DOC}
# what a viewer renders: CommonMark + linkify, as in the brief's red-team pass; and with GFM tables
VIEWERS = {
    "commonmark+linkify": MarkdownIt("commonmark", {"linkify": True}).enable("linkify"),
    "commonmark+linkify+table": MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"]),
}
_URL_ATTRIBUTES = {"href", "src", "srcset", "action", "formaction", "poster", "background", "data"}


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value or "" for name, value in attrs if name in _URL_ATTRIBUTES]


def targets(markdown: str, viewer: MarkdownIt) -> list[str]:
    """Every URL an element of the rendered page points to (real tags only: escaped text is no tag)."""
    parser = _Targets()
    parser.feed(viewer.render(markdown))
    parser.close()
    return parser.found


def foreign_targets(markdown: str) -> dict[str, list[str]]:
    allowed = {u for v in VIEWERS.values() for u in (*FETCHED, *(v.normalizeLink(x) for x in FETCHED))}
    found = {
        name: [t for t in targets(markdown, viewer) if t not in allowed and not t.startswith("#")]
        for name, viewer in VIEWERS.items()
    }
    return {name: bad for name, bad in found.items() if bad}


def sanitised(markdown: str) -> str:
    return check_citations(markdown, {}, FETCHED)[0]


VECTORS = {
    "reference URL on the next line": "See [the paper][r1].\n\n[r1]:\nftp://evil.example/paper\n",
    "reference in a list item": "- [r2]: ftp://evil.example/list\n- an item\n\nUse [it][r2].\n",
    "reference in a block quote": "> [r3]: ftp://evil.example/quote\n> quoted\n\nRead [this][r3].\n",
    "reference with a title": '[t][r4]\n\n[r4]: <ftp://evil.example/t> "a title"\n',
    "nested parentheses": "A [n](https:evil.example/((a))) link.\n",
    "mailto with nested parentheses": "Write [m](mailto:x@evil.example?((a))) now.\n",
    "bare mailto": "Or mailto:x@evil.example?((a)) directly.\n",
    "link broken across lines": "A [m](\nftp://evil.example/broken) here.\n",
    "link text broken across lines": "A [two\nlines](ftp://evil.example/two) here.\n",
    "bare www": "Visit www.evil.com/path today.\n",
    "bare e-mail": "Mail boss@evil.com today.\n",
    "bare domain": "Or evil.com and config.py.\n",
    "bare ftp": "Fetch ftp://evil.example/file now.\n",
    "html anchor": 'Raw <a href="ftp://evil.example/raw">html</a> here.\n',
    "html block": '<div>\n<a href="ftp://evil.example/block">x</a>\n</div>\n',
    "html image": '<img src="https://evil.example/pixel.png">\n',
    "image": "![x](ftp://evil.example/img.png) and ![y](https://evil.example/y.png)\n",
    "image in a link": f"[![x](ftp://evil.example/i.png)]({OK})\n",
    "angle autolink": "See <ftp://evil.example/auto> and <boss@evil.example>.\n",
    "title": '[t](ftp://evil.example/title "Title")\n',
    "entity-encoded scheme": "[e](&#x66;tp://evil.example/e) and &#x66;tp://evil.example/bare\n",
    "entity-encoded colon": "[e](ftp&#58;//evil.example/colon)\n",
    "protocol-relative": "[p](//evil.example/p) and //evil.example/bare\n",
    "search result only": "[seen](https://searched.example/only)\n",
    "link in a table": "| a | b |\n|---|---|\n| [x](ftp://evil.example/cell) | www.evil.com |\n",
    "table cell split": "| [x | y](ftp:z) |\n|---|---|\n",
    "marker joins text": "[www.evil](ftp://evil.example/j)[.com](ftp://evil.example/k)\n",
    "link in emphasis": "*[x](ftp://evil.example/em)* and **www.evil.com**\n",
    "link in a heading": "# [h](ftp://evil.example/h)\n",
}


@pytest.mark.parametrize("vector", sorted(VECTORS))
def test_no_viewer_follows_a_link_outside_the_fetched_sources(vector: str) -> None:
    markdown = VECTORS[vector] + f"\nKeep [ok]({OK}) and [doc]({DOC}).\n"
    assert foreign_targets(markdown), f"{vector}: not a vector, nothing to remove"
    checked = sanitised(markdown)
    assert foreign_targets(checked) == {}, checked
    for viewer in VIEWERS.values():  # the fetched sources stay links
        assert OK in targets(checked, viewer) and DOC in targets(checked, viewer), checked
    parser = _Targets()
    parser.feed(render_html(checked, "report", FETCHED))  # and the HTML report as before: nh3's
    assert set(parser.found) <= {OK, *(f"#source-{n}" for n in range(1, 100))}, parser.found


def test_a_link_markdown_it_refuses_is_removed_too() -> None:
    """markdown-it shows [js](javascript:...) as text; a viewer with a laxer rule may not."""
    checked = sanitised("[js](javascript:alert(1)) and [data](DATA:text/html,x) and [v](vbscript:x)\n")
    assert "js [link removed: not a fetched source]" in checked
    assert all(scheme not in checked.lower() for scheme in ("javascript:", "data:", "vbscript:")), checked


def test_link_text_stays_and_only_the_target_goes() -> None:
    checked = sanitised(
        "See [the paper][r1] and [two\nlines](ftp://evil.example/x) and boss@evil.com.\n\n"
        "[r1]:\nftp://evil.example/paper\n"
    )
    text = VIEWERS["commonmark+linkify"].render(checked)
    assert "the paper [link removed: not a fetched source]" in text
    assert "two\nlines [link removed: not a fetched source]" in text
    assert "boss@evil.com" in text and "<a" not in text
    assert "evil.example" not in checked


def test_the_rest_of_the_report_is_kept() -> None:
    """Headings, lists, quotes, code, tables, emphasis and citations read the same after a rebuild."""
    report = "\n".join(
        [
            "# Findings",
            "",
            "Setext title",
            "============",
            "",
            "Checkpoints are *durable* and **safe** [1]. Tasks_with_underscores keep ~~no~~ text.  ",
            "A hard break above; a [bad](ftp://evil.example/x) link and a `code [x](ftp://y)` span.",
            "",
            "- item one [2]",
            "  - nested *em*",
            '- item two with [ok](https://ok.example/a "Title")',
            "",
            "3. third",
            "4. fourth",
            "",
            "> quoted [1]",
            ">",
            "> > deeper",
            "",
            "| Col | Right |",
            "|:----|------:|",
            "| a \\| b | 2 |",
            "",
            "```python",
            "print('[x](ftp://evil.example/code)')",
            "```",
            "",
            "    indented code",
            "",
            "***",
            "",
            "1986\\. was a year; \\# not a heading; \\[not a link\\](x).",
        ]
    )
    checked, _ = sanitize_links(report, FETCHED)
    expected = report.replace("[bad](ftp://evil.example/x)", "bad [link removed: not a fetched source]")
    viewer = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    assert viewer.render(checked) == viewer.render(expected), checked
    assert "[1]" in checked and "[2]" in checked


def test_a_report_without_foreign_links_is_returned_as_written() -> None:
    report = f"# Title\n\nA claim [1] with [a source]({OK}) and snake_case.\n\n- a\n- b\n"
    assert sanitize_links(report, FETCHED) == (report, [])


def test_the_whole_report_file_keeps_the_rule_the_question_and_source_titles_too() -> None:
    """The header repeats the question and the source list the fetched pages' titles: text from outside."""
    text = "Durable checkpoints record the state of a run after every stage, so a resumed run continues."
    sources = [
        {
            "n": 1,
            "id": "S1",
            "url": OK,
            "title": "Checkpoints https://evil.example/title and www.evil.com",
            "text": text,
            "domain": "ok.example",
            "fetched_at": "2024-05-01T00:00:00Z",
        }
    ]
    state = {
        "run_id": "r1",
        "question": "Why do [checkpoints](ftp://evil.example/q) matter?",
        "engine": "extractive",
        "options": {},
        "plan": {},
        "artifact_dir": "r1",
        "sources": sources,
    }
    bundle = build_report_bundle(state, f"## Summary\n\n- {text[:-1]} [1].")
    markdown = bundle.files["deepresearch-report.md"]
    assert foreign_targets(markdown) == {}, markdown
    assert markdown.endswith("\n") and "[1]" in markdown and "<https://ok.example/a>" in markdown
    removed = bundle.citation_check["unknown_urls_removed"]
    assert {"ftp://evil.example/q", "https://evil.example/title", "http://www.evil.com"} <= set(removed)


# --- random combinations: a seeded generator, a bounded number of documents -------------------------------
_PIECES = [
    *VECTORS.values(),
    f"[ok]({OK})",
    f"<{OK}>",
    OK,
    "[1]",
    "[12]",
    "[note]",
    "[x]",
    "[r]:",
    "(",
    ")",
    "((a))",
    "[",
    "]",
    "](",
    "<",
    ">",
    "!",
    ":",
    "//",
    "@",
    ".",
    "&#x66;",
    "&#58;",
    "&amp;",
    "\\",
    "https:evil.example/x",
    "javascript:alert(1)",
    "http\\://evil.com/escaped",
    "`",
    "*",
    "_",
    "~~",
    "|",
    "ftp",
    "mailto",
    "https",
    "http",
    "javascript",
    "evil.com",
    "evil.example",
    "www",
    "boss",
    "x",
    "- ",
    "1. ",
    "> ",
    "# ",
    "    ",
    '"t"',
    "'t'",
    "<a href=",
    "<img src=",
    "</a>",
]
_SEPARATORS = ["", "", "", " ", " ", "\n", "\n\n", "\n  ", "\n> ", "\n- "]
DOCUMENTS = 400
TIME_LIMIT = 60.0


def _document(rng: random.Random) -> str:
    parts = [rng.choice(_PIECES) + rng.choice(_SEPARATORS) for _ in range(rng.randint(2, 18))]
    return "".join(parts)


def test_random_combinations_never_leave_a_foreign_link() -> None:
    rng = random.Random(20240531)
    started = time.monotonic()
    leaks: list[tuple[str, str, dict[str, list[str]]]] = []
    for _ in range(DOCUMENTS):
        if time.monotonic() - started > TIME_LIMIT:
            break
        document = _document(rng)
        checked = sanitised(document)
        if bad := foreign_targets(checked):
            leaks.append((document, checked, bad))
    assert leaks == [], leaks[:3]


def test_a_placeholder_in_angle_brackets_is_the_pages_text_not_a_link() -> None:
    # Flask's "a converter can be specified by using <converter:name>" was quoted as "... by using [link
    # removed: not a fetched source]": engine text inside a quote
    quoted = "A different converter can be specified by using <converter:name> [5]."
    checked, removed = sanitize_links(quoted, set())
    assert removed == [] and REMOVED not in checked, checked
    assert "by using `<converter:name>` [5]." in checked, checked  # as written, no escapes
    assert "<converter:name>" in render_fragment(checked, set()).replace("&lt;", "<").replace("&gt;", ">")
    assert "href" not in render_fragment(checked, set())
    # ... with the code it is glued to: CMake's "$<BOOL:...>" was written "$`<BOOL:...>`" (session 45)
    checked, _ = sanitize_links("Wrap it with the $<BOOL:...> or *$<OR:a,b>* expression [1].", set())
    assert "with the `$<BOOL:...>` or *`$<OR:a,b>`* expression [1]." in checked, checked
    # an address in angle brackets is still a link to what was not fetched: removed
    for address in ("<https://evil.example/x>", "<mailto:boss@evil.example>", "<boss@evil.example>"):
        checked, removed = sanitize_links(f"See {address} now.", set())
        assert REMOVED in checked and len(removed) == 1, (address, checked)
    checked, removed = sanitize_links("Run <javascript:alert(1)> now.", set())
    assert REMOVED in checked and "alert" not in checked
