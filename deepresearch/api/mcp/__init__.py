"""deepresearch as an MCP server (docs/mcp.md): the tools and resources (tools.py, their results in
models.py), over stdio (stdio.py, ``deepresearch mcp``) and streamable HTTP at /mcp (http.py)."""
