"""A scripted search backend speaking four provider dialects, served for real by ``serve_app``.

Routes ([provider_style] as recorded in ``calls``):
    [generic] GET  /search?q=&max_results=
              -> {"results": [{title, url, snippet, published}]}
    [searxng] GET  /searxng/search?q=&format=json
              -> {"query", "results": [{title, url, content, publishedDate}]}
    [tavily]  POST /tavily/search  {query, max_results, api_key | Authorization: Bearer}
              -> {"query", "results": [{title, url, content, published_date}]}
    [brave]   GET  /brave/res/v1/web/search?q=&count=  (X-Subscription-Token)
              -> {"type": "search", "web": {"results": [{title, url, description, page_age}]}}
              (no "web" section at all when nothing matched, like the real API)

Every request is recorded (under a lock, before any scripted latency or failure), so tests can
count exactly how often each provider was called. ``results_for(query, n)`` produces the hits in a
neutral shape (title/url/snippet/published); each route reshapes them into its dialect.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DEFAULT_SITE_BASE_URL = "https://fieldnotes.example"
DEFAULT_API_KEY = "scripted-key"
STYLES = ("generic", "searxng", "tavily", "brave")


def _keywords(text: str) -> frozenset[str]:
    return frozenset(text.split())


# slug -> (title, snippet, published, keywords). Slugs match peers/static_site.py ARTICLES.
CATALOGUE: dict[str, tuple[str, str, str, frozenset[str]]] = {
    "sqlite-wal": (
        "How SQLite's write-ahead log keeps readers and writers apart",
        "In WAL mode a writer only ever appends, so readers keep a consistent snapshot while a "
        "single writer commits; checkpoints copy frames back into the database file.",
        "2024-03-18",
        _keywords(
            "sqlite wal write ahead log logging journal "
            "readers writers concurrency database checkpoint checkpoints busy durability"
        ),
    ),
    "durable-workflow-checkpoints": (
        "Durable workflow checkpoints: resuming work without repeating it",
        "A long-running workflow will be interrupted; durable checkpoints record each completed "
        "step so a restart resumes where it stopped instead of repeating side effects.",
        "2024-06-02",
        _keywords(
            "durable workflow workflows checkpoint checkpoints checkpointing resume resuming "
            "restart idempotent idempotency retries long running side effects"
        ),
    ),
    "heat-pumps-cold-climates": (
        "Heat pumps in cold climates: what the field data says",
        "Field measurements from northern Europe and Canada show modern air-source heat pumps "
        "keep useful efficiency well below freezing.",
        "2023-11-20",
        _keywords(
            "heat pump pumps cold climate climates winter freezing "
            "efficiency cop air source heating canada europe field data"
        ),
    ),
}

_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class ScriptedRequest:
    """One request as received: dialect, query, requested size, query params and auth credential."""

    style: str
    query: str
    max_results: int | None
    params: dict[str, str]
    credential: str | None


@dataclass
class _Override:
    status: int
    body: bytes
    content_type: str
    remaining: int
    style: str | None = None


@dataclass
class ScriptedSearch:
    """The app and what it saw. Mutate ``results_for``/``latency`` freely between (or during) tests."""

    site_base_url: str = DEFAULT_SITE_BASE_URL
    api_key: str = DEFAULT_API_KEY
    latency: float = 0.0
    results_for: Callable[[str, int], list[dict[str, Any]]] = field(init=False)
    app: Starlette = field(init=False, repr=False)
    requests: list[ScriptedRequest] = field(default_factory=list, init=False)
    _overrides: list[_Override] = field(default_factory=list, init=False)
    in_flight: int = field(default=0, init=False)
    max_in_flight: int = field(default=0, init=False)
    """Peak number of requests being answered at once: proves a fan-out really runs in parallel."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.results_for = self.default_results
        # the Starlette instance itself is the ASGI app (uvicorn would take a bound method for ASGI2)
        self.app = Starlette(
            routes=[
                Route("/search", self._generic, methods=["GET"]),
                Route("/searxng/search", self._searxng, methods=["GET"]),
                Route("/tavily/search", self._tavily, methods=["POST"]),
                Route("/brave/res/v1/web/search", self._brave, methods=["GET"]),
            ]
        )

    # --- what tests use -----------------------------------------------------------------------
    @property
    def calls(self) -> list[tuple[str, str]]:
        """(provider_style, query) for every request received, in order (a snapshot)."""
        with self._lock:
            return [(r.style, r.query) for r in self.requests]

    def calls_for(self, style: str) -> list[str]:
        return [query for s, query in self.calls if s == style]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._overrides.clear()
        self.latency = 0.0
        self.results_for = self.default_results

    def fail_next(self, status: int, times: int = 1, *, style: str | None = None) -> None:
        """The next ``times`` requests (of ``style``, or of any style) answer HTTP ``status``."""
        body = json.dumps({"error": f"scripted failure {status}"}).encode()
        self.respond_next(body, status=status, times=times, style=style)

    def respond_next(
        self,
        body: bytes | str | dict[str, Any] | list[Any],
        *,
        status: int = 200,
        content_type: str = "application/json",
        times: int = 1,
        style: str | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with exactly this body (malformed payloads...)."""
        if style is not None and style not in STYLES:
            raise ValueError(f"unknown style {style!r}")
        if isinstance(body, dict | list):
            raw = json.dumps(body).encode()
        elif isinstance(body, str):
            raw = body.encode()
        else:
            raw = body
        with self._lock:
            self._overrides.append(_Override(status, raw, content_type, times, style))

    def default_results(self, query: str, max_results: int) -> list[dict[str, Any]]:
        """Catalogue articles ranked by keyword overlap with the query (no overlap, no hit)."""
        words = set(_WORD_RE.findall(query.lower()))
        scored = [
            (len(words & keywords), slug)
            for slug, (_title, _snippet, _published, keywords) in CATALOGUE.items()
            if words & keywords
        ]
        scored.sort(key=lambda item: (-item[0], item[1]))
        base = self.site_base_url.rstrip("/")
        return [
            {
                "title": CATALOGUE[slug][0],
                "url": f"{base}/articles/{slug}",
                "snippet": CATALOGUE[slug][1],
                "published": CATALOGUE[slug][2],
            }
            for _score, slug in scored[:max_results]
        ]

    # --- plumbing -----------------------------------------------------------------------------
    async def _receive(
        self, style: str, query: str, max_results: int | None, request: Request, credential: str | None
    ) -> tuple[Response | None, list[dict[str, Any]]]:
        """Record the call, apply latency, then either a scripted override or the responder's hits."""
        override: _Override | None = None
        with self._lock:
            self.requests.append(
                ScriptedRequest(style, query, max_results, dict(request.query_params), credential)
            )
            for candidate in self._overrides:
                if candidate.style in (None, style):
                    override = candidate
                    candidate.remaining -= 1
                    if candidate.remaining <= 0:
                        self._overrides.remove(candidate)
                    break
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency > 0:
                await asyncio.sleep(self.latency)
        finally:
            with self._lock:
                self.in_flight -= 1
        if override is not None:
            return Response(override.body, override.status, media_type=override.content_type), []
        if credential is not None and credential != self.api_key:
            return JSONResponse({"error": "invalid api key"}, status_code=401), []
        hits = self.results_for(query, max_results if max_results is not None else 10)
        return None, hits[: max_results if max_results is not None else len(hits)]

    @staticmethod
    def _int(value: object) -> int | None:
        try:
            return int(str(value))
        except ValueError:
            return None

    async def _generic(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        size = self._int(request.query_params.get("max_results", "10"))
        early, hits = await self._receive("generic", query, size, request, None)
        return early or JSONResponse({"results": hits})

    async def _searxng(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        early, hits = await self._receive("searxng", query, None, request, None)
        if early is not None:
            return early
        if request.query_params.get("format") != "json":
            return Response("format not allowed", status_code=403)  # what SearXNG does by default
        results = [
            {
                "title": h.get("title"),
                "url": h.get("url"),
                "content": h.get("snippet"),
                "publishedDate": h.get("published"),
                "engine": "scripted",
            }
            for h in hits
        ]
        return JSONResponse({"query": query, "number_of_results": len(results), "results": results})

    async def _tavily(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {}
        auth = request.headers.get("authorization", "")
        credential = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None
        credential = credential or str(body.get("api_key") or "")
        early, hits = await self._receive(
            "tavily", str(body.get("query", "")), self._int(body.get("max_results", 5)), request, credential
        )
        if early is not None:
            return early
        results = [
            {
                "title": h.get("title"),
                "url": h.get("url"),
                "content": h.get("snippet"),
                "published_date": h.get("published"),
                "score": 0.9,
            }
            for h in hits
        ]
        return JSONResponse({"query": body.get("query"), "results": results, "response_time": 0.01})

    async def _brave(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        size = self._int(request.query_params.get("count", "20"))
        credential = request.headers.get("x-subscription-token", "")
        early, hits = await self._receive("brave", query, size, request, credential)
        if early is not None:
            return early
        if not hits:
            return JSONResponse({"type": "search", "query": {"original": query}})  # Brave omits "web"
        results = [
            {
                "title": h.get("title"),
                "url": h.get("url"),
                "description": h.get("snippet"),
                "page_age": h.get("published"),
                "type": "search_result",
            }
            for h in hits
        ]
        return JSONResponse({"type": "search", "web": {"type": "search", "results": results}})


def make_search_server(site_base_url: str | None = None) -> ScriptedSearch:
    """A fresh scripted search backend; hits point at ``{site_base_url}/articles/<slug>``."""
    return ScriptedSearch(site_base_url=site_base_url or DEFAULT_SITE_BASE_URL)
