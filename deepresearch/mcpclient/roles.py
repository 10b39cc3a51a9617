"""Provider MCP servers in a run: search providers for the search chain, and the fetcher that hands URLs to
an MCP fetch tool (docs/mcp.md).

Every call of a server's tool is a paid call like any other: it goes through the run's ToolRuntime, so it
has its own receipt (``mcp.search`` / ``mcp.fetch``, a sub-call of the search or fetch call that asked for
it), is never made again once it succeeded (a resume, a retry of the search that asked for it, a fork), is
refused past the run's deadline or after a cancel, and shows in the timeline with the server's name. A
server that fails, answers an error or does not answer in time is a provider failure with its reason: the
search chain goes on to its next provider, a fetch records the URL as failed.

A search tool that answers texts instead of URLs gives sources without a web address: each text is stored
once in the run's text store and named ``mcp://<server>/text/<sha256>``, which this fetcher reads back.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from config import Settings
from deepresearch.mcpclient import PageFetcher
from deepresearch.mcpclient.connection import McpConnection, McpFailure
from deepresearch.mcpclient.results import Hit, UnusableResult, fetched_text, search_hits
from deepresearch.mcpclient.servers import McpServer, load_servers
from deepresearch.receipts.runtime import RunCancelled, ToolCall, ToolRuntime
from deepresearch.receipts.specs import MCP_FETCH, MCP_SEARCH
from deepresearch.search.base import ProviderError, SearchResult
from deepresearch.store import DATABASE_UNAVAILABLE, LeaseLost, utcnow
from deepresearch.web.extract import truncate
from deepresearch.web.fetch import FetchedPage, FetchError
from stages import REPORT_STAGES

__all__ = ["MCP_TEXT_SCHEME", "RUN_STOPS", "McpFetcher", "McpSearchProvider", "McpTools"]

MCP_TEXT_SCHEME = "mcp://"
SEARCH_STAGE = next(s.key for s in REPORT_STAGES if s.tool_name == "web.search")
FETCH_STAGE = next(s.key for s in REPORT_STAGES if s.tool_name == "web.fetch")
SEARCH_RECEIPT = "deepresearch:mcp_search:v1"
FETCH_RECEIPT = "deepresearch:mcp_fetch:v1"
RUN_STOPS: tuple[type[BaseException], ...] = (RunCancelled, LeaseLost, *DATABASE_UNAVAILABLE)
"""What a receipted call raises that is no provider's failure: the run stops (a cancel, a budget, a lost
lease, the database gone). The search chain lets these through."""
_TEXT_URL = re.compile(r"^mcp://([A-Za-z0-9._-]+)/text/([0-9a-f]{64})$")


class McpTools:
    """The run execution's provider servers (DEEPRESEARCH_MCP_SERVERS_FILE), connected on first use."""

    passthrough = RUN_STOPS
    """For the search chain: what the providers' receipted calls raise that stops the run."""

    def __init__(self, servers: Sequence[McpServer], runtime: ToolRuntime, timeout: float, max_chars: int):
        self.runtime = runtime
        self.max_chars = max_chars
        self.connections = {server.name: McpConnection(server, timeout) for server in servers}

    @classmethod
    def from_settings(cls, settings: Settings, runtime: ToolRuntime) -> McpTools:
        """The servers of the settings' file; McpConfigError when it cannot be used."""
        path = settings.mcp_servers_file
        servers = load_servers(path) if path is not None else []
        return cls(servers, runtime, settings.mcp_timeout_seconds, settings.source_max_chars)

    def search_providers(self) -> list[McpSearchProvider]:
        """The servers with a search role, in the file's order (the chain's ``mcp`` entry)."""
        return [McpSearchProvider(self, c) for c in self.connections.values() if c.server.search is not None]

    def fetcher(self, web: PageFetcher) -> PageFetcher:
        """``web`` with the servers' fetch roles (and stored texts) in front of it, when there are any."""
        if not self.connections:
            return web
        return McpFetcher(self, web)

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))

    async def store_text(self, text: str) -> str:
        return await self.runtime.store.put_text(self.runtime.run_id, text, fence=self.runtime.fence)


class McpSearchProvider:
    """A search role, as a provider of the search chain (``mcp:<server>``)."""

    def __init__(self, tools: McpTools, connection: McpConnection) -> None:
        self.tools = tools
        self.connection = connection
        self.server = connection.server
        self.name = f"mcp:{self.server.name}"

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        role = self.server.search
        assert role is not None
        arguments = {**role.arguments, role.query_arg: query}
        if role.max_results_arg:
            arguments[role.max_results_arg] = max_results

        async def run() -> list[SearchResult]:
            try:
                hits = search_hits(await self.connection.call(role.tool, arguments))
            except UnusableResult as exc:
                raise McpFailure(self.server.name, f"{role.tool}: {exc}") from None
            return [await self._result(hit) for hit in hits[:max_results]]

        try:
            args = {"server": self.server.name, "tool": role.tool, "arguments": arguments}
            runtime = self.tools.runtime
            outcome = await runtime.call(
                MCP_SEARCH,
                runtime.receipt_id(MCP_SEARCH, SEARCH_RECEIPT, args),
                ToolCall(SEARCH_STAGE, args, run, label=f"{self.name} search: {query}"),
            )
        except McpFailure as exc:
            raise ProviderError(self.name, exc.reason) from None
        value: list[SearchResult] = outcome.value
        return value

    async def _result(self, hit: Hit) -> SearchResult:
        if hit.url is not None:
            return SearchResult(
                title=hit.title, url=hit.url, snippet=hit.snippet, published=hit.published, provider=self.name
            )
        # a text without a web address: stored once, read back by McpFetcher when the run fetches it
        text = truncate((hit.text or "").strip(), self.tools.max_chars)
        digest = await self.tools.store_text(text)
        return SearchResult(
            title=hit.title,
            url=f"{MCP_TEXT_SCHEME}{self.server.name}/text/{digest}",
            snippet=hit.snippet,
            published=hit.published,
            provider=self.name,
        )


@dataclass(slots=True)
class _Fetched:
    title: str
    text_sha256: str
    chars: int
    text: str | None = None
    """Set when fetched now; read back from the text store when the receipt answers."""

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "text_sha256": self.text_sha256, "chars": self.chars}


class McpFetcher:
    """Hands a URL to the first server whose fetch role takes it, reads stored MCP texts, and leaves every
    other URL to the web fetcher behind it."""

    def __init__(self, tools: McpTools, web: PageFetcher) -> None:
        self.tools = tools
        self.web = web

    async def aclose(self) -> None:
        await self.web.aclose()

    async def fetch(self, url: str) -> FetchedPage:
        if url.startswith(MCP_TEXT_SCHEME):
            return await self._stored_text(url)
        for connection in self.tools.connections.values():
            role = connection.server.fetch
            if role is not None and role.handles(url):
                return await self._fetch_with(connection, url)
        return await self.web.fetch(url)

    async def _stored_text(self, url: str) -> FetchedPage:
        match = _TEXT_URL.match(url)
        texts = await self.tools.runtime.store.get_texts([match.group(2)]) if match else {}
        if not match or not texts:
            raise FetchError(url, "empty", f"{url}: no such MCP search text in this run's store")
        server = match.group(1)
        return _page(url, "", texts[match.group(2)], f"mcp:{server}")

    async def _fetch_with(self, connection: McpConnection, url: str) -> FetchedPage:
        server, role = connection.server, connection.server.fetch
        assert role is not None
        arguments = {**role.arguments, role.url_arg: url}
        name = f"mcp:{server.name}"

        async def run() -> _Fetched:
            try:
                title, text = fetched_text(await connection.call(role.tool, arguments))
            except UnusableResult as exc:
                raise McpFailure(server.name, f"{role.tool}: {exc}") from None
            text = truncate(text.strip(), self.tools.max_chars)
            return _Fetched(title, await self.tools.store_text(text), len(text), text)

        try:
            args = {"server": server.name, "tool": role.tool, "arguments": arguments}
            runtime = self.tools.runtime
            spec = MCP_FETCH.decoding(lambda d: _Fetched(d["title"], d["text_sha256"], d["chars"]))
            outcome = await runtime.call(
                spec,
                runtime.receipt_id(spec, FETCH_RECEIPT, args),
                ToolCall(FETCH_STAGE, args, run, label=f"{name} fetch: {url}"),
            )
        except McpFailure as exc:
            # transient (not a permanent fetch failure): the URL fails now, a resume asks the server again
            raise FetchError(url, "mcp", str(exc)) from None
        fetched: _Fetched = outcome.value
        text = fetched.text
        if text is None:
            text = (await self.tools.runtime.store.get_texts([fetched.text_sha256])).get(fetched.text_sha256)
            if text is None:
                raise FetchError(url, "mcp", f"{name}: the text it fetched is missing from the database")
        return _page(url, fetched.title, text, name)


def _page(url: str, title: str, text: str, extractor: str) -> FetchedPage:
    data = text.encode("utf-8")
    return FetchedPage(
        url=url,
        requested_url=url,
        status_code=200,
        content_type="text/plain",
        title=title,
        text=text,
        canonical_url=None,
        published=None,
        byte_size=len(data),
        extractor=extractor,
        redirects=[],
        fetched_at=utcnow(),
    )
