"""MCP servers as research providers: the operator's servers file, connections, and the search and fetch
roles a run uses through its receipts (docs/mcp.md).

This package's front door is light: the MCP SDK is imported only when a servers file is configured."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from deepresearch.receipts.runtime import StageError

if TYPE_CHECKING:
    from config import Settings
    from deepresearch.mcpclient.roles import McpTools
    from deepresearch.receipts.runtime import ToolRuntime
    from deepresearch.web.fetch import FetchedPage

__all__ = ["PageFetcher", "open_mcp_tools"]


class PageFetcher(Protocol):
    """What the fetch tool asks of a fetcher (WebFetcher, or McpFetcher in front of it)."""

    async def fetch(self, url: str) -> FetchedPage: ...

    async def aclose(self) -> None: ...


def open_mcp_tools(settings: Settings, runtime: ToolRuntime) -> McpTools | None:
    """The run execution's provider servers, or None without DEEPRESEARCH_MCP_SERVERS_FILE; a file that
    cannot be used (changed since start-up) fails the run's first stage with its reason."""
    if settings.mcp_servers_file is None:
        return None
    from deepresearch.mcpclient.roles import McpTools
    from deepresearch.mcpclient.servers import McpConfigError

    try:
        return McpTools.from_settings(settings, runtime)
    except McpConfigError as exc:
        raise StageError("search_web", f"DEEPRESEARCH_MCP_SERVERS_FILE: {exc}") from None
