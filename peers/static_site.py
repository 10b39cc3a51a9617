"""A small static web site for fetch and end-to-end tests, served for real by ``serve_app``.

``/articles/<slug>`` pages are the main content (see ``ARTICLES``); the other routes exist to
exercise the fetcher's guards: size caps, decompression bombs, content types, redirects, slowness.

Routes:
    /                         index linking every article
    /articles/<slug>          article page; ``?encoding=gzip|deflate`` compresses the body
    /notes.txt, /readme.md    text/plain and text/markdown pages
    /paper.pdf                a one-page PDF with real text
    /huge?bytes=N&declared=1  HTML of N bytes (streamed; ``declared`` sends Content-Length)
    /bomb?bytes=N             gzip body that inflates to N bytes (decompression bomb)
    /image.png                binary content type
    /empty                    HTML without any text
    /legacy                   windows-1252 page whose charset is only in a <meta> tag
    /redirect/<n>             chain of n redirects ending at the first article
    /redirect-to?url=U        one 302 to any URL (``&status=301`` etc.)
    /slow?delay=S             answers after S seconds (default: the site's ``slow_delay``)
    anything else             404 HTML page
"""

from __future__ import annotations

import asyncio
import gzip
import threading
import zlib
from collections import Counter
from collections.abc import AsyncIterator
from html import escape
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

SITE_NAME = "Field Notes Collective"
CANONICAL_BASE = "https://fieldnotes.example"
BOILERPLATE_MARKERS = ("Subscribe to our newsletter", "Cookie settings", "All rights reserved")

ARTICLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "sqlite-wal": (
        "How SQLite's write-ahead log keeps readers and writers apart",
        (
            "SQLite has two ways of making a transaction durable. The older rollback journal copies the "
            "original pages aside before changing the database file in place, while write-ahead logging "
            "leaves the database file untouched and appends every changed page to a separate file that "
            "ends in -wal. The difference sounds like an implementation detail, but it decides who has to "
            "wait for whom.",
            "In WAL mode a writer only ever appends. Readers look up the most recent version of each page "
            "they need by consulting the wal-index, a small shared-memory file that maps page numbers to "
            "frames in the log. Because a reader remembers the last valid commit frame at the moment it "
            "started, it keeps seeing a consistent snapshot even while a writer adds new frames behind it.",
            "That is why the usual advice is that WAL lets one writer and many readers proceed at the same "
            "time. There is still only one writer: a second connection that tries to write receives "
            "SQLITE_BUSY unless it sets a busy timeout, and long write transactions still serialise the "
            "application. What disappears is the reader-blocks-writer problem of the rollback journal.",
            "The log cannot grow forever. A checkpoint copies frames back into the main database file, and "
            "by default SQLite runs one automatically once the log passes a thousand pages. A checkpoint can "
            "only copy frames that no active reader still depends on, so a single reader that never finishes "
            "its transaction can keep the log growing for hours. Monitoring the size of the -wal file is a "
            "cheap way to spot such stuck readers.",
            "Durability settings interact with all of this. With synchronous set to NORMAL in WAL mode, a "
            "commit is not flushed to disk until the next checkpoint, so a power cut can lose the last few "
            "transactions but never corrupts the file. FULL flushes the log at every commit. Many "
            "applications find NORMAL an acceptable trade because the database stays consistent either way.",
            "WAL has limits worth knowing before switching. Every connection must be on the same host, "
            "because the wal-index lives in shared memory, so network file systems are out. Very large "
            "transactions write their pages to the log first and then again during the checkpoint, which "
            "costs extra I/O. For the common case of a local application with frequent small reads, though, "
            "it is usually the better default.",
        ),
    ),
    "durable-workflow-checkpoints": (
        "Durable workflow checkpoints: resuming work without repeating it",
        (
            "A long-running workflow that calls external services will eventually be interrupted: a deploy "
            "restarts the worker, a machine is preempted, or a downstream API times out for ten minutes. "
            "The question is not whether the process stops but what it has to redo when it starts again.",
            "A checkpoint is a durable record of the workflow state taken at a well-defined boundary, "
            "typically after a step has finished and its result has been stored. On restart, the engine "
            "loads the latest checkpoint and continues with the next step instead of beginning from the top. "
            "The granularity of those boundaries determines how much work can be lost.",
            "Checkpoints alone do not make side effects safe. If a step sends an email and the process dies "
            "after the email left but before the checkpoint was written, the resumed workflow will send it a "
            "second time. The usual remedy is an idempotency key derived from the workflow identifier and "
            "the step name, recorded together with the result, so that a repeated call can be recognised and "
            "answered from the stored receipt.",
            "Storing results also changes what a checkpoint must contain. Instead of serialising an entire "
            "in-memory object graph, many engines keep a compact state dictionary plus an append-only list "
            "of completed steps. That keeps checkpoints small enough to write after every step, and it makes "
            "the history easy to inspect when something goes wrong.",
            "Versioning is the part teams tend to discover late. A checkpoint written by one release may be "
            "loaded by the next, whose step functions expect a slightly different state. Naming each stored "
            "result with the step, the tool and a version number lets the new code decide explicitly which "
            "old results are still valid and which must be recomputed.",
        ),
    ),
    "heat-pumps-cold-climates": (
        "Heat pumps in cold climates: what the field data says",
        (
            "Air-source heat pumps were long described as a technology for mild winters. Field measurements "
            "from northern Europe and Canada over the last decade tell a more nuanced story: modern "
            "variable-speed units keep delivering useful heat well below minus fifteen degrees Celsius, "
            "although with a lower coefficient of performance than on a mild day.",
            "The coefficient of performance, the ratio of heat delivered to electricity consumed, falls as "
            "the temperature gap between outdoor air and the indoor distribution system widens. Monitoring "
            "studies commonly report seasonal averages between 2.5 and 3.5 for well-installed systems in "
            "cold regions, meaning that even across a hard winter each unit of electricity moves several "
            "units of heat into the building.",
            "Installation quality matters as much as the equipment. Oversized units cycle on and off, "
            "undersized units lean on resistive backup heaters, and radiators sized for hot water from an "
            "old boiler may need upgrading so that the heat pump can run at a lower flow temperature. "
            "Several evaluations found that the best and worst installations of the same model differed by "
            "more than thirty percent in seasonal efficiency.",
            "Defrosting is the other cold-climate cost. When the outdoor coil ices up, the unit briefly "
            "reverses to melt it, consuming energy without heating the house. Humid air just below freezing "
            "is in fact harder on a heat pump than dry air at much lower temperatures, which surprises many "
            "owners.",
            "For grid planners the concern is the coldest hours of the year, when every heat pump runs at "
            "full output with its lowest efficiency. Better building insulation, thermal storage and "
            "ground-source systems all flatten that peak, and they are increasingly evaluated together "
            "rather than as separate programmes.",
            "The overall picture from the measured data is that cold climates reduce the advantage of heat "
            "pumps but rarely erase it. Careful sizing, low flow temperatures and attention to defrost "
            "behaviour are what separate the installations that disappoint from those that quietly work.",
        ),
    ),
}

PUBLISHED: dict[str, str] = {
    "sqlite-wal": "2024-03-18",
    "durable-workflow-checkpoints": "2023-11-02",
    "heat-pumps-cold-climates": "2024-01-25",
}

PLAIN_TEXT = (
    "Field notes: reading list\n\n"
    "These notes collect background reading on storage engines, workflow engines and home heating.\n"
    "Start with the write-ahead logging article, then the piece on durable checkpoints.\n"
)
MARKDOWN_TEXT = (
    "# Research log\n\n"
    "The heat pump measurements were collected over three winters.\n\n"
    "- seasonal performance between 2.5 and 3.5\n- defrost losses largest near freezing\n"
)
LEGACY_TEXT = "Café crème at the Brasserie Müller costs 4,50 €, served with a croissant."
LEGACY_HTML = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
    f"<title>Menu</title></head><body><p>{LEGACY_TEXT}</p></body></html>"
)
PDF_LINES = ("Checkpoint storage benchmark", "Write-ahead logging halves commit latency on local disks.")
# Smallest valid PNG (1x1 transparent pixel).
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)

_CHROME_TOP = (
    '<header class="site-header"><a href="/" class="logo">{site}</a>'
    '<nav><ul><li><a href="/">Home</a></li><li><a href="/topics">Topics</a></li>'
    '<li><a href="/subscribe">Subscribe to our newsletter</a></li></ul></nav></header>'
)
_CHROME_BOTTOM = (
    '<aside class="related"><h3>Related posts</h3><ul>'
    '<li><a href="/articles/sqlite-wal">Readers and writers</a></li>'
    '<li><a href="/articles/heat-pumps-cold-climates">Cold winters</a></li></ul></aside>'
    "<footer><p>© 2024 {site}. All rights reserved.</p>"
    '<p><a href="/privacy">Privacy policy</a> · <a href="/cookies">Cookie settings</a></p></footer>'
)


def article_html(slug: str) -> str:
    """The full HTML of one article page (nav, sidebar and footer around the article)."""
    title, paragraphs = ARTICLES[slug]
    published = PUBLISHED[slug]
    body = "\n".join(f"<p>{escape(text)}</p>" for text in paragraphs)
    # One article carries its date only in JSON-LD, so both metadata paths get exercised.
    if slug == "durable-workflow-checkpoints":
        date_meta = (
            '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Article", '
            f'"headline": "{escape(title)}", "datePublished": "{published}T08:00:00+01:00"}}</script>'
        )
    else:
        date_meta = f'<meta property="article:published_time" content="{published}T09:30:00Z">'
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} | {SITE_NAME}</title>"
        f'<link rel="canonical" href="{CANONICAL_BASE}/articles/{slug}">'
        f'<meta name="description" content="{escape(paragraphs[0][:150])}">{date_meta}'
        "<style>body { font-family: serif; }</style><script>window.analytics = [];</script>"
        f"</head><body>{_CHROME_TOP.format(site=SITE_NAME)}"
        f'<main><article><h1>{escape(title)}</h1><p class="byline">By the editors · {published}</p>'
        f"{body}</article></main>{_CHROME_BOTTOM.format(site=SITE_NAME)}</body></html>"
    )


def make_pdf(lines: tuple[str, ...] = PDF_LINES) -> bytes:
    """A minimal but valid one-page PDF whose text pypdf can extract."""
    text_ops = " ".join(
        f"BT /F1 14 Tf 72 {720 - 24 * i} Td ({line.replace('(', '[').replace(')', ']')}) Tj ET"
        for i, line in enumerate(lines)
    ).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text_ops), text_ops),
        b"<< /Title (Checkpoint storage benchmark) >>",
    ]
    return pdf_bytes(objects, info=6)


def pdf_bytes(objects: list[bytes], info: int | None = None) -> bytes:
    """A PDF file of these objects (numbered from 1, the first the catalog), with its cross-reference table:
    what tests that need a real PDF (plain, crafted, oversized) build theirs with."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info_ref = b" /Info %d 0 R" % info if info else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info_ref,
        xref_at,
    )
    return bytes(out)


class StaticSite:
    """The app plus what it saw: ``hits`` counts request paths, ``hosts`` counts Host headers,
    ``max_in_flight`` is the peak concurrency. Updated under a lock (the server runs in a thread)."""

    def __init__(self, *, slow_delay: float = 2.0) -> None:
        self.slow_delay = slow_delay
        self.hits: Counter[str] = Counter()
        self.hosts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0  # peak number of concurrent requests (for concurrency limits)
        self._lock = threading.Lock()
        self._bomb_cache: dict[int, bytes] = {}
        self._starlette = Starlette(
            routes=[
                Route("/", self._index),
                Route("/articles/{slug}", self._article),
                Route("/notes.txt", self._plain),
                Route("/readme.md", self._markdown),
                Route("/paper.pdf", self._pdf),
                Route("/huge", self._huge),
                Route("/bomb", self._bomb),
                Route("/image.png", self._image),
                Route("/empty", self._empty),
                Route("/legacy", self._legacy),
                Route("/redirect/{n:int}", self._redirect_chain),
                Route("/redirect-to", self._redirect_to),
                Route("/slow", self._slow),
            ],
            exception_handlers={HTTPException: self._http_error},
        )

        # A plain function, not a bound method: uvicorn only detects ASGI3 on coroutine functions.
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self._asgi(scope, receive, send)

        self.app = app

    @property
    def total_hits(self) -> int:
        with self._lock:
            return sum(self.hits.values())

    def reset(self) -> None:
        with self._lock:
            self.hits.clear()
            self.hosts.clear()
            self.max_in_flight = self.in_flight

    async def _asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """ASGI entry point: count the request, then hand it to Starlette."""
        if scope["type"] != "http":
            await self._starlette(scope, receive, send)
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        with self._lock:
            self.hits[scope["path"]] += 1
            self.hosts[host] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._starlette(scope, receive, send)
        finally:
            with self._lock:
                self.in_flight -= 1

    # --- content ------------------------------------------------------------------------------
    async def _index(self, request: Request) -> Response:
        items = "".join(
            f'<li><a href="/articles/{slug}">{escape(title)}</a></li>'
            for slug, (title, _) in ARTICLES.items()
        )
        return HTMLResponse(
            f"<html><head><title>{SITE_NAME}</title></head><body><ul>{items}</ul></body></html>"
        )

    async def _article(self, request: Request) -> Response:
        slug = request.path_params["slug"]
        if slug not in ARTICLES:
            raise HTTPException(404)
        body = article_html(slug).encode("utf-8")
        headers = {"content-type": "text/html; charset=utf-8"}
        encoding = request.query_params.get("encoding", "")
        if encoding == "gzip":
            body = gzip.compress(body)
            headers["content-encoding"] = "gzip"
        elif encoding == "deflate":
            body = zlib.compress(body)
            headers["content-encoding"] = "deflate"
        return Response(body, headers=headers)

    async def _plain(self, request: Request) -> Response:
        return Response(PLAIN_TEXT, media_type="text/plain")

    async def _markdown(self, request: Request) -> Response:
        return Response(MARKDOWN_TEXT, media_type="text/markdown")

    async def _pdf(self, request: Request) -> Response:
        return Response(make_pdf(), media_type="application/pdf")

    async def _image(self, request: Request) -> Response:
        return Response(PNG_BYTES, media_type="image/png")

    async def _legacy(self, request: Request) -> Response:
        # Charset only in the markup, not in the header: the decoder must find it there.
        html = LEGACY_HTML.encode("cp1252")
        return Response(html, headers={"content-type": "text/html"})

    async def _empty(self, request: Request) -> Response:
        return HTMLResponse("<html><head><title></title></head><body><div></div></body></html>")

    # --- abuse --------------------------------------------------------------------------------
    async def _huge(self, request: Request) -> Response:
        size = int(request.query_params.get("bytes", "3000000"))
        head, tail = b"<html><head><title>Huge</title></head><body>", b"</body></html>"
        chunk = ("<p>" + "filler text for the size cap " * 500 + "</p>\n").encode()

        async def body() -> AsyncIterator[bytes]:
            yield head
            sent = 0
            while sent < size:
                part = chunk[: size - sent]
                sent += len(part)
                yield part
                # uvicorn's send() does not suspend; yielding to the loop lets it notice a client
                # that hung up (after the size cap) instead of writing into a dead socket.
                await asyncio.sleep(0)
            yield tail

        headers = {}
        if request.query_params.get("declared"):
            headers["content-length"] = str(len(head) + size + len(tail))
        return StreamingResponse(body(), media_type="text/html", headers=headers)

    async def _bomb(self, request: Request) -> Response:
        size = int(request.query_params.get("bytes", "10000000"))
        if size not in self._bomb_cache:
            self._bomb_cache[size] = gzip.compress(b"<html><body><p>" + b"A" * size, compresslevel=9)
        return Response(
            self._bomb_cache[size],
            headers={"content-type": "text/html", "content-encoding": "gzip"},
        )

    async def _redirect_chain(self, request: Request) -> Response:
        n = request.path_params["n"]
        if n <= 0:
            return RedirectResponse(f"/articles/{next(iter(ARTICLES))}", status_code=302)
        # Alternate path-relative and absolute Location headers: both must be resolved correctly.
        target = str(n - 1) if n % 2 else f"{str(request.base_url).rstrip('/')}/redirect/{n - 1}"
        return RedirectResponse(target, status_code=301 if n % 3 == 0 else 302)

    async def _redirect_to(self, request: Request) -> Response:
        url = request.query_params["url"]
        status = int(request.query_params.get("status", "302"))
        return Response(status_code=status, headers={"location": url})

    async def _slow(self, request: Request) -> Response:
        delay = float(request.query_params.get("delay", self.slow_delay))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        # Sleep in slices and stop once the client is gone, so server shutdown is not held up.
        while loop.time() < deadline:
            if await request.is_disconnected():
                return Response(status_code=499)
            await asyncio.sleep(0.05)
        return HTMLResponse("<html><head><title>Slow</title></head><body><p>Finally here.</p></body></html>")

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return HTMLResponse(
            f"<html><head><title>{status}</title></head><body><h1>Page not found</h1></body></html>",
            status_code=status,
        )


def make_static_site(*, slow_delay: float = 2.0) -> StaticSite:
    """Build the site. Serve it with ``serve_app(site.app)``."""
    return StaticSite(slow_delay=slow_delay)
