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

A reStructuredText file (rst_text) is read the same way: its titles as Markdown heading lines, its paragraphs
on one line each.
"""

from __future__ import annotations

import re

from deepresearch.extractive.reading.text import CODE_SPAN, DEFINITION_LEVEL

__all__ = ["rst_text", "unescaped", "unwrap"]

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
            out.append(unescaped(line) if _HEADING.match(line) else line)
            joinable = False
            continue
        if joinable and not _LIST_ITEM.match(line):
            out[-1] = f"{out[-1].rstrip()} {unescaped(line.strip())}"
        else:
            out.append(unescaped(line))
        joinable = not _HARD_BREAK.search(line)
    return "\n".join(out)


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def unescaped(line: str) -> str:
    """A line of Markdown as its reader sees it: "snake\\_case" is "snake_case", outside the line's code spans
    (the report escapes what Markdown would read as markup: report/render.py markdown_text)."""
    out, last = [], 0
    for code in CODE_SPAN.finditer(line):
        out += [_ESCAPE.sub(r"\1", line[last : code.start()]), code.group(0)]
        last = code.end()
    return "".join([*out, _ESCAPE.sub(r"\1", line[last:])])


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


_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+_:.])\1{2,}\s*$")
_RST_DIRECTIVE = re.compile(r"^\.\.\s+(?:py:)?([\w-]+)::\s*(.*)$")
_RST_API = frozenset(
    {
        "function",
        "method",
        "class",
        "exception",
        "data",
        "attribute",
        "decorator",
        "module",
        "coroutinefunction",
    }
)
_RST_CODE = frozenset(
    {"code-block", "code", "sourcecode", "literalinclude", "doctest", "testcode", "productionlist"}
)
_RST_ROLE = re.compile(r":[\w:+-]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_RST_LINK = re.compile(r"`([^`<]+?)(?:\s*<[^>]*>)?`__?")
_RST_EMPHASIS = re.compile(r"\*{1,2}([^*\s][^*]*?)\*{1,2}")
_RST_LITERAL = re.compile(r"``([^`]+)``")


def rst_text(text: str) -> str:
    """reStructuredText as plain text with Markdown heading lines: underlined (and overlined) titles get a
    level by the order their adornment first appears; API directives (``.. function:: sig``) become level-6
    headings; other directive lines and comments are dropped; inline roles keep their text."""
    lines = text.splitlines()
    levels: dict[str, int] = {}
    out: list[str] = []
    literal = False  # inside a literal (code) block: its indented lines are left out
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if literal and (not line.strip() or line.startswith((" ", "\t"))):
            i += 1
            continue
        if literal:
            out.append("")  # the block ended its paragraph
        literal = False
        over = _RST_ADORNMENT.match(line)
        if over and i + 2 < len(lines) and _RST_ADORNMENT.match(lines[i + 2]) and lines[i + 1].strip():
            style = "o" + line.strip()[0]
            level = levels.setdefault(style, min(len(levels) + 1, 5))
            out += ["", f"{'#' * level} {_rst_inline(lines[i + 1].strip())}", ""]
            i += 3
            continue
        if (
            line.strip()
            and not line.startswith(" ")
            and _RST_ADORNMENT.match(nxt)
            and len(nxt.strip()) >= len(line.strip())
        ):
            level = levels.setdefault(nxt.strip()[0], min(len(levels) + 1, 5))
            out += ["", f"{'#' * level} {_rst_inline(line.strip())}", ""]
            i += 2
            continue
        directive = _RST_DIRECTIVE.match(line.strip())
        if directive and not line.startswith(" "):
            name, argument = directive.groups()
            literal = name in _RST_CODE
            if name in _RST_API and argument:
                out += ["", f"{'#' * DEFINITION_LEVEL} {argument.strip()}", ""]
            i += 1
            continue
        if line.startswith(".. ") or line.strip() == "..":
            i += 1
            continue
        literal = line.rstrip().endswith("::")  # "Example::" introduces a literal block (shown as "Example:")
        stripped = line.strip()[:-1] if literal else line.strip()
        out.append(_rst_inline(stripped) if stripped else "")
        i += 1
    # the source is wrapped at ~80 columns: a paragraph becomes one line, as in the HTML page
    blocks = "\n".join(out).split("\n\n")
    return "\n\n".join(" ".join(block.split()) for block in blocks if block.strip())


def _rst_inline(text: str) -> str:
    text = _RST_ROLE.sub(lambda m: m.group(1).strip(), text)
    text = _RST_LITERAL.sub(r"\1", text)
    text = _RST_EMPHASIS.sub(r"\1", text)
    return _RST_LINK.sub(r"\1", text).replace("\\ ", "")
