"""Links in a report's Markdown: only to sources the run fetched, however a viewer would read the text.

The report is parsed with markdown-it (raw HTML, tables and linkify on: the widest reading a viewer may
give it) and, where any link, image, reference definition or raw HTML falls outside the rule, rebuilt from
the parser's tokens: a link to a fetched source is written back, any other link keeps its text and loses
its target, raw HTML becomes text. The result is read again by every viewer configuration we know of
(CommonMark with linkify, with and without raw HTML, with tables); another pass runs until all of them see
only allowed links, and a last resort escapes every punctuation mark of the text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from deepresearch.report.marks import held_citations, released_citations

REMOVED = "[link removed: not a fetched source]"


def _viewer(preset: str, *, html: bool) -> MarkdownIt:
    """A reader with linkify that takes every destination for a link: markdown-it leaves `javascript:` and
    the like as text, another viewer may not — so here they are links, and the rule decides."""
    reader = MarkdownIt(preset, {"html": html, "linkify": True}).enable(["linkify", "strikethrough"])
    reader.validateLink = lambda url: True  # type: ignore[method-assign]
    return reader


# the widest reading (the rebuild's input) first, then the others a viewer may use
_READER = _viewer("js-default", html=True)
_VIEWERS = (_READER, _viewer("commonmark", html=True), _viewer("js-default", html=False))
_PASSES = 4
"""Rebuilds before the last resort; a rebuild's output needs a second one only when a removed link's text
joins its neighbours into a new bare URL."""
_ESCAPABLE = frozenset("\\!\"#$%&'()*+,-./:;<=>?@[]^_`{|}~")
_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
# a bracketed text that makes no link once every definition is gone: a note [sic] (a citation [n] is held:
# a bracketed number left is a page's, escaped)
_PLAIN_BRACKETS = re.compile(r"\[(?!\d{1,3}\])[^\[\]\n]*\](?![(:])")
_TEXTUAL = ("text", "text_special", "html_inline")
_KEEP, _BARE, _MARKER = 0, 1, 2
"""What becomes of a bare URL: delimited (a fetched source), escaped (a name the text mentions), removed."""
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|//")
_LOCATOR = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://|(?:mailto|javascript|vbscript|data|file|tel|sms|news|urn):|[^@\s]+@)",
    re.IGNORECASE,
)
"""What an autolink's text must start with to be taken for an address: a scheme with "//", one that names a
resource without it, or a mailbox ("user@example.com"). The rest ("converter:name" between angle brackets,
as API pages write a placeholder) is shown as the text the page wrote."""
_SIMPLE_DESTINATION = re.compile(r"[^\s<>()\\\x00-\x1f\x7f]+")
# what starts another block at the start of a paragraph's line: a heading, a quote, a list item, a
# setext underline
_BLOCK_START = re.compile(r"^(?:#{1,6}(?=\s|$)|>|[-+](?=\s|$)|\d{1,9}(?=[.)](?:\s|$))|=+\s*$|-+\s*$)")


def allowed_link(url: str, fetched: set[str]) -> bool:
    """The one link rule, for the Markdown and the HTML: an anchor in the report, or a URL the run fetched
    (any case of the scheme); nothing else — no other scheme, no URL only seen in search results."""
    url = url.strip().strip("<>")
    if url.startswith("#"):
        return True
    scheme, sep, rest = url.partition("://")
    return (
        bool(sep)
        and scheme.lower() in ("http", "https", "corpus")
        and f"{scheme.lower()}://{rest}" in fetched
    )


def as_written(fetched: Iterable[str]) -> set[str]:
    """The fetched URLs and their spelling in a parsed link (markdown-it percent-encodes a destination)."""
    urls = set(fetched)
    return urls | {_READER.normalizeLink(url) for url in urls}


def sanitize_links(markdown: str, fetched: set[str], *, quoted: bool = False) -> tuple[str, list[str]]:
    """The Markdown with every link outside `allowed_link` turned into text; and the targets removed.
    ``quoted``: its text is the fetched pages' own (the extractive engine quotes, it writes no address), so a
    bare address with a scheme is shown as the page wrote it, escaped so that no viewer links it, instead of
    the marker ("A redirect such as ftp://some-internal-server/private-file would then return data ..." is
    libcurl's point, and was quoted as "A redirect such as [link removed: not a fetched source] ...")."""
    allowed = as_written(fetched)
    removed: list[str] = []
    # held through a rebuild: a marker stays a marker, a page's escaped "filename\\[9\\]" text (markdown-it
    # gives back "filename[9]", which the rebuild wrote as a citation of a source 9 that did not exist)
    original, markdown = markdown, held_citations(markdown)
    for attempt in range(_PASSES + 2):
        if not any(_violates(viewer, markdown, allowed) for viewer in _VIEWERS):
            return original if attempt == 0 else released_citations(markdown), list(dict.fromkeys(removed))
        if attempt > _PASSES:
            break
        env: dict[str, object] = {}
        tree = SyntaxTreeNode(_READER.parse(markdown, env))
        removed += [str(ref["href"]) for ref in _references(env) if not allowed_link(ref["href"], allowed)]
        markdown = _Rebuild(allowed, removed, escape_all=attempt == _PASSES, quoted=quoted).document(tree)
    # not reached by any input we know of; should one get here, its text is shown, never followed
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", markdown)), default=0))
    return f"{fence}text\n{released_citations(markdown)}\n{fence}", list(dict.fromkeys(removed))


def _references(env: dict[str, object]) -> list[dict[str, str]]:
    references = env.get("references")
    return list(references.values()) if isinstance(references, dict) else []


def _violates(viewer: MarkdownIt, markdown: str, allowed: set[str]) -> bool:
    env: dict[str, object] = {}
    tokens = viewer.parse(markdown, env)
    if any(not allowed_link(ref["href"], allowed) for ref in _references(env)):
        return True  # even unused: the Markdown keeps no definition that points elsewhere
    pending = list(tokens)
    while pending:
        token = pending.pop()
        pending += token.children or []
        if token.type in ("html_block", "html_inline"):
            return True
        if token.type in ("link_open", "image"):
            target = token.attrs.get("href" if token.type == "link_open" else "src", "")
            if not allowed_link(str(target), allowed):
                return True
    return False


class _Rebuild:
    """Markdown from markdown-it's syntax tree, every text escaped so that it reads as the same text."""

    def __init__(self, allowed: set[str], removed: list[str], *, escape_all: bool, quoted: bool) -> None:
        self.allowed = allowed
        self.removed = removed
        self.escape_all = escape_all
        self.quoted = quoted  # sanitize_links

    def document(self, tree: SyntaxTreeNode) -> str:
        return "\n".join(self._blocks(tree.children, tight=False)).strip("\n")

    # --- blocks: each a list of lines ----------------------------------------------------------------
    def _blocks(self, nodes: list[SyntaxTreeNode], *, tight: bool) -> list[str]:
        lines: list[str] = []
        for index, node in enumerate(nodes):
            if index and not tight:
                lines.append("")
            lines += self._block(node)
        return lines

    def _block(self, node: SyntaxTreeNode) -> list[str]:
        kind = node.type
        if kind == "paragraph":
            return [_line_start(line) for line in self._inline(node.children[0]).split("\n")]
        if kind == "heading":
            return self._heading(node)
        if kind == "blockquote":
            return [f"> {line}" if line else ">" for line in self._blocks(node.children, tight=False)]
        if kind in ("bullet_list", "ordered_list"):
            return self._list(node)
        if kind in ("fence", "code_block"):
            return _fence(node)
        if kind == "hr":
            return [node.markup]
        if kind == "table":
            return self._table(node)
        if kind == "html_block":  # shown as the text it is
            return [_line_start(self._text(line.strip())) for line in node.content.rstrip("\n").split("\n")]
        return [_line_start(self._text(node.content))] if node.content else []

    def _heading(self, node: SyntaxTreeNode) -> list[str]:
        text = self._inline(node.children[0])
        if node.markup in ("=", "-"):  # setext: its text may span lines
            return [*(_line_start(line) for line in text.split("\n")), node.markup * 3]
        # a closing run of # after a space would be read as the heading's end, not its text
        text = re.sub(r"(^|\s)(#+)$", r"\1\\\2", text)
        return [f"{'#' * int(node.tag[1])} {text}".rstrip()]

    def _list(self, node: SyntaxTreeNode) -> list[str]:
        ordered = node.type == "ordered_list"
        start = int(node.attrs.get("start", 1)) if ordered else 1
        items = node.children
        tight = all(child.hidden for item in items for child in item.children if child.type == "paragraph")
        lines: list[str] = []
        for index, item in enumerate(items):
            marker = f"{start + index}{node.markup}" if ordered else node.markup
            if index and not tight:
                lines.append("")
            body = self._blocks(item.children, tight=tight)
            if not body:
                lines.append(marker)
                continue
            indent = " " * (len(marker) + 1)
            lines.append(f"{marker} {body[0]}")
            lines += [f"{indent}{line}" if line else "" for line in body[1:]]
        return lines

    def _table(self, node: SyntaxTreeNode) -> list[str]:
        rows: list[list[str]] = []
        aligns: list[str] = []
        for section in node.children:
            for row in section.children:
                rows.append([self._inline(cell.children[0]).replace("|", "\\|") for cell in row.children])
                if not aligns:
                    aligns = [str(cell.attrs.get("style", "")) for cell in row.children]
        delimiter = {"text-align:left": ":---", "text-align:right": "---:", "text-align:center": ":---:"}
        lines = [f"| {' | '.join(cells)} |" for cells in rows]
        lines.insert(1, f"| {' | '.join(delimiter.get(a, '---') for a in aligns)} |")
        return lines

    # --- inline: one string, softbreaks as newlines --------------------------------------------------
    def _inline(self, node: SyntaxTreeNode) -> str:
        pieces: list[str] = []
        glued = ""  # the code a placeholder's text ends on ("$" of "$<BOOL:...>"): one code span with it
        # neighbouring text and raw HTML read as one text once the HTML is shown as text
        groups = [(t, list(g)) for t, g in itertools.groupby(node.children, key=lambda c: c.type in _TEXTUAL)]
        for at, (textual, group) in enumerate(groups):
            if textual:
                raw = "".join(child.content for child in group)
                following = groups[at + 1][1][0] if at + 1 < len(groups) else None
                glued = _GLUED.search(raw).group() if following and self._placeholder(following) else ""
                # ... not right after a code span: two spans side by side would read as one ("`a``b`")
                glued = "" if glued == raw and pieces and pieces[-1].endswith("`") else glued
                pieces.append(self._text(raw[: len(raw) - len(glued)]))
            else:
                pieces += [_code_span(f"{glued}<{self._placeholder(group[0])}>")] if glued else []
                pieces += [self._span(child) for child in group[1 if glued else 0 :]]
        joined = ""
        for piece in filter(None, pieces):
            # a "]" next to "(" or ":" would start a link or a definition; a "!" next to a link an image
            if joined.endswith("]") and piece[0] in "(:":
                piece = "\\" + piece
            if joined.endswith("!") and not joined.endswith("\\!") and piece[0] == "[":
                joined = joined[:-1] + "\\!"
            joined += piece
        return joined

    def _span(self, node: SyntaxTreeNode) -> str:
        kind = node.type
        if kind in _TEXTUAL:
            return self._text(node.content)
        if kind == "softbreak":
            return "\n"
        if kind == "hardbreak":
            return "\\\n"
        if kind == "code_inline":
            return _code_span(node.content)
        if kind in ("em", "strong", "s"):
            return f"{node.markup}{self._inline(node)}{node.markup}"
        if kind == "link":
            return self._link(node)
        if kind == "image":
            return self._image(node)
        return self._text(node.content)

    def _placeholder(self, node: SyntaxTreeNode) -> str:
        """The text of an autolink that is a placeholder, not a link ("<converter:name>" in a quoted page),
        or ""."""
        if node.type != "link" or node.markup != "autolink":
            return ""
        shown = "".join(child.content for child in node.children)
        allowed = allowed_link(str(node.attrs.get("href", "")), self.allowed)
        return shown if not allowed and not _LOCATOR.match(shown) else ""

    def _link(self, node: SyntaxTreeNode) -> str:
        href = str(node.attrs.get("href", ""))
        if not allowed_link(href, self.allowed):
            shown = "".join(child.content for child in node.children)
            if self._placeholder(node):
                return _code_span(f"<{shown}>")  # code, never followed
            self.removed.append(href)
            if node.markup == "linkify":
                return self._bare(shown)
            if node.markup == "autolink":  # its text is the target itself
                return self._text(REMOVED)
            return self._inline(node) + self._text(f" {REMOVED}")
        text = "".join(child.content for child in node.children)
        if node.markup in ("autolink", "linkify") and text == href:
            return f"<{href}>"
        return f"[{self._inline(node)}]({_destination(href)}{_title(node)})"

    def _image(self, node: SyntaxTreeNode) -> str:
        src = str(node.attrs.get("src", ""))
        if not allowed_link(src, self.allowed):
            self.removed.append(src)
            return self._inline(node) + self._text(f" {REMOVED}")
        return f"![{self._inline(node)}]({_destination(src)}{_title(node)})"

    def _text(self, text: str) -> str:
        """`text` as Markdown that reads as the same text. A bare URL outside the rule becomes the marker
        (or, without a scheme, is escaped: _bare); one inside it is delimited, so no neighbour extends it."""
        if self.escape_all:
            return _escape_every_mark(text)
        out: list[str] = []
        last = 0
        for start, end, kind, href in self._bare_urls(text):
            out.append(_escape(text[last:start]))
            if kind == _KEEP:
                shown = text[start:end]
                out.append(f"<{href}>" if shown == href else f"[{_escape(shown)}]({_destination(href)})")
            else:
                out.append(
                    self._bare(text[start:end]) if kind == _MARKER else _escape_every_mark(text[start:end])
                )
            last = end
        out.append(_escape(text[last:]))
        # a "]" before "(" or ":" would make a marker's brackets a link or a definition
        return re.sub(r"\]([(:])", r"]\\\1", "".join(out))

    def _bare_urls(self, text: str) -> list[tuple[int, int, int, str]]:
        """Where a viewer's linkify could find a URL — in the whole text, and in each run between the
        characters escaping splits it at — as (start, end, what to do, the allowed target), merged."""
        found: list[tuple[int, int, int, str]] = []
        runs = [(offset, run) for offset, run in _runs(text) if len(run) < len(text)]
        for offset, run in [(0, text), *runs]:
            for match in _READER.linkify.match(run) or []:
                start, end, href = (
                    offset + match.index,
                    offset + match.last_index,
                    _READER.normalizeLink(match.url),
                )
                if allowed_link(href, self.allowed):
                    if run is text:
                        found.append((start, end, _KEEP, href))
                    continue
                self.removed.append(match.url)
                found.append((start, end, _MARKER if _SCHEME.match(match.text) else _BARE, ""))
        merged: list[tuple[int, int, int, str]] = []
        for start, end, kind, href in sorted(found):
            if merged and start < merged[-1][1]:
                first, last, before, _ = merged[-1]
                merged[-1] = (first, max(last, end), max(before, kind, _BARE), "")
            else:
                merged.append((start, end, kind, href))
        return merged

    def _bare(self, text: str) -> str:
        """A bare URL outside the rule: with a scheme, the marker; without one (www.x.com, x@y.com, y.com:
        a name the text mentions), its text, escaped so that no viewer links it."""
        return _escape(REMOVED) if _SCHEME.match(text) and not self.quoted else _escape_every_mark(text)


def _escaped(text: str) -> set[int]:
    """Where `_escape` writes a character as an escape or an entity (a token of its own for a viewer)."""
    kept = {i for m in _PLAIN_BRACKETS.finditer(text) for i in (m.start(), m.end() - 1)}
    marks = set()
    for index, char in enumerate(text):
        if char == "_":
            # snake_case: an underscore inside a word never emphasises
            inside = 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()
            if not inside:
                marks.add(index)
        elif (
            char in "\\`*~<"
            or (char in "[]" and index not in kept)
            or (char == "&" and _ENTITY.match(text, index))
        ):
            marks.add(index)
    return marks


def _escape(text: str) -> str:
    marks = _escaped(text)
    out: list[str] = []
    for index, char in enumerate(text):
        if index not in marks:
            out.append(char)
        elif char == "<":
            out.append("&lt;")
        elif char == "&":
            out.append("&amp;")
        else:
            out.append("\\" + char)
    return "".join(out)


def _runs(text: str) -> list[tuple[int, str]]:
    """The stretches of `text` between its escapes: what a viewer's linkify reads, one at a time."""
    bounds = [-1, *sorted(_escaped(text)), len(text)]
    return [
        (start + 1, text[start + 1 : end]) for start, end in itertools.pairwise(bounds) if end > start + 1
    ]


def _escape_every_mark(text: str) -> str:
    return "".join("&lt;" if c == "<" else f"\\{c}" if c in _ESCAPABLE else c for c in text)


def _line_start(line: str) -> str:
    """A paragraph's line as text, not as the start of another block."""
    match = _BLOCK_START.match(line)
    if not match:
        return line
    if match.group(0)[0].isdigit():  # "1986. was a year": escape the dot, not the number
        end = match.end()
        return f"{line[:end]}\\{line[end:]}"
    return f"\\{line}"


_GLUED = re.compile(r"[\w$@%#&*.:/=-]*$")  # "$" of "$<BOOL:...>", "CMAKE_" of "CMAKE_<LANG>_FLAGS"


def _code_span(content: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    padded = content.startswith("`") or content.endswith("`")
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        padded = True  # one space each side is stripped on reading: put it back
    return f"{fence} {content} {fence}" if padded else f"{fence}{content}{fence}"


def _fence(node: SyntaxTreeNode) -> list[str]:
    content = node.content
    if node.type == "fence":
        opening, closing = f"{node.markup}{node.info}", node.markup
    else:  # an indented block, written fenced: no indentation to get wrong inside a list
        longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
        opening = closing = "`" * max(3, longest + 1)
    return [opening, *content.removesuffix("\n").split("\n"), closing] if content else [opening, closing]


def _destination(url: str) -> str:
    if _SIMPLE_DESTINATION.fullmatch(url):
        return url
    return "<" + re.sub(r"[<>\n\\]", lambda m: f"%{ord(m.group(0)):02X}", url) + ">"


def _title(node: SyntaxTreeNode) -> str:
    title = node.attrs.get("title")
    if not title:
        return ""
    escaped = re.sub(r'(["\\])', r"\\\1", " ".join(str(title).split()))
    return f' "{escaped}"'
