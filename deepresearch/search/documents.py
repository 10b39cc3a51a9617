"""Text extraction and passage chunking for the local corpus (.md, .txt, .html/.htm, .pdf)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import logging
import re
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bs4 import Tag

from deepresearch.cpu import CpuPool
from deepresearch.extractive.reading.text import DEFINITION_LEVEL, code_span, heading_passages
from deepresearch.search.entries import (
    ENTRY_HEADINGS,
    code_terms,
    entry_row,
    entry_terms,
    flag_terms,
    follows_entry,
    inline_code,
    named_entry,
    shared_words,
    tagged_terms,
)
from deepresearch.search.layouts import generator_layouts
from deepresearch.search.markdown import rst_text, unwrap
from deepresearch.search.preformatted import prose_text, sample_text
from deepresearch.web.extract import soup_of

__all__ = [
    "PASSAGE_CHARS",
    "SUPPORTED_SUFFIXES",
    "DocumentLimit",
    "ExtractedText",
    "chunk_text",
    "extract_limited",
    "extract_text",
    "limited_extractor",
    "passage_sections",
    "read_within_limits",
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


class DocumentLimit(ValueError):
    """A document past a reading limit (its pages, the time its parse takes); the message names the
    setting that raises the limit."""


class _TooSlow(BaseException):
    """Raised by the timer inside a parse: a BaseException, so no `except Exception` of a parser eats it."""


def _too_slow(signum: int, frame: object) -> None:
    raise _TooSlow


def extract_limited(name: str, data: bytes, max_pages: int, seconds: float) -> ExtractedText:
    """extract_text within limits, for a CPU worker process (cpu.py): at most `max_pages` pages (PDF) and
    `seconds` of parsing - in a worker's main thread a timer interrupts the parse (a crafted PDF whose
    pages share one huge content stream is parsed again for every page). In a thread (DEEPRESEARCH_CPU_
    WORKERS=0) no timer can interrupt it: the caller bounds its own wait instead."""
    if name.lower().endswith(".pdf"):
        # the parser's import is no part of the parse: a worker's first PDF must not spend its limit on it
        with contextlib.suppress(ImportError):
            import pypdf  # noqa: F401
    timed = threading.current_thread() is threading.main_thread()
    if timed:
        previous = signal.signal(signal.SIGALRM, _too_slow)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return extract_text(Path(name), data, max_pages=max_pages)
    except _TooSlow:
        raise DocumentLimit(too_slow(seconds)) from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


async def read_within_limits(
    cpu: CpuPool, name: str, data: bytes, max_pages: int, seconds: float
) -> ExtractedText:
    """extract_limited in a CPU worker process (never in the server's own: a parse holds the GIL). The
    wait is bounded here as well, for the thread pool and for a parse stuck in C code."""
    try:
        return await asyncio.wait_for(cpu.run(extract_limited, name, data, max_pages, seconds), seconds + 5)
    except TimeoutError:
        raise DocumentLimit(too_slow(seconds)) from None


def limited_extractor(cpu: CpuPool, max_pages: int, seconds: float) -> Callable[[Path, bytes], ExtractedText]:
    """extract_text for a corpus index's worker thread: PDFs are read in a CPU worker within the limits
    (through the event loop that is running now), the other types in the calling thread."""
    loop = asyncio.get_running_loop()

    def extract(path: Path, data: bytes) -> ExtractedText:
        if path.suffix.lower() != ".pdf":
            return extract_text(path, data)
        work = read_within_limits(cpu, path.name, data, max_pages, seconds)
        return asyncio.run_coroutine_threadsafe(work, loop).result()

    return extract


def too_slow(seconds: float) -> str:
    return (
        f"reading the document took longer than {seconds:g} s, the most allowed "
        "(DEEPRESEARCH_DOCUMENT_PARSE_SECONDS)"
    )


def extract_text(path: Path, data: bytes, *, max_pages: int | None = None) -> ExtractedText:
    """Title and plain text of one corpus file. Raises on unreadable content (callers decide), and
    DocumentLimit for a PDF of more than `max_pages` pages."""
    suffix = path.suffix.lower()
    if suffix in HTML_SUFFIXES:
        title, text = _from_html(data)
    elif suffix == ".pdf":
        title, text = _from_pdf(data, max_pages)
    elif suffix in MARKDOWN_SUFFIXES:
        text = unwrap(_decode(data))  # a wrapped line that starts with a capital is no new sentence
        title = _markdown_title(text)
    elif suffix == ".txt" and path.name.lower().endswith(".rst.txt"):
        # Sphinx ships each page's reStructuredText source as name.rst.txt (the "Show Source" link)
        text = rst_text(_decode(data))
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


# Sphinx, MkDocs and most CMS themes wrap the article in one of these; the rest is navigation
_MAIN_SELECTORS = ("[role=main]", "main", "article", "div.body", "div.document")
# page chrome, and the buttons of tabbed content ("BashFishCMDPowershell" before the first tab's sample) ...
# and a menu shown only on a click (HAProxy's keyword menus: "bindThis keyword is available in sections :Log
# forwarding..." glued into the sentence that names the keyword), or content the page hides (not a tab's
# panel: the other system's instructions wait for their tab's click); Publican's "Prev | Next" bars (.docnav;
# not DocBook's .navheader nor .navfooter: PostgreSQL's name the chapter, and its precision fell 0.82 -> 0.75
# without the header, 0.82 -> 0.77 without the footer), a site's menu (ul.nav: "Home, Download, ..."),
# Texinfo's "Next: ..., Previous: ..., Up: ... [Contents][Index]" line (6.x div.header, 7.x div.nav-panel),
# Sphinx's "[source]" link after an entry's signature (its label read "clean_savepoints(using=None)[source]"),
# its "See also" box of captioned links and a local table of contents (an FAQ's index) - read as findings
_CHROME = (
    "nav, header, footer, aside, form, .sphinxsidebar, .related, .headerlink, .viewcode-link, div.seealso, "
    ".toctree-wrapper, [role=tablist], .dropdown-menu, [hidden]:not([role=tabpanel]), .docnav, ul.nav, "
    "div.header:has(a[rel=next], a[rel=prev], a[rel=up]), div.nav-panel, div.contents.topic, pre span.boring"
)  # mdBook's hidden lines of a sample ("# fn main() {"): the page shows the sample without them
REDIRECT_CHARS = 300
"""A page that sends the browser elsewhere (<meta http-equiv="refresh" content="0; url=...">) and holds at
most this much text is no document: Texinfo's stubs ("The node you are looking for is at Binary.", 89 of
diffutils' 112 pages) were listed as sources read."""
# footnote marks ("every record [5] now comes with": a report's citation; texinfo's "Terminal25", R's manuals)
_FOOTNOTE_MARKS = '.footnote-reference, [role=doc-noteref], sup.reference, a[href^="#FOOT"]'
_HEADING_TAGS = {f"h{level}": level for level in range(1, 7)}


def _from_html(data: bytes) -> tuple[str, str]:
    """Title and text of the page's main content. Headings become Markdown heading lines (``## Title``) and
    an API entry's signature a level-6 heading, so passages can be cut by section and keep their path."""
    soup = soup_of(data)
    named = soup.title if soup.title is not None and soup.title.get_text(strip=True) else None
    named = named or soup.find(["h1", "h2", "h3"])  # no <title>: its first heading
    title = named.get_text(" ", strip=True) if named is not None else ""
    redirect = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.IGNORECASE)})
    redirects = redirect is not None and "url=" in str(redirect.get("content") or "").lower()
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    # the first that holds text: ImageMagick's pages open with an empty <div role="main"> before their <main>
    main = (found for sel in _MAIN_SELECTORS for found in soup.select(sel) if found.get_text(strip=True))
    root = next(main, None) or soup.body or soup
    for tag in root.select(_CHROME):
        tag.decompose()
    generator_layouts(root)
    for banner in root.select("h1:has(> a[href^='http'])"):
        # a title that is a link to a site: its banner ("Exim Internet Mailer" labelled quotes of every page)
        if banner.get_text(strip=True) == banner.a.get_text(strip=True):
            banner.decompose()
    for mark in root.select(_FOOTNOTE_MARKS):
        before, after = mark.previous_sibling, mark.next_sibling
        if isinstance(before, str) and isinstance(after, str) and after[:1] in ",.;:!?)":
            before.replace_with(before.rstrip())  # "insecure [*], and" reads "insecure, and"
        mark.decompose()
    for br in root.find_all("br"):
        br.replace_with("\n")
    for pre in root.find_all("pre"):
        prose = prose_text(pre.get_text())  # a manual page or a manual set in <pre>: its paragraphs
        if prose is not None:
            pre.replace_with(f"\n\n{prose}\n\n")
            continue
        # a sample is one line (its lines apart: sample_text), a comment at its start no Markdown heading; no
        # code span: as one, it cost held-out Git 0.79 -> 0.69 fact recall and a gold page (JOURNAL, 36)
        code = sample_text(pre.get_text())
        pre.replace_with(f"\n\n\\{code}\n\n" if code.startswith("#") else f"\n\n{code}\n\n")
    forms: list[list[tuple[Tag, str]]] = []  # an entry and the forms stacked right after it
    for entry in root.select(ENTRY_HEADINGS):
        text = " ".join(entry.get_text(" ").split())
        if forms and follows_entry(entry):
            forms[-1].append((entry, text))
        else:
            forms.append([(entry, text)])
    for group in forms:
        # an entry's name and its arguments head its description, as an API entry's signature does; with
        # several forms ("redirect location <loc> ...", "redirect scheme <sch> ..."), the words they share
        # head it and each form is a line under it: the first form labelled the text of every other
        texts = [text for _, text in group]
        shared = shared_words(texts) if len(texts) > 1 else ""
        heading, lines = (shared, texts) if shared else (texts[0], texts[1:])
        block = "\n\n".join([f"{'#' * DEFINITION_LEVEL} {heading}"] * bool(heading) + lines)
        group[0][0].replace_with(f"\n\n{block}\n\n" if block else "")
        for entry, _ in group[1:]:
            entry.replace_with("")
    for table in root.find_all("table"):
        if (entry := entry_row(table)) is not None:  # an option's name over its description, its fields
            table.replace_with("\n\n".join(["", f"{'#' * DEFINITION_LEVEL} {entry[0]}", *entry[1], ""]))
    _close_boxes(root)
    flag_terms(root)
    tagged_terms(root)
    for link in root.select(":is(h1, h2, h3, h4, h5, h6, dt) a[href^='#']"):  # a permalink: Node's "#", "§"
        if len(mark := link.get_text(strip=True)) == 1 and not mark.isalnum():
            link.decompose()
    entries = entry_terms(root)
    for tag in root.find_all([*_HEADING_TAGS, "dt"]):
        level = _HEADING_TAGS.get(tag.name)
        if level is None:
            # a definition term with an id is an API entry's signature, and so is a named one over a long
            # description (postconf(5)'s thousand parameters); a plain <dt> is a glossary term - and so is
            # one inside a plain term's description: a heading there would label the terms after its list
            # (diffutils' "ln=36" under --palette, over every option after it)
            level = DEFINITION_LEVEL if id(tag) in entries else None
        # a signature is split into many <span>s that must join without spaces: "subprocess.run(args, ...)";
        # a heading or a plain term reads as the page shows it ("Limiting QuerySets", "--fuzz=lines", "-r,
        # --with-recommends", not "Limiting QuerySet s", "-r , ...")
        signature = tag.name == "dt" and level is not None
        text = (" ".join(tag.get_text("").split()) if signature else _cell_text(tag)).rstrip("¶").strip()
        if level is not None and text:
            tag.replace_with(f"\n\n{'#' * level} {text}\n\n")
        elif text:
            # a term line ends with a colon: the definition that follows is quoted under its term
            tag.replace_with(f"\n\n{text if text.endswith(':') else text + ':'}\n\n")
    code_terms(root)
    _bold_headings(root)
    _mark_lists_and_tables(root)
    _code_subjects(root)
    # mark block boundaries so inline markup (<b>, <a>) stays inside its sentence
    for block in root.find_all(_BLOCK_TAGS):
        block.insert_before("\n\n")
        block.insert_after("\n\n")
    lines = (" ".join(line.split()) for line in root.get_text().split("\n\n"))
    text = "\n\n".join(line for line in lines if line)
    return title, "" if redirects and len(text) <= REDIRECT_CHARS else text


_OPENS = re.compile(r"(?:^|[.!?][)\]\"'’”]?\s)\s*$")  # nothing before, or a sentence's end


def _code_subjects(root: Tag) -> None:
    """A name in code that opens a sentence ("<code>anacron</code> is the daemon that completes cron ...",
    Apache's "mod_alias is designed to handle ...") written as a code span: a sentence that opens in lower
    case is none to the sentence splitter (never quoted, or glued to the sentence before it)."""
    for code in root.find_all(inline_code):
        text = " ".join(code.get_text().split())
        if not text[:1].islower() or code.find_parent(inline_code) is not None:
            continue
        before: list[str] = []  # the text of its block before it, back to a block's start
        for element in code.previous_elements:
            if isinstance(element, Tag) and element.name in _BLOCK_TAGS:
                break
            if isinstance(element, str) and element.find_parent(inline_code) is not code:
                before.append(element)
                if "\n\n" in element or sum(map(len, before)) > 20:
                    break
        if _OPENS.search("".join(reversed(before)).rsplit("\n\n", 1)[-1]):
            code.replace_with(code_span(text))


BOLD_HEADING_LEVEL = 5
_BOLD = ("b", "strong")


def _bold_headings(root: Tag) -> None:
    """A paragraph that is one bold phrase and no sentence ("<p><b>(19) INSERT is really slow</b></p>", a
    FAQ's question) heads what follows, as a heading would: a level-5 heading, under the page's own."""
    for paragraph in root.find_all("p"):
        if _bold_heading(paragraph):
            text = " ".join(paragraph.get_text(" ").split())
            paragraph.replace_with(f"\n\n{'#' * BOLD_HEADING_LEVEL} {text}\n\n")


def _bold_heading(paragraph: Tag) -> bool:
    children = [c for c in paragraph.children if not (isinstance(c, str) and not c.strip())]
    if len(children) != 1 or getattr(children[0], "name", None) not in _BOLD:
        return False
    if paragraph.find_parent(["th", "td"]) is not None:
        return False  # a table's bold header cell ("Application", "Logger Name") stays in its row
    text = " ".join(paragraph.get_text(" ").split())
    return 3 <= len(text) <= 150 and not text.endswith((".", ":"))


# a box set off from the text with a bold title of its own: DocBook's sidebars, examples and figures (the
# Debian handbook's "BACK TO BASICS ...", "Example 6.4. ..."). Not tables nor admonitions, nor a box titled
# by a heading (Apache's "Example"): written again after those, the sections cost PostgreSQL 0.95 -> 0.89
# and the Apache dev set 0.94 -> 0.88 fact recall (bench/quality/JOURNAL.md, session 36)
_BOXES = "div.sidebar, div.example, div.figure"
# DocBook's admonitions: a box whose title is an h3 ("Note"), never the section a box after it stands in
_ADMONITIONS = "div.note, div.warning, div.caution, div.important, div.tip"


def _close_boxes(root: Tag) -> None:
    """The section a titled box stands in goes on after it: its heading is written again after the box.
    The box's title is a heading in the text, and headings only open sections - the text after a sidebar
    ("BACK TO BASICS Priorities and nice") or under an example's caption ("Example 6.4. Installation of
    ...") was labelled with it."""

    def boxed(tag: Tag, boxes: str = _BOXES) -> bool:
        for parent in tag.parents:
            if parent is root:
                return False
            if parent.css.match(boxes):
                return True
        return False

    for box in root.select(_BOXES):
        titled = any(_bold_heading(p) for p in box.find_all("p"))
        if not titled or boxed(box):
            continue
        section = box.find_previous(list(_HEADING_TAGS))
        # mutt's "### Note" written again after an example: the title of a note before it, not its section
        while section is not None and boxed(section, f"{_BOXES}, {_ADMONITIONS}"):
            section = section.find_previous(list(_HEADING_TAGS))
        if section is not None and root in section.parents:
            box.insert_after(copy.copy(section))


def _bold_only(cell: Tag) -> bool:
    """A cell whose text is all bold: a header row written with <td><strong> ("Sign | Argument | Meaning")."""
    bold = cell.find(_BOLD)
    return bold is not None and " ".join(bold.get_text().split()) == " ".join(cell.get_text().split())


def _cell_text(cell: Tag) -> str:
    """A cell's text on one line, its blocks apart and its inline markup as it reads: a DocBook note laid
    out in a table read "(such as “ ~N edit ” )" for "(such as “~N edit”)" with a space at every tag."""
    for block in cell.find_all(_BLOCK_TAGS):
        block.insert_before(" ")
        block.insert_after(" ")
    return " ".join(cell.get_text().split())


def _mark_lists_and_tables(root: Tag) -> None:
    """A list item starts with "- " (so an item that is no sentence still reads as one of a list), and a
    table's cells are kept apart: "Default: 3600" for a row of a name and a value, "a | b | c" otherwise; its
    header row is a Markdown table's row ("| Event | Meaning |")."""
    for item in root.find_all("li"):
        if named_entry(item):
            continue
        first = next((t for t in item.find_all(string=True) if t.strip()), None)
        if first is not None:
            first.replace_with(f"- {first.lstrip()}")
    for row in root.find_all("tr"):
        cells = row.find_all(["th", "td"], recursive=False)
        table = row.find_parent("table")
        first = table is not None and table.find("tr") is row
        if len(cells) > 1 and all(cell.name == "th" or (first and _bold_only(cell)) for cell in cells):
            # a header row names the columns ("Event | Meaning"): written as a Markdown table's row, which is
            # never quoted nor taken for the sample a sentence before it announces
            row.replace_with("| " + " | ".join(_cell_text(c) for c in cells) + " |")
            continue
        for index, cell in enumerate(cells):
            text = _cell_text(cell)
            if len(cells) == 2 and index == 0:
                text = f"{text}{'' if text.endswith(':') else ':'} "
            elif index < len(cells) - 1:
                text = f"{text} | "
            cell.replace_with(text)


def _from_pdf(data: bytes, max_pages: int | None = None) -> tuple[str, str]:
    from pypdf import PdfReader  # optional at runtime; imported only for PDFs

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt("")  # many "encrypted" PDFs only carry an empty user password
    if max_pages is not None and len(reader.pages) > max_pages:
        raise DocumentLimit(
            f"the PDF has {len(reader.pages)} pages, more than the {max_pages} allowed "
            "(DEEPRESEARCH_DOCUMENT_MAX_PAGES)"
        )
    pages = [(page.extract_text() or "").strip() for page in reader.pages]
    text = "\n\n".join(page for page in pages if page)
    meta_title = reader.metadata.title if reader.metadata is not None else None
    title = meta_title.strip() if isinstance(meta_title, str) and meta_title.strip() else ""
    return title or _first_line_title(text), text


def passage_sections(text: str) -> list[tuple[str, str]]:
    """(heading path, body) passages: the text cut at its headings, each body in ~PASSAGE_CHARS passages."""
    return [
        (" › ".join(section.headings), body)
        # the index's passages are cut again by chunk_text, and their cut is part of INDEX_VERSION
        for section in heading_passages(
            text, target_chars=PASSAGE_CHARS, max_chars=1 << 30, whole_lists=False
        )
        for body in chunk_text(section.body)
    ]


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
