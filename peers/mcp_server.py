"""A scripted MCP server for the provider tests, written with the MCP SDK and run over stdio:
``python -m peers.mcp_server`` (working directory: the repository).

Tools:
    search(query, limit)  structured results with URLs on the scripted site (FIXTURE_SITE), as the scripted
                          search server ranks them
    text_search(query)    the same hits as plain text blocks (``Title:`` / ``URL:`` / ``Description:``)
    notes(query)          texts without any URL (sources that have no web address)
    fetch(url)            the text of a scripted site article (no network: read from the catalogue)
    slow(query)           answers after 30 s (a timeout)
    broken(query)         answers an error

Every call is appended, one JSON line, to the file named by MCP_FIXTURE_CALLS before it is answered, so a
test counts exactly what reached the server.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from peers.search_server import ScriptedSearch
from peers.static_site import ARTICLES

server = MCPServer("scripted-research-tools")
_search = ScriptedSearch(site_base_url=os.environ.get("FIXTURE_SITE", "https://fieldnotes.example"))
NOTES = (
    "Durable execution in practice\n\n"
    "Durable execution avoids repeating side effects by recording a checkpoint after each completed step: "
    "a workflow that resumes after a crash starts from its latest checkpoint instead of the beginning.\n\n"
    "Every external call is keyed by an idempotency key, so a retried step returns the recorded result "
    "instead of calling the payment or email service again; this is how durable execution avoids "
    "repeating side effects that already happened.\n\n"
    "The limitation is that a call in flight when the process dies has no recorded result, so durable "
    "execution may repeat that one side effect unless the service itself deduplicates by the key."
)


def _record(tool: str, **arguments: Any) -> None:
    path = os.environ.get("MCP_FIXTURE_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as calls:
            calls.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def search(query: str, limit: int = 5) -> dict[str, Any]:
    """Search the scripted site."""
    _record("search", query=query, limit=limit)
    return {"results": _search.default_results(query, limit)}


@server.tool()
def text_search(query: str) -> str:
    """The same hits, as text."""
    _record("text_search", query=query)
    hits = _search.default_results(query, 5)
    return "\n\n".join(f"Title: {h['title']}\nURL: {h['url']}\nDescription: {h['snippet']}" for h in hits)


@server.tool()
def notes(query: str) -> str:
    """Notes without a web address."""
    _record("notes", query=query)
    return NOTES


@server.tool()
def fetch(url: str) -> str:
    """An article's text."""
    _record("fetch", url=url)
    slug = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    if slug not in ARTICLES:
        raise ToolError(f"no article at {url}")
    title, paragraphs = ARTICLES[slug]
    return "\n\n".join([f"# {title}", *paragraphs])


@server.tool()
async def slow(query: str) -> str:
    """Answers after 30 s."""
    _record("slow", query=query)
    await asyncio.sleep(30)
    return "too late"


@server.tool()
def broken(query: str) -> str:
    """Always an error."""
    _record("broken", query=query)
    raise ToolError("scripted failure")


if __name__ == "__main__":
    server.run("stdio")
