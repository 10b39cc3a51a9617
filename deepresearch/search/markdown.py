"""A Markdown file's paragraphs on one line each, as a reader sees them.

Markdown files are hard-wrapped at ~80 columns, and a line break inside a paragraph is a space: "... with
a single conditional\\nUPDATE that succeeds ..." is one sentence. The sentence splitter takes a line break
for the end of a sentence unless the next line starts in lower case, so a wrapped line that starts with a
capital or a code name cut the sentence in two. Only the corpus reader of Markdown files knows that its
line breaks are soft: web pages and HTML put their title and first paragraph on lines of their own,
separated by a single line break, and must stay as they are.

What keeps its lines: fenced and indented code, headings (and setext underlines), tables, block quotes,
HTML blocks, thematic breaks and hard line breaks (two trailing spaces or a backslash). A list item's wrapped
lines join the item; a new item starts its own line.
"""

from __future__ import annotations

import re

__all__ = ["unwrap"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_OWN_LINE = re.compile(
    r"^ {0,3}(?:>|<|\|)"  # block quote, HTML block, table row
    r"|^ {0,3}([-*_])(?:\s*\1){2,}\s*$"  # thematic break
)
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)\s*$")  # a setext heading's underline
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-*:?\s*)+\|?\s*$")
_HARD_BREAK = re.compile(r"(?: {2,}|\\)$")


def unwrap(text: str) -> str:
    """The text with each paragraph's and list item's soft line breaks made spaces."""
    out: list[str] = []
    fence = ""  # the open fence's marker, while inside fenced code
    table = False  # inside a table: after its delimiter row, until a blank line
    joinable = False  # whether the last line written is prose that a wrapped line continues
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if fence:
            out.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence, joinable = "", False
            continue
        opening = _FENCE.match(line)
        if opening:
            out.append(line)
            fence, joinable = opening.group(1), False
            continue
        if not line.strip():
            out.append(line)
            joinable = table = False
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        table = table or bool(_TABLE_DELIMITER.match(line))
        if table or _own_line(line, following, out[-1] if out else ""):
            out.append(line)
            joinable = False
            continue
        if joinable and not _LIST_ITEM.match(line):
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line)
        joinable = not _HARD_BREAK.search(line)
    return "\n".join(out)


def _own_line(line: str, following: str, previous: str) -> bool:
    """A line that is a block of its own, or the heading above a setext underline, or a table's row."""
    if _HEADING.match(line) or _OWN_LINE.match(line) or _SETEXT.match(line):
        return True
    if "|" in line and _TABLE_DELIMITER.match(following):
        return True  # a table's header row
    if _SETEXT.match(following):
        return True  # "Title\n=====": the title is a heading
    # indented code: four spaces after a blank line (a list item's own indented lines are not code)
    return line.startswith(("    ", "\t")) and not previous.strip()
