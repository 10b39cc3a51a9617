"""The report as a Word document (GET /api/runs/{id}/report.docx): the run's own Markdown, parsed by the same
markdown-it the HTML uses (raw HTML off), written with python-docx — headings, paragraphs with bold, italic
and code, bullet and numbered lists, quotes, code blocks and tables. Links keep their text and show their
URL after it (once: not after a link whose text is its URL): a document has no way to check a link later,
the reader can."""

from __future__ import annotations

import io
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

_MD = MarkdownIt("js-default").enable("table")


def report_docx(markdown: str, title: str) -> bytes:
    # python-docx is imported on the first .docx (in a thread), not with the server: start-up CPU
    from docx import Document

    document = Document()
    document.core_properties.title = title[:250]
    document.core_properties.subject = "deepresearch report"
    _Writer(document).write(_MD.parse(markdown))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


class _Writer:
    def __init__(self, document: Any) -> None:
        self.document = document
        self.lists: list[str] = []  # "bullet" | "ordered", innermost last
        self.quote = 0
        self.table: list[list[str]] | None = None

    def write(self, tokens: list[Token]) -> None:
        heading = 0
        for token in tokens:
            kind = token.type
            if kind == "heading_open":
                heading = int(token.tag[1])
            elif kind == "heading_close":
                heading = 0
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.lists.append("bullet" if kind.startswith("bullet") else "ordered")
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "blockquote_open":
                self.quote += 1
            elif kind == "blockquote_close":
                self.quote -= 1
            elif kind == "table_open":
                self.table = []
            elif kind == "tr_open" and self.table is not None:
                self.table.append([])
            elif kind == "table_close":
                self._table()
            elif kind in ("fence", "code_block"):
                from docx.shared import Pt  # (imported by report_docx already)

                paragraph = self.document.add_paragraph()
                run = paragraph.add_run(token.content.rstrip("\n"))
                run.font.name = "Courier New"
                run.font.size = Pt(9)
            elif kind == "hr":
                self.document.add_paragraph("―" * 12)
            elif kind == "inline":
                self._inline(token, heading)

    def _inline(self, token: Token, heading: int) -> None:
        if self.table is not None:
            if self.table:
                self.table[-1].append(_plain(token))
            return
        if heading:
            self.document.add_heading(_plain(token), level=min(heading, 4))
            return
        style = None
        if self.lists:
            depth = len(self.lists)
            base = "List Bullet" if self.lists[-1] == "bullet" else "List Number"
            style = base if depth == 1 else f"{base} {min(depth, 3)}"
        elif self.quote:
            style = "Quote"
        paragraph = self.document.add_paragraph(style=style)
        bold = italic = code = False
        href: str | None = None
        shown = ""  # the link's own text, so far
        for child in token.children or []:
            if child.type == "strong_open":
                bold = True
            elif child.type == "strong_close":
                bold = False
            elif child.type == "em_open":
                italic = True
            elif child.type == "em_close":
                italic = False
            elif child.type == "link_open":
                href, shown = str(child.attrGet("href") or ""), ""
            elif child.type == "link_close":
                # an autolink's (or a bare URL's) text is the URL already: it is not written twice
                if (
                    href
                    and not href.startswith("#")
                    and shown.strip() not in (href, href.removeprefix("mailto:"), href.split("://", 1)[-1])
                ):
                    paragraph.add_run(f" <{href}>").italic = True
                href = None
            elif child.type in ("softbreak", "hardbreak"):
                paragraph.add_run(" " if child.type == "softbreak" else "\n")
            elif child.type in ("text", "code_inline"):
                shown += child.content if href is not None else ""
                run = paragraph.add_run(child.content)
                run.bold, run.italic = bold or None, italic or None
                code = child.type == "code_inline"
                if code:
                    run.font.name = "Courier New"

    def _table(self) -> None:
        rows = [row for row in self.table or [] if row]
        self.table = None
        if not rows:
            return
        width = max(len(row) for row in rows)
        table = self.document.add_table(rows=len(rows), cols=width)
        table.style = "Table Grid"
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.cell(r, c).text = text


def _plain(token: Token) -> str:
    return "".join(
        child.content if child.type in ("text", "code_inline") else " " if child.type == "softbreak" else ""
        for child in token.children or []
    )
