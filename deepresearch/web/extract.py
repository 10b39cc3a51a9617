"""Turn a fetched body into main text plus metadata. Pure CPU work: run it off the event loop.

HTML: parsed once with lxml; the title, ``<link rel=canonical>`` and explicit publish dates are read from
that tree, and trafilatura extracts the main text from the same tree (best boilerplate removal). Only when
it finds none: readability-lxml, then BeautifulSoup ``get_text`` on the page minus obvious chrome.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import logging
import re
import warnings
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from lxml.html import HtmlElement

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

logger = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
ALLOWED_CONTENT_TYPES = HTML_TYPES | TEXT_TYPES | PDF_TYPES

_META_CHARSET_RE = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_DATE_META_KEYS = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
    "dc.date",
    "dc.date.issued",
    "dcterms.created",
    "citation_publication_date",
    "sailthru.date",
)
_UNLIKELY_CODECS = ["utf_16", "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le", "utf_7"]
_CHROME_TAGS = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form")


class ExtractionError(ValueError):
    """The body could not be parsed at all (e.g. a corrupt PDF)."""


@dataclass(slots=True)
class Extracted:
    title: str
    text: str
    canonical_url: str | None
    published: str | None
    extractor: str


def decode_body(body: bytes, charset: str | None, *, html: bool) -> str:
    """Decode with the header charset, then a BOM or ``<meta charset>``, then UTF-8, then detection."""
    candidates: list[str] = []
    if body.startswith(codecs.BOM_UTF8):
        candidates.append("utf-8-sig")
    if charset:
        candidates.append(charset)
    if html:
        match = _META_CHARSET_RE.search(body[:4096])
        if match:
            candidates.append(match.group(1).decode("ascii"))
    candidates.append("utf-8")
    for name in candidates:
        try:
            return body.decode(codecs.lookup(name).name)
        except (LookupError, UnicodeDecodeError):
            continue
    if len(body) >= 64:  # detection is guesswork on tiny inputs
        try:
            from charset_normalizer import from_bytes

            # BOM-less UTF-16/32 "detections" of 8-bit text are the classic mis-guess; exclude them.
            best = from_bytes(body[:200_000], cp_exclusion=_UNLIKELY_CODECS).best()
            if best is not None and best.encoding:
                return body.decode(best.encoding, errors="replace")
        except ImportError:  # optional: trafilatura pulls it in, but do not depend on that
            pass
    # The WHATWG default for unlabelled western pages.
    return body.decode("cp1252", errors="replace")


def clean_text(text: str) -> str:
    """Strip each line, collapse runs of blank lines and inner whitespace."""
    lines = [re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def truncate(text: str, max_chars: int) -> str:
    """Cut at ``max_chars``, preferably at a word boundary near the end."""
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ", max(0, max_chars - 200))
    return (cut[:space] if space > 0 else cut).rstrip()


def iso_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` from a datetime or an ISO-ish string, else None."""
    if isinstance(value, datetime):
        return value.date().isoformat()
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        pass
    match = re.match(r"(\d{4})-(\d{2})-(\d{2})", text)
    if match:
        try:
            return datetime(*(int(part) for part in match.groups())).date().isoformat()
        except ValueError:
            return None
    return None


# --- HTML ----------------------------------------------------------------------------------------
# The page is parsed once (lxml, ~0.4 ms for 80 KB): the metadata is read from that tree with XPath and
# trafilatura extracts the text from the same tree (it does not modify it). A second full parse with
# BeautifulSoup and trafilatura's own metadata pass (htmldate's search) cost ~17 of the ~24 ms per page
# (docs/profile.md); htmldate now runs only when the markup states no date.
_TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|·|::|»)\s+")


def _meta(tree: HtmlElement, xpath: str) -> str:
    for value in tree.xpath(xpath):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _clean_title(raw: str, headings: list[str], site_name: str) -> str:
    """``<title>`` without its " | Site name" part: the leading part when a <h1> repeats it (and no other
    part), else the parts that are not the site's name, else all of it (a menu's <h1> repeating the site's
    name, the last part, is no headline)."""
    parts = [part.strip() for part in _TITLE_SEPARATORS.split(raw) if part.strip()]
    if len(parts) < 2:
        return raw
    repeated = [part for part in parts if part in headings]
    if repeated == [parts[0]]:
        return parts[0]
    if site_name and site_name in parts:
        return " - ".join(part for part in parts if part != site_name)
    return raw


def _json_ld_date(tree: HtmlElement) -> str | None:
    for script in tree.xpath('//script[@type="application/ld+json"]/text()'):
        try:
            data = json.loads(script)
        except (json.JSONDecodeError, TypeError):
            continue
        stack = [data]
        while stack:  # JSON-LD nests freely (@graph, lists); walk it breadth-first
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                date = iso_date(item.get("datePublished")) or iso_date(item.get("dateCreated"))
                if date:
                    return date
                stack.extend(value for value in item.values() if isinstance(value, dict | list))
    return None


def _html_metadata(tree: HtmlElement, url: str) -> tuple[str, str | None, str | None]:
    """(title, canonical, published) read directly from the markup."""
    headings = [" ".join(h1.text_content().split()) for h1 in tree.xpath("//h1")[:5]]
    title = _meta(tree, '//meta[@property="og:title"]/@content') or _meta(
        tree, '//meta[@name="twitter:title"]/@content'
    )
    if not title:
        raw = " ".join(_meta(tree, "//title/text()").split())
        site_name = _meta(tree, '//meta[@property="og:site_name"]/@content')
        title = _clean_title(raw, headings, site_name) if raw else next((h for h in headings if h), "")

    canonical = None
    for link in tree.xpath("//link[@rel][@href]"):
        if "canonical" in (link.get("rel") or "").lower().split():
            candidate = urljoin(url, (link.get("href") or "").strip())
            if candidate.startswith(("http://", "https://")):
                canonical = candidate
                break

    published = None
    for meta in tree.xpath("//meta[@content]"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").strip().lower()
        if key in _DATE_META_KEYS:
            published = iso_date(meta.get("content"))
            if published:
                break
    if not published:
        published = _json_ld_date(tree)
    if not published:
        times = tree.xpath('//time[@itemprop="datePublished"]') or tree.xpath("//time[@datetime]")
        published = iso_date(times[0].get("datetime")) if times else None
    return title, canonical, published


def _trafilatura(tree: HtmlElement, url: str) -> str:
    import trafilatura

    try:
        doc = trafilatura.bare_extraction(
            tree, url=url, with_metadata=False, include_comments=False, include_tables=True
        )
    except Exception:  # third-party parser on hostile input: any failure just means "try the next"
        logger.debug("trafilatura failed on %s", url, exc_info=True)
        return ""
    if doc is None or isinstance(doc, dict):
        return ""
    return clean_text(doc.text or "")


def _guessed_date(tree: HtmlElement, url: str) -> str | None:
    """htmldate's reading of a page that states no date in its metadata (bylines, the URL, ...)."""
    from htmldate import find_date

    try:
        return iso_date(find_date(tree, url=url, extensive_search=True, original_date=True))
    except Exception:  # third-party parser on hostile input: no date rather than no page
        logger.debug("htmldate failed on %s", url, exc_info=True)
        return None


# an XML document (an RSS or Atom feed, a sitemap): an XML declaration, then a first element other than
# <html> — what BeautifulSoup warns about (XMLParsedAsHTMLWarning), once per page, under the HTML parser
_XML_DOCUMENT = re.compile(
    r"\A\ufeff?\s*<\?xml\s[^>]*>(?:\s+|<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)*<(?!html\b)[A-Za-z_]",
    re.S | re.I,
)


def soup_of(markup: str | bytes) -> BeautifulSoup:
    """BeautifulSoup of a page: lxml's HTML parser, or its XML parser for an XML document."""
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    if isinstance(markup, bytes) and not markup.isascii():
        # bytes that read as UTF-8 are UTF-8, whatever a <meta> says: Debian's Vim help pages declare
        # ISO-8859-1 over UTF-8 text ("ÎA,ÎB" for "ΑA,ΒB"); text in a one-byte charset is almost never valid
        # UTF-8, and is left to the declaration
        with contextlib.suppress(UnicodeDecodeError):
            markup = markup.decode("utf-8")
    head = markup[:8192]
    xml = _XML_DOCUMENT.match(head.decode("utf-8", "replace") if isinstance(head, bytes) else head)
    with warnings.catch_warnings():
        # XHTML (an XML declaration over <html>: the Debian handbook's pages) is HTML, for the HTML parser
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(markup, "xml" if xml else "lxml")


def _readability(html: str, url: str) -> str:
    from bs4 import BeautifulSoup
    from readability import Document

    try:
        summary = Document(html, url=url).summary(html_partial=True)
    except Exception:  # readability raises Unparseable and assorted lxml errors
        logger.debug("readability failed on %s", url, exc_info=True)
        return ""
    return clean_text(BeautifulSoup(summary, "lxml").get_text("\n"))


def _soup_text(html: str) -> str:
    soup = soup_of(html)
    for tag in soup.find_all(_CHROME_TAGS):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    return clean_text(root.get_text("\n"))


def _parse(html: str) -> HtmlElement | None:
    from trafilatura import load_html  # copes with encoding declarations and broken markup

    tree = load_html(html)
    return tree if isinstance(tree, HtmlElement) else None


def extract_html(html: str, url: str) -> Extracted:
    tree = _parse(html)
    title, canonical, published, text, extractor = "", None, None, "", "trafilatura"
    if tree is not None:
        title, canonical, published = _html_metadata(tree, url)
        text = _trafilatura(tree, url)
    # the fallbacks are rare (trafilatura found no main text): they may parse again
    if not text:
        text, extractor = _readability(html, url), "readability"
    if not text:
        text, extractor = _soup_text(html), "beautifulsoup"
    if not published and tree is not None:
        published = _guessed_date(tree, url)
    return Extracted(title, text, canonical, published, extractor)


# --- text and PDF --------------------------------------------------------------------------------
def extract_plain(text: str) -> Extracted:
    """text/plain and markdown: the text itself; title = first heading or first line."""
    cleaned = clean_text(text)
    title = ""
    for line in cleaned.splitlines():
        if line.strip():
            title = line.lstrip("#").strip()[:200]
            break
    return Extracted(title, cleaned, None, None, "plain")


def extract_pdf(body: bytes, max_chars: int) -> Extracted:
    """Text of the PDF's pages, stopping once ``max_chars`` is reached (big PDFs are slow)."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            reader.decrypt("")  # many "encrypted" PDFs only restrict printing, with an empty password
        parts: list[str] = []
        size = 0
        for page in reader.pages:
            page_text = page.extract_text() or ""
            parts.append(page_text)
            size += len(page_text)
            if size >= max_chars:
                break
        title, published = "", None
        meta = reader.metadata
        if meta is not None:
            title = (meta.title or "").strip()
            try:
                published = iso_date(meta.creation_date)
            except (ValueError, TypeError):  # malformed /CreationDate
                published = None
    except Exception as exc:  # pypdf raises many error types on malformed files
        logger.debug("pypdf failed", exc_info=True)
        raise ExtractionError(f"unreadable PDF ({type(exc).__name__}: {exc})") from exc
    text = clean_text("\n\n".join(parts))
    if not title:
        title = next((line for line in text.splitlines() if line.strip()), "")[:200]
    return Extracted(title, text, None, published, "pdf")


def extract_document(
    body: bytes, media_type: str, charset: str | None, url: str, max_chars: int
) -> Extracted:
    """Dispatch on the media type (already checked against ``ALLOWED_CONTENT_TYPES``)."""
    if media_type in PDF_TYPES:
        return extract_pdf(body, max_chars)
    if media_type in TEXT_TYPES:
        return extract_plain(decode_body(body, charset, html=False))
    return extract_html(decode_body(body, charset, html=True), url)
