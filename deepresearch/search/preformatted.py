"""Prose that a page sets in ``<pre>``: a manual page rendered by nroff (Postfix's smtpd.8.html: one block,
headings in capitals at the margin, paragraphs hard-wrapped and hyphenated at the line ends), or a whole
manual kept as plain text (HAProxy's configuration.html and intro.html: paragraphs and "- " list items
wrapped at 80 columns). A code sample is one line of the page's text (search/documents.py); such a block
flattened the same way read as one paragraph - "recipi- ent", "CONFIGURATION PARAMETERS Changes to
main.cf ...", a list of claims under one citation. This gives it back its headings, paragraphs and list
items, and leaves every other block (a sample, a configuration file, a session) to the caller."""

from __future__ import annotations

import re
from collections.abc import Iterator

from deepresearch.extractive.reading.text import DEFINITION_LEVEL, LINE_BREAK

__all__ = ["prose_text", "sample_text"]

PROSE_SHARE = 0.5
"""A block is prose when at least this share of its non-blank lines are lines of prose..."""
CODE_SHARE = 0.1
"""... and at most this share look like code (a comment, an assignment, a prompt, braces)."""
MANUAL_CODE_SHARE = 0.25
"""... or a quarter for a manual page, whose examples are part of it."""
MIN_PROSE_LINES = 4
DOCUMENT_LINES = 150
DOCUMENT_PROSE = 0.35
"""A block of at least DOCUMENT_LINES lines, DOCUMENT_PROSE of them prose, is a whole manual set in <pre>
whatever its share of code: Vim's help files (makehtml.awk puts each in one <pre>) hold examples, key
tables and their |link|, {arg} and <Key> notation on a third of their lines, and were read as one sample -
options.html as one line of 391,745 characters. Such a block is read paragraph by paragraph, a sample
among them one line of its own. (The longest <pre> of the bench corpora with that much prose has 120
lines: Python's license.) A block with MIN_ANCHORS lines of anchors and ANCHORED_PROSE of prose, however
short, is read so too: its anchors and rules are its structure (Vim's shorter help files, and its release
notes, whose patch notes are a third prose)."""
MIN_ANCHORS = 3
WRAPPED = 50  # characters of a line that goes on at another indent: wrapped at the page's width
ANCHORED_PROSE = 0.3

_HEADING = re.compile(r"^[A-Z][A-Z0-9 ,()/&'.-]{2,60}$")  # "SECURITY", "CONFIGURATION PARAMETERS"
_ITEM = re.compile(r"^(\s*)[-*o+] +(?=\S)")  # "  - a TCP proxy : it can accept ..."
# a comment, a prompt, an operator, a call (not a manual page's "cleanup(8)"), a line ending on ";" or "{"
_CODE = re.compile(
    r"^\s*(?:#|//|/\*|--|;|\$ |% |>|<|\w+>|=>)|[{}=<>|\\\[\]→]|--|->|::|\w\((?!\d\w*\))"
    r"|[;({]\s*$|^\s*\S+\s*:\s*$"
)
# a name (or one mark: mailq's "*"), then its description from two spaces on, the description's next lines
# indented as deep ("tcp       The instance will work ..." over "          will be established ..."): a term
# on the line its description starts on; "- name  Text" is a list item, no term "- name"
_INLINE_TERM = re.compile(
    r"^\s*(?P<term>[-.]*\w[-\w.]*(?: [-\w.<>=]+)?|[^\s\w-])\s{2,}(?P<text>[A-Z]\S*\s.*\S)$"
)
_NUMBERED = re.compile(r"\d{1,2}[.)](?=\s|$)")  # a numbered item's number
_MAN_HEADER = re.compile(r"^\s*(\S+\(\d\w*\))\s+.*\1\s*$")
# a document's section rule ("=====..."), its anchors ("*'expandtab'* *'et'*": Vim's tags), on a line of
# their own, after a section's title ("2. Abbreviations    *abbreviations*") or before it ("*07.1*  Edit")
_RULE = re.compile(r"^\s*([=*_~-])\1{9,}\s*$")
_ANCHORS = re.compile(r"^\s*(?P<first>\*[^*\s]+\*)(?:\s+\*[^*\s]+\*)*\s*$")
_ANCHORED = re.compile(r"\s{2,}(?:\*[^*\s]+\*\s*)+$")
_ANCHOR_FIRST = re.compile(r"^\*(?P<anchor>[^*\s]+)\*\s+(?P<title>\S.*)$")
_PLAIN = re.compile(r"[(\"'“]?[A-Za-z]?[a-z'’-]+[,.;:!?)\"'”]*")  # "wrapped", "Postfix", "(see", "it's"


def _prose_line(line: str) -> bool:
    """Words, mostly lower-case ones, and little else: not an identifier, a column, a call."""
    words = line.split()
    plain = [w for w in words if _PLAIN.fullmatch(w)]
    letters = sum(ch.isalpha() or ch.isspace() for ch in line.strip())
    return len(words) >= 6 and letters >= 0.85 * len(line.strip()) and len(plain) >= 0.7 * len(words)


def prose_text(block: str) -> str | None:
    """The block as Markdown-like text - "## HEADING" lines, paragraphs, "- item" lines, separated by blank
    lines - or None when it is no prose (most lines short or code: a sample stays the caller's)."""
    lines = block.expandtabs().split("\n")
    filled = [line for line in lines if line.strip()]
    if not filled:
        return None
    prose = sum(_prose_line(line) for line in filled)
    code = sum(bool(_CODE.search(line)) for line in filled)
    # a manual page says so in its first line ("SMTPD(8)   SMTPD(8)"); its lists of parameters are short lines
    manual = bool(_MAN_HEADER.match(filled[0])) and any(line.strip() == "NAME" for line in filled[:4])
    ordinary = prose >= MIN_PROSE_LINES and (prose >= PROSE_SHARE * len(filled) or manual)
    ordinary = ordinary and code <= (MANUAL_CODE_SHARE if manual else CODE_SHARE) * len(filled)
    anchored = sum(bool(_anchor(line) or _ANCHORED.search(line)) for line in filled) >= MIN_ANCHORS
    document = len(filled) >= DOCUMENT_LINES and prose >= DOCUMENT_PROSE * len(filled) and not ordinary
    document = document or (anchored and prose >= ANCHORED_PROSE * len(filled))
    if not ordinary and not document:
        return None
    if document:
        lines = list(_document_lines(lines, anchored))
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append(_joined(paragraph, manual))
            paragraph.clear()

    titled, row = False, False
    section, entry, indented = "", False, False  # an anchored document's section, and the entry it is in
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if document and line.startswith("#"):  # a document's heading (_document_lines escapes the page's "#")
            flush()
            out.append(line)
            entry, indented = line.startswith("#" * DEFINITION_LEVEL), False
            section = section if entry else line
            continue
        if entry and line.strip():
            # an entry ends where prose at the margin follows its indented description (todo.html's
            # "*option_save()*" had labelled the 1,131 paragraphs after it): its section's title again
            if not paragraph and indented and _indent(line) == 0 and _prose_line(line) and section:
                out.append(section)
                entry = False
            indented = indented or _indent(line) > 0
        if document and paragraph and line.strip() and _indent(line) != _indent(paragraph[-1]):
            # a document's header line, its example, its table row: each indented otherwise than its prose;
            # not a paragraph's hanging indent ("-f <cfgfile> : adds ..." over "    loaded. If ...") nor a
            # sentence going on (Vim's user manual indents a paragraph's first line)
            hanging = len(paragraph) == 1 and _indent(line) > _indent(paragraph[0]) and _prose_line(line)
            hanging = hanging and not paragraph[0].rstrip().endswith(":") and len(_cells(paragraph[0])) == 1
            ends = paragraph[-1].rstrip().endswith((".", ":", ";", "!", "?"))
            prose = _prose_line(line) or not _CODE.search(line)
            # ... a line wrapped where the page's width ends it, not an option's short scope line
            wrapped = len(paragraph[-1].strip()) >= WRAPPED
            going_on = _prose_line(paragraph[-1]) and not ends and prose and wrapped
            if not (hanging or going_on):
                flush()
        header = _MAN_HEADER.match(line)
        inline = _INLINE_TERM.match(line) if " | " not in line else None  # a table's row names no term
        if inline and _NUMBERED.fullmatch(inline["term"]):
            inline = None  # ... nor does a numbered item ("1.  Use a mix of <Tab> and space characters.")
        if header and manual and not titled:  # "SMTPD(8)  SMTPD(8)": the page's heading, over its sections
            flush()
            out.append(f"# {header.group(1)}")
            titled = True
        elif not line.strip() or header:
            flush()
        elif inline and following.strip() and _indent(following) == inline.start("text"):
            flush()  # "abort  Stop the Postfix mail system ...", HAProxy's "tcp       The instance ..."
            out.append(f"{inline['term']}:")
            paragraph.append(" " * inline.start("text") + inline["text"])
        elif not line[:1].isspace() and _HEADING.match(line.rstrip()):
            flush()  # in an anchored document, under its sections' titles ("SWAPPING TWO CHARACTERS")
            out.append(f"{'###' if document and anchored else '##'} {line.strip()}")
            section, entry = out[-1], False
        elif _term(line, following):
            flush()  # "symrefs" over its indented description: a definition's term, as documents.py has one
            out.append(f"{line.strip()}:")
        elif document and _row(line) and (row or _row(following)):
            flush()  # a table's row, its columns apart ("COMMANDS   MODES" over ":nmap ...   Normal")
            out.append(" | ".join(_cells(line)))
            row = True
            continue
        else:
            if _ITEM.match(line) or (document and _NUMBERED.match(line.strip() + " ")):
                flush()  # a list item starts a paragraph of its own
            paragraph.append(line)
        row = False
    flush()
    return "\n\n".join(out)


def sample_text(block: str) -> str:
    """A sample (a <pre> block that is no prose) as one line of the corpus text, as the search and the
    sentence rules read it, its lines apart by LINE_BREAK: joined by spaces, a report quoted "$ cd .. $ git
    clone super cloned $ cd cloned" and a .gitignore as one line."""
    return LINE_BREAK.join(filter(None, (" ".join(line.split()) for line in block.split("\n"))))


def _document_lines(lines: list[str], anchored: bool) -> Iterator[str]:
    """A document's lines with its rules and anchors read: a rule ends a paragraph; in an ``anchored`` one
    (Vim's help) the line after a rule, and the first, is a section's title, a line of anchors heads the
    entry it stands over, by its first ("'expandtab'"), and an anchor before a title or anchors after one
    are no text of it. A line that would read as a Markdown heading is escaped: only these are headings."""
    titling = anchored  # the page's first line is its title
    for line in lines:
        if _RULE.match(line):
            titling = anchored and line.strip()[0] == "="  # a line of "-" closes a table
            yield ""
            continue
        if not line.strip():
            yield line
            continue
        stripped = _ANCHORED.sub("", line) if anchored else line
        title = None
        if anchored and (first := _ANCHOR_FIRST.match(stripped.strip())):
            stripped, title = " " * _indent(stripped) + first["title"], f"{first['anchor']} {first['title']}"
        if titling and stripped.strip():
            titling = False
            yield from ("", f"## {' '.join((title or stripped).split())}", "")
            continue
        # the entry's heading, then the line's text: "*E822*  It cannot ..."
        if anchored and (anchor := _anchor(line)):
            yield from ("", f"{'#' * DEFINITION_LEVEL} {anchor}", "")
        if stripped.strip():  # a line that would read as a Markdown heading is no heading
            yield stripped.replace("#", "\\#", 1) if stripped.lstrip().startswith("#") else stripped


def _anchor(line: str) -> str:
    """The first anchor of a line of anchors, or of the anchors before or after a line's text."""
    found = _ANCHORS.match(line) or _ANCHOR_FIRST.match(line.strip()) or _ANCHORED.search(line)
    first = re.search(r"\*([^*\s]+)\*", found.group()) if found else None
    return first.group(1) if first else ""


def _cells(line: str) -> list[str]:
    """A line's columns: its parts three spaces or more apart (a tab counts to its stop), less Vim's "~"
    that marks a column's header."""
    return [cell.removesuffix(" ~").strip() for cell in re.split(r" {3,}", line.strip()) if cell.strip("~ ")]


def _row(line: str) -> bool:
    """A table's row: two columns or more, not a numbered item ("1.  Use a mix of <Tab> and spaces")."""
    cells = _cells(line)
    return len(cells) > 1 and not _NUMBERED.fullmatch(cells[0])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _term(line: str, following: str) -> bool:
    """A short name alone on its line, its description indented deeper on the next ("symrefs" then "    In
    addition to the object pointed by it, ...")."""
    words = line.split()
    deeper = _indent(following) > _indent(line) and bool(following.strip())
    ending = line.rstrip()
    # ... "DISCARD optional text..." names its argument with an ellipsis, no full stop
    named = (not ending.endswith((".", ",", ":", ";")) or ending.endswith(("...", "…"))) and not _CODE.search(
        line
    )
    named = named and len(line.strip()) > 1  # nroff's bullet "o" alone on its line names nothing
    # ... over prose: "frontend foo" over "    bind :80" is a sample
    return 0 < len(words) <= 4 and deeper and _prose_line(following) and named and not _ITEM.match(line)


def _joined(lines: list[str], hyphenated: bool) -> str:
    """A hard-wrapped paragraph on one line: a word nroff hyphenated at the line's end joined again ("recipi-"
    and "ent", ``hyphenated``), a hyphen a writer wrapped after kept ("comma-" and "delimited"), an item's
    marker written as "- "."""
    text, previous = "", ""
    for raw in lines:
        line = " ".join(raw.split())
        if not text:
            item = _ITEM.match(raw)
            text = f"- {raw[item.end() :].strip()}" if item else line
        elif re.search(r"[a-z]-$", text) and line[:1].islower():
            text = text[:-1] + line if hyphenated else text + line  # "comma-" "delimited" keeps its hyphen
        elif not (_prose_line(raw) or _prose_line(previous)) and any(map(_CODE.search, (raw, previous))):
            text = f"{text}{LINE_BREAK}{line}"  # an example's lines apart (":set tabstop=3" over ":retab 8")
        else:
            text = f"{text} {line}"
        previous = raw
    return " ".join(text.split())
