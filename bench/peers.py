"""The benchmark's external world: the scripted model, search server and web site of peers/, run in
a process of their own (so they never compete for the GIL of the process being measured), each answering
after a fixed latency and recording the interval of every call it answers.

    python -m bench.peers            # prints one JSON line with the URLs, then serves until stdin closes

The control routes (``/__bench/...`` on the control port) set the latencies and return the recorded
intervals. Everything binds to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

ROOT = Path(__file__).resolve().parent.parent

# The latencies of issue 13's measurements: a model call 400 ms, a search 150 ms, a page fetch 100 ms.
DEFAULT_LATENCIES = {"llm": 0.4, "search": 0.15, "fetch": 0.1}
PAGE_COUNT = 400
"""Distinct pages on the bench site; search hits point at them by a hash of the query."""


@dataclass(frozen=True, slots=True)
class Interval:
    """One external call as its peer saw it: from the request's arrival to the last byte sent."""

    peer: str
    start: float
    end: float


@dataclass
class CallLog:
    """Intervals of the answered calls (guarded: the three servers run on three threads)."""

    latencies: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_LATENCIES))
    intervals: list[Interval] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, interval: Interval) -> None:
        with self.lock:
            self.intervals.append(interval)

    def since(self, start: float) -> list[Interval]:
        with self.lock:
            return [i for i in self.intervals if i.end >= start]


class Timed:
    """ASGI wrapper: calls of ``peer`` wait its latency, then the scripted app answers; the interval from
    arrival to the response's last byte is recorded. Other paths (health checks, model lists) pass
    untimed and unrecorded: they are not the run's external calls."""

    def __init__(self, app: ASGIApp, peer: str, log: CallLog, timed_prefixes: tuple[str, ...]) -> None:
        self.app, self.peer, self.log, self.prefixes = app, peer, log, timed_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        start = time.time()
        try:
            await asyncio.sleep(self.log.latencies[self.peer])
            await self.app(scope, receive, send)
        finally:
            self.log.add(Interval(self.peer, start, time.time()))


def page_slug(n: int) -> str:
    return f"page-{n:04d}"


def bench_page_html(n: int) -> str:
    """A typical article page (~80 KB of HTML: navigation, related links, comments, scripts around the
    text), made of the static site's real articles so screening and the report have prose to work on."""
    from peers.static_site import ARTICLES, CANONICAL_BASE, SITE_NAME

    slugs = list(ARTICLES)
    title, paragraphs = ARTICLES[slugs[n % len(slugs)]]
    shift = n % len(paragraphs)
    body = list(paragraphs[shift:] + paragraphs[:shift])
    body.append(f"This is part {n} of the series; measurement {n * 37 % 101} was taken on day {n % 28 + 1}.")

    def submenu(i: int) -> str:
        return "".join(f'<li><a href="/topics/{i}/{j}">Sub-topic {j}</a></li>' for j in range(8))

    nav = "".join(
        f'<li class="menu-item"><a href="/topics/{i}" title="All posts about topic {i}">Topic {i}</a>'
        f'<ul class="sub">{submenu(i)}</ul></li>'
        for i in range(40)
    )
    related = "".join(
        f'<li><a href="/pages/{page_slug((n + i) % PAGE_COUNT)}">Related reading {i}</a></li>'
        for i in range(30)
    )
    comments = "".join(
        f'<div class="comment"><b>reader{i}</b><p>Thanks, this was useful ({i}).</p></div>' for i in range(60)
    )
    text = "\n".join(f"<p>{escape(p)}</p>" for p in body)
    script = "<script>window.dataLayer=[];" + "function t(a){return a}" * 600 + "</script>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}, part {n} | {SITE_NAME}</title>"
        f'<link rel="canonical" href="{CANONICAL_BASE}/pages/{page_slug(n)}">'
        f'<meta property="article:published_time" content="2024-0{n % 9 + 1}-1{n % 10}T09:30:00Z">'
        f"<style>{'.c{margin:0;padding:1px}' * 600}</style>{script}</head><body>"
        f'<header><a href="/" class="logo">{SITE_NAME}</a><nav><ul>{nav}</ul></nav></header>'
        f"<main><article><h1>{escape(title)}, part {n}</h1>{text}</article></main>"
        f'<aside class="related"><h3>Related posts</h3><ul>{related}</ul></aside>'
        f'<section class="comments">{comments}</section>'
        f"<footer><p>© 2024 {SITE_NAME}. All rights reserved.</p></footer></body></html>"
    )


def bench_site(static_app: ASGIApp) -> ASGIApp:
    """The static site plus ``/pages/page-NNNN``: PAGE_COUNT distinct typical pages."""
    cache: dict[int, bytes] = {}

    async def page(request: Request) -> Response:
        slug = request.path_params["slug"]
        try:
            n = int(slug.removeprefix("page-"))
        except ValueError:
            return HTMLResponse("<html><body>not found</body></html>", status_code=404)
        if not 0 <= n < PAGE_COUNT:
            return HTMLResponse("<html><body>not found</body></html>", status_code=404)
        if n not in cache:
            cache[n] = bench_page_html(n).encode()
        return Response(cache[n], media_type="text/html; charset=utf-8")

    pages = Starlette(routes=[Route("/pages/{slug}", page)])

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        target = pages if str(scope.get("path", "")).startswith("/pages/") else static_app
        await target(scope, receive, send)

    return app


def search_hits(site_url: str) -> Callable[[str, int], list[dict[str, Any]]]:
    """Search answers: ``max_results`` distinct bench pages chosen by a hash of the query."""
    from peers.static_site import ARTICLES

    titles = [title for title, _ in ARTICLES.values()]
    snippets = [paragraphs[0][:200] for _, paragraphs in ARTICLES.values()]

    def results_for(query: str, max_results: int) -> list[dict[str, Any]]:
        seed = int(hashlib.sha256(query.encode()).hexdigest()[:8], 16)
        hits = []
        for i in range(max_results):
            n = (seed + i * 7919) % PAGE_COUNT
            hits.append(
                {
                    "title": f"{titles[n % len(titles)]}, part {n}",
                    "url": f"{site_url}/pages/{page_slug(n)}",
                    "snippet": snippets[n % len(snippets)],
                    "published": "2024-05-01",
                }
            )
        return hits

    return results_for


def control_app(log: CallLog) -> Starlette:
    async def intervals(request: Request) -> Response:
        since = float(request.query_params.get("since", "0"))
        return JSONResponse([[i.peer, i.start, i.end] for i in log.since(since)])

    async def latencies(request: Request) -> Response:
        given = await request.json()
        for peer, value in given.items():
            if peer not in log.latencies or not 0 <= float(value) <= 10:
                return JSONResponse({"detail": f"bad latency {peer}={value}"}, status_code=422)
            log.latencies[peer] = float(value)
        return JSONResponse(log.latencies)

    return Starlette(
        routes=[
            Route("/__bench/intervals", intervals),
            Route("/__bench/latencies", latencies, methods=["POST"]),
        ]
    )


def serve_peers() -> None:
    """Run the peers until stdin closes (the parent exits or closes the pipe)."""
    sys.path.insert(0, str(ROOT))
    from peers import serve_app
    from peers.openai_server import make_openai_server
    from peers.research_llm import ResearchResponder
    from peers.search_server import make_search_server
    from peers.static_site import make_static_site

    log = CallLog()
    llm = make_openai_server()
    # reflection asks for another round: a default run does its two research loops
    llm.responder = ResearchResponder(reflection_sufficient=False)
    site = make_static_site(slow_delay=0.5)
    with ExitStack() as stack:
        site_url = stack.enter_context(serve_app(Timed(bench_site(site.app), "fetch", log, ("/pages/",))))
        search = make_search_server(site_base_url=site_url)
        search.results_for = search_hits(site_url)
        search_url = stack.enter_context(serve_app(Timed(search.app, "search", log, ("/search",))))
        llm_url = stack.enter_context(serve_app(Timed(llm, "llm", log, ("/v1/chat/completions",))))
        control_url = stack.enter_context(serve_app(control_app(log)))
        urls = {"llm": llm_url, "search": search_url, "site": site_url, "control": control_url}
        sys.stdout.write(json.dumps(urls) + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # blocks until the parent closes our stdin


@dataclass
class Peers:
    """The parent's handle on the peers process."""

    urls: dict[str, str]
    process: subprocess.Popen[str]

    def set_latencies(self, **latencies: float) -> None:
        httpx.post(f"{self.urls['control']}/__bench/latencies", json=latencies, timeout=10).raise_for_status()

    def intervals(self, since: float = 0.0) -> list[Interval]:
        response = httpx.get(f"{self.urls['control']}/__bench/intervals", params={"since": since}, timeout=30)
        response.raise_for_status()
        return [Interval(p, s, e) for p, s, e in response.json()]


@contextmanager
def peers_process() -> Iterator[Peers]:
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.peers"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # bounded: the child prints this line or exits
        if not line:
            raise RuntimeError(f"the peers process exited with {process.wait(timeout=10)}")
        yield Peers(json.loads(line), process)
    finally:
        if process.stdin:
            process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


if __name__ == "__main__":
    serve_peers()
