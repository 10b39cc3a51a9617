"""Report honesty and rendering: citation checks, the sources list, sanitised self-contained HTML."""

from __future__ import annotations

import html
import re
import string
from dataclasses import dataclass, field
from typing import Any

import nh3
from markdown_it import MarkdownIt

from deepresearch.extractive.reading.text import (
    LINE_BREAK,
    code_span,
    content_tokens,
    split_sentences,
    tokenize,
)
from deepresearch.report.links import allowed_link, as_written, sanitize_links
from deepresearch.report.marks import (
    CITATION,
    CITE_CLOSE,
    CITE_OPEN,
    citation_markers,
    code_spans,
    held_citations,
    in_code,
)

__all__ = [
    "CITATION",
    "allowed_link",
    "asked_text",
    "check_citations",
    "cited_numbers",
    "code_spans",
    "markdown_text",
    "render_fragment",
    "render_html",
    "shown_samples",
    "sources_markdown",
    "stray_backticks",
]

SUPPORT_THRESHOLD = 0.35
"""Share of a sentence's content words that must appear in one passage of a cited source."""


@dataclass(slots=True)
class CitationCheck:
    checked: int = 0
    supported: int = 0
    removed: list[dict[str, Any]] = field(default_factory=list)
    unverified_sentences: int = 0
    unknown_urls_removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": f"lexical overlap >= {SUPPORT_THRESHOLD} with a passage of the cited source",
            "citations_checked": self.checked,
            "citations_supported": self.supported,
            "citations_removed": self.removed,
            "sentences_left_unverified": self.unverified_sentences,
            "unknown_urls_removed": self.unknown_urls_removed,
        }


def check_citations(
    markdown: str, passages_by_number: dict[int, list[str]], seen_urls: set[str], *, quoted: bool = False
) -> tuple[str, CitationCheck]:
    """Verify every [n] against its source's passages; drop unsupported ones and flag orphaned sentences.

    Then every link to a URL the run did not fetch (`seen_urls`) becomes text, in any Markdown spelling a
    viewer follows (report/links.py), and raw HTML is shown as text; ``quoted``: the body is quotes
    (sanitize_links).
    """
    result = CitationCheck()
    out_lines: list[str] = []
    for line in markdown.splitlines():
        if line.lstrip().startswith("#") or not citation_markers(line):
            out_lines.append(line)
            continue
        prefix_match = re.match(r"^(\s*(?:[-*+]|\d+\.)?\s*)", line)
        prefix = prefix_match.group(1) if prefix_match else ""
        body = line[len(prefix) :]
        new_sentences = []
        for sentence in split_sentences(body) or [body]:
            new_sentences.append(_check_sentence(sentence, passages_by_number, result))
        out_lines.append(prefix + " ".join(new_sentences))
    # last: what the checks above wrote is read as Markdown too
    shown = "\n".join(shown_samples(line) for line in out_lines)
    checked, result.unknown_urls_removed = sanitize_links(shown, seen_urls, quoted=quoted)
    return checked, result


def shown_samples(line: str) -> str:
    """A line of the report with its samples' lines apart, as their page shows them: a code span that holds
    a LINE_BREAK (extractive/reading/text.py) is a span per line ("`$ cd ..` `$ git clone super cloned`"); the
    mark anywhere else - a sample quoted as text, a model that copied it - is the space it stood for."""
    if LINE_BREAK not in line:
        return line
    out, last = [], 0
    for start, end in code_spans(line):
        span = line[start:end]
        if LINE_BREAK in span:
            fence = len(span) - len(span.lstrip("`"))
            code = span[fence:-fence]
            code = code[1:-1] if code[:1] == code[-1:] == " " and code.strip() else code
            span = " ".join(code_span(part) for part in code.split(LINE_BREAK) if part.strip())
        out += [line[last:start].replace(LINE_BREAK, " "), span]
        last = end
    return "".join([*out, line[last:].replace(LINE_BREAK, " ")])


def overlap(claim: str, passage: str) -> float:
    """Share of the claim's content words found in the passage (0..1): what supports a citation. A claim of
    function words only ("Because that is what it does.", quoted after the sentence it answers) is
    supported when the passage says it word for word."""
    claim_terms = set(content_tokens(claim))
    if not claim_terms:
        said, text = (" ".join(tokenize(t)) for t in (claim, passage))
        return 1.0 if said and f" {said} " in f" {text} " else 0.0
    return len(claim_terms & set(content_tokens(passage))) / len(claim_terms)


def asked_text(text: str) -> str:
    """The asker's words as the report writes them (its title, its sections, its open questions): a number
    in brackets they hold ("stops with "[1] + suspended (tty output)"", a shell's job) is theirs, not a
    citation of the report's first source - the check had moved it to the line's end, and counted it."""
    for m in reversed(citation_markers(text)):
        text = f"{text[: m.start()]}\\[{m.group(1)}\\]{text[m.end() :]}"
    return text


def stray_backticks(text: str) -> str:
    """The text with each backtick that opens no code span (code_spans) escaped: shown as written."""
    inside = in_code(text)
    return "".join("\\`" if char == "`" and not inside(i) else char for i, char in enumerate(text))


def markdown_text(quote: str) -> str:
    """A quote as Markdown that shows it as written, outside its code spans: a backslash before punctuation
    is an escape there (mutt's "^C, ^\\, ^Q" read "^C, ^, ^Q"), an asterisk is emphasis ("*.example.net"
    would lose its wildcard) and so is an underscore at a word's edge ("_PATH_" read "PATH"): each is
    escaped, as is a backtick that opens no code span (code_spans); and a bracketed number is not the
    report's citation (see _page_marks)."""
    inside = in_code(quote)
    quote = "".join(
        "\\\\" if char == "\\" and not inside(i) and quote[i + 1 : i + 2] in _PUNCTUATION else char
        for i, char in enumerate(quote)
    )
    quote = _page_marks(quote)
    inside = in_code(quote)
    quote = "".join(
        "\\" + char if not inside(i) and (char == "*" or (char == "_" and _edge(quote, i))) else char
        for i, char in enumerate(quote)
    )
    return stray_backticks(quote)


_PUNCTUATION = frozenset(string.punctuation)


def _edge(text: str, i: int) -> bool:
    """Whether an underscore can open or close emphasis: not between two letters or digits ("snake_case")."""
    return not (text[i - 1 : i].isalnum() and text[i + 1 : i + 2].isalnum())


# a page's footnote mark after a space, where a clause ends ("known as an RRSIG [5].", "inherently insecure
# [*],"); any other number in brackets is the text's own ("args[1]", "answer [1] for yes"), escaped
_FOOTNOTE = re.compile(r"[ \t]+\[(?:\d{1,3}|\*)\](?=[.,;:!?)]|$)|[ \t]+\[\*\]")
_INDEXED = re.compile(r"\[(\d{1,3})\]")


def _page_marks(quote: str) -> str:
    """A quote without the page's footnote marks, which would read as citations of the report's sources
    (the footnote they point to is not quoted), and any other number in brackets escaped ("args\\[1\\]")."""
    inside = in_code(quote)
    out, last = [], 0
    found = [m for m in [*_FOOTNOTE.finditer(quote), *_INDEXED.finditer(quote)] if not inside(m.start())]
    for m in sorted(found, key=lambda m: m.start()):
        if m.start() < last:
            continue  # the number of a footnote mark already left out
        out.append(quote[last : m.start()])
        out.append("" if m.re is _FOOTNOTE else f"\\[{m.group(1)}\\]")
        last = m.end()
    return "".join(out) + quote[last:]


def cited_numbers(text: str) -> set[int]:
    """The source numbers a report text cites ([n] outside code spans)."""
    return {int(m.group(1)) for m in citation_markers(text)}


def _withoutcitation_markers(text: str) -> str:
    """The text without its citation markers, each taken with the spaces before it ("claim [1]." ->
    "claim."): a space the text itself has before a mark stays ("the ? in the URL")."""
    out, last = [], 0
    for m in citation_markers(text):
        out.append(text[last : m.start()].rstrip(" \t") if m.start() > last else "")
        last = m.end()
    return "".join(out) + text[last:]


def _check_sentence(sentence: str, passages_by_number: dict[int, list[str]], result: CitationCheck) -> str:
    numbers = [int(m.group(1)) for m in citation_markers(sentence)]
    if not numbers:
        return sentence
    claim = _withoutcitation_markers(sentence).strip()
    kept: list[int] = []
    for number in dict.fromkeys(numbers):
        result.checked += 1
        passages = passages_by_number.get(number)
        if passages is None:
            result.removed.append({"citation": number, "sentence": claim, "reason": "no such source"})
            continue
        score = max((overlap(claim, passage) for passage in passages), default=0.0)
        if score >= SUPPORT_THRESHOLD:
            result.supported += 1
            kept.append(number)
        else:
            result.removed.append(
                {"citation": number, "sentence": claim, "reason": "not supported", "overlap": round(score, 2)}
            )
    text = _withoutcitation_markers(sentence).strip()
    markers = "".join(f"[{n}]" for n in kept)
    if not kept:
        result.unverified_sentences += 1
        markers = " *(unverified)*"
    # citations go before the closing punctuation: "... claim [1]." (not the full stop of "etc.")
    match = re.match(r"^(.*?)((?<!\betc)[.!?]?)$", text, re.DOTALL)
    assert match is not None
    core, end = match.groups()
    return f"{core.rstrip()} {markers.strip()}{end}" if kept else f"{core.rstrip()}{end}{markers}"


def sources_markdown(sources: list[dict[str, Any]], cited: set[int] | None = None) -> str:
    """The numbered source list; given the numbers the report cites, split into "Cited" and "Also read"
    (fetched and screened, but no sentence of the report rests on them)."""

    def line(source: dict[str, Any]) -> str:
        title = source.get("title") or source["url"]
        where = source["url"]
        kind = "local document" if where.startswith("corpus://") else source.get("domain", "")
        return f"[{source['n']}] {_md_escape(title)} — <{where}> ({kind})"

    if cited is None:
        return "\n".join(["## Sources", "", *(f"- {line(s)}" for s in sources)]) + "\n"
    lines = ["## Sources", ""]
    for name, group in (
        ("Cited", [s for s in sources if s["n"] in cited]),
        ("Also read", [s for s in sources if s["n"] not in cited]),
    ):
        if group:
            lines += [f"### {name}", "", *(f"- {line(s)}" for s in group), ""]
    return "\n".join(lines).rstrip() + "\n"


def _md_escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


_MD = MarkdownIt("js-default").enable("table")

_HTML_STYLE = """
:root { color-scheme: light dark; --fg: #1d232b; --bg: #fbfbf9; --muted: #5b6470; --accent: #1f5fbf; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --bg: #15181c; --muted: #9aa3ad; --accent: #7fb0ff; }
}
body { font: 17px/1.6 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: var(--bg);
       max-width: 46rem; margin: 2.5rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.7rem; line-height: 1.25; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #8884; }
a { color: var(--accent); } blockquote { color: var(--muted); border-left: 3px solid #8886; margin-left: 0;
padding-left: 1rem; } code { font-size: .92em; } li { margin: .25rem 0; }
.local-doc { border-bottom: 1px dotted var(--muted); }
@media print { body { max-width: none; margin: 0; background: #fff; color: #000; } a { color: inherit; } }
"""


def render_fragment(markdown: str, fetched: set[str]) -> str:
    """The one rendering rule for Markdown the workbench shows as HTML (the report, a passage, a fetched
    text): markdown-it without raw HTML, then nh3's allow-list; a link survives only if it passes the same
    rule as in the Markdown (allowed_link)."""

    fetched = as_written(fetched)

    def links(tag: str, attribute: str, value: str) -> str | None:
        if attribute == "href" and not allowed_link(value, fetched):
            return None
        return value

    return nh3.clean(
        _MD.render(samples_as_markdown(markdown)),
        tags=_TAGS,
        attributes={"a": {"href", "title", "id"}, "li": {"id"}, "sup": {"id"}},
        url_schemes={"http", "https", "corpus"},
        link_rel="noopener noreferrer nofollow",
        attribute_filter=links,
    )


def samples_as_markdown(markdown: str) -> str:
    """Text with its samples' lines apart (LINE_BREAK), as their page shows them: a line of corpus text that
    holds one (a passage, a fetched text) is a code block of its lines, without the escape before a comment
    that opens it (search/documents.py); a line with code spans (a report's) a span per line. What the
    workbench renders, and what the report's JSON files hold (compose.readable)."""
    out: list[str] = []
    for line in markdown.split("\n"):
        spans = code_spans(line)
        breaks = [i for i, char in enumerate(line) if char == LINE_BREAK]
        # a report's line: its breaks inside its code spans (a sample's own backticks make spans of a page's)
        if all(any(a <= i < b for a, b in spans) for i in breaks):
            out.append(shown_samples(line))
            continue
        code = line.strip()
        code = code[1:] if code.startswith("\\#") else code
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
        out += [fence, *code.split(LINE_BREAK), fence]
    return "\n".join(out)


_TAGS = {
    *("h1", "h2", "h3", "h4", "p", "ul", "ol", "li", "a", "em", "strong", "code", "pre", "blockquote"),
    *("table", "thead", "tbody", "tr", "th", "td", "hr", "br", "sup"),
}
# a local document's link: nothing a saved page can open (the server reads it), so it is named, not linked
_CORPUS_LINK = re.compile(r'<a href="(corpus://[^"]*)"[^>]*>(.*?)</a>', re.S)


def render_html(markdown: str, title: str, fetched: set[str]) -> str:
    """Self-contained, sanitised HTML (render_fragment), no scripts, inline CSS. Only the Markdown's citation
    markers link to the sources: a number in brackets the Markdown escapes ("args\\[1\\]", a page's
    "filename\\[9\\]") is text, though the HTML shows it as "[1]" too (it had linked to a source 9 that
    did not exist)."""
    body = render_fragment(held_citations(markdown), fetched)
    body = _CORPUS_LINK.sub(
        lambda m: (
            f'<span class="local-doc" title="local document on the research server: {m.group(1)}">'
            f"{m.group(2)}</span>"
        ),
        body,
    )
    # the citations become links to the numbered source list (not inside a link: text, as written)
    body = _CITE_LINK.sub(r'<a href="#source-\1" class="cite">[\1]</a>', body)
    body = body.replace(CITE_OPEN, "[").replace(CITE_CLOSE, "]")
    body = _anchor_sources(body)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title><style>{_HTML_STYLE}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


_CITE_LINK = re.compile(rf"{CITE_OPEN}(\d{{1,3}}){CITE_CLOSE}(?![^<]*</a>)")
_SOURCE_ITEM = re.compile(r"<li>(\s*(?:<p>)?\s*<a href=\"#source-(\d+)\" class=\"cite\">)")


def _anchor_sources(body: str) -> str:
    """Give each item of the list under "Sources" the id its citations link to (#source-n, n the number the
    item starts with)."""
    head, sep, tail = body.rpartition("<h2>Sources</h2>")
    if not sep:
        return body
    return head + sep + _SOURCE_ITEM.sub(lambda m: f'<li id="source-{m.group(2)}">{m.group(1)}', tail)
