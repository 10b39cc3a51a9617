"""Text extraction and passage chunking for the local corpus (.md, .txt, .html/.htm, .pdf)."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup

__all__ = [
    "PASSAGE_CHARS",
    "SUPPORTED_SUFFIXES",
    "ExtractedText",
    "chunk_text",
    "extract_text",
]

logger = logging.getLogger(__name__)

PASSAGE_CHARS = 1200
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
SUPPORTED_SUFFIXES = frozenset({".txt", ".pdf"} | MARKDOWN_SUFFIXES | HTML_SUFFIXES)
_MAX_TITLE_CHARS = 200

_ATX_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_FRONT_MATTER_TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)
_PARAGRAPH_SPLIT_RE = re.compile(r"\n\s*\n")
_SENTENCE_END_RE = re.compile(r"[.!?][)\]\"']?\s")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head")
_BLOCK_TAGS = (
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li", "ul", "ol",
    "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "tr",
    "figure", "figcaption", "hr",
)  # fmt: skip


@dataclass(frozen=True)
class ExtractedText:
    title: str
    text: str


def extract_text(path: Path, data: bytes) -> ExtractedText:
    """Title and plain text of one corpus file. Raises on unreadable content (callers decide)."""
    suffix = path.suffix.lower()
    if suffix in HTML_SUFFIXES:
        title, text = _from_html(data)
    elif suffix == ".pdf":
        title, text = _from_pdf(data)
    elif suffix in MARKDOWN_SUFFIXES:
        text = _decode(data)
        title = _markdown_title(text)
    elif suffix == ".txt":
        text = _decode(data)
        title = _first_line_title(text)
    else:
        raise ValueError(f"unsupported corpus file type {suffix!r}")
    title = " ".join(title.split())[:_MAX_TITLE_CHARS]
    return ExtractedText(title=title or path.stem, text=text.strip())


def _decode(data: bytes) -> str:
    # corpus files are user notes: prefer a readable result over refusing a stray byte
    return data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n")


def _first_line_title(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().strip("#*=_-").strip()
        if line:
            return line if len(line) <= 120 else ""
    return ""


def _markdown_title(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        front = _FRONT_MATTER_TITLE_RE.search(text[4:end]) if end > 0 else None
        if front:
            return front.group(1).strip().strip("\"'")
    heading = _ATX_HEADING_RE.search(text)
    if heading:
        return heading.group(1)
    return _first_line_title(text)


def _from_html(data: bytes) -> tuple[str, str]:
    soup = BeautifulSoup(data, "lxml")
    title = ""
    if soup.title is not None and soup.title.get_text(strip=True):
        title = soup.title.get_text(" ", strip=True)
    else:
        heading = soup.find(["h1", "h2", "h3"])
        if heading is not None:
            title = heading.get_text(" ", strip=True)
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for br in soup.find_all("br"):
        br.replace_with("\n")
    # mark block boundaries so inline markup (<b>, <a>) stays inside its sentence
    for block in soup.find_all(_BLOCK_TAGS):
        block.insert_before("\n\n")
        block.insert_after("\n\n")
    lines = (" ".join(line.split()) for line in soup.get_text().split("\n\n"))
    return title, "\n\n".join(line for line in lines if line)


def _from_pdf(data: bytes) -> tuple[str, str]:
    from pypdf import PdfReader  # optional at runtime; imported only for PDFs

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt("")  # many "encrypted" PDFs only carry an empty user password
    pages = [(page.extract_text() or "").strip() for page in reader.pages]
    text = "\n\n".join(page for page in pages if page)
    meta_title = reader.metadata.title if reader.metadata is not None else None
    title = meta_title.strip() if isinstance(meta_title, str) and meta_title.strip() else ""
    return title or _first_line_title(text), text


def chunk_text(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """Split text into passages of at most ~``size`` chars, on paragraph then sentence boundaries,
    so BM25 scores a focused passage rather than a whole long document."""
    chunks: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_SPLIT_RE.split(text):
        paragraph = " ".join(paragraph.split())
        for piece in _split_long(paragraph, size):
            if current and len(current) + 1 + len(piece) > size:
                chunks.append(current)
                current = piece
            else:
                current = f"{current}\n{piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def _split_long(paragraph: str, size: int) -> Iterator[str]:
    start = 0
    while len(paragraph) - start > size:
        window = paragraph[start : start + size]
        cut = max((m.end() for m in _SENTENCE_END_RE.finditer(window)), default=0)
        if cut < size // 2:
            cut = window.rfind(" ") + 1
        if cut < size // 2:
            cut = size  # one enormous token (base64, a URL list): cut hard
        yield paragraph[start : start + cut].strip()
        start += cut
    rest = paragraph[start:].strip()
    if rest:
        yield rest
