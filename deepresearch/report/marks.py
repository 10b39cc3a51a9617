"""The marks a report's Markdown holds that the report itself reads: its code spans (the sources' code, quoted
as is) and its citation markers ("[n]" outside a code span). One place for both, read by the citation check
and the HTML (render.py) and by the link rule's rebuild (links.py), which must keep a marker a marker and a
page's escaped "\\[9\\]" text."""

from __future__ import annotations

import re
from collections.abc import Callable

from deepresearch.extractive.reading.text import CODE_SPAN

__all__ = [
    "CITATION",
    "CITE_CLOSE",
    "CITE_OPEN",
    "citation_markers",
    "code_spans",
    "held_citations",
    "in_code",
    "released_citations",
]

CITATION = re.compile(r"\[(\d{1,3})\]")
CITE_OPEN, CITE_CLOSE = "\ue000", "\ue001"
"""A citation marker held through a parse (private-use characters: no page's text holds them, no Markdown
reads them): "[n]" alone is a citation only where the Markdown wrote one, and reads so after the parse."""
_HELD = re.compile(rf"{CITE_OPEN}(\d{{1,3}}){CITE_CLOSE}")


def code_spans(text: str) -> list[tuple[int, int]]:
    """The text's code spans (the source's code, quoted as is: "split('.')[0]" holds no citation): fences
    around code padded on both sides or on neither, as the reader (code_span) writes them. A backtick
    that opens no such span is the page's own character - a TeX-style quote ("names `ksh' or `sh'", the zsh
    FAQ), which as a fence would show "ksh' or " as code and the quote altered."""
    spans: list[tuple[int, int]] = []
    start = 0
    while (found := CODE_SPAN.search(text, start)) is not None:
        fence = len(found.group(1))
        code = found.group()[fence:-fence]
        if code.strip() and code[0].isspace() == code[-1].isspace():
            spans.append(found.span())
            start = found.end()
        else:
            start = found.start() + fence  # its closing backtick may open the next span
    return spans


def in_code(text: str) -> Callable[[int], bool]:
    """Whether a position of the text is inside one of its code spans (code_spans)."""
    spans = code_spans(text)
    return lambda i: any(a <= i < b for a, b in spans)


def citation_markers(text: str) -> list[re.Match[str]]:
    """The citation markers of a text: every [n] outside its code spans."""
    inside = in_code(text)
    return [m for m in CITATION.finditer(text) if not inside(m.start())]


def held_citations(markdown: str) -> str:
    """The Markdown with its citation markers held (CITE_OPEN n CITE_CLOSE): a bracketed number a parse
    gives back as text ("filename\\[9\\]" is "filename[9]" to markdown-it) is then no citation."""
    for m in reversed(citation_markers(markdown)):
        markdown = f"{markdown[: m.start()]}{CITE_OPEN}{m.group(1)}{CITE_CLOSE}{markdown[m.end() :]}"
    return markdown


def released_citations(text: str) -> str:
    """Held markers written as markers again."""
    return _HELD.sub(r"[\1]", text)
