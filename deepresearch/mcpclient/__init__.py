"""MCP servers as research providers: the operator's servers file, connections, and the search and fetch
roles a run uses through its receipts (docs/mcp.md)."""

from __future__ import annotations

from deepresearch.mcpclient.connection import McpConnection, McpFailure
from deepresearch.mcpclient.roles import MCP_TEXT_SCHEME, McpFetcher, McpSearchProvider, McpTools, PageFetcher
from deepresearch.mcpclient.servers import McpConfigError, McpServer, load_servers

__all__ = [
    "MCP_TEXT_SCHEME",
    "McpConfigError",
    "McpConnection",
    "McpFailure",
    "McpFetcher",
    "McpSearchProvider",
    "McpServer",
    "McpTools",
    "PageFetcher",
    "load_servers",
]
