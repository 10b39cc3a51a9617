"""The operator's MCP servers file (DEEPRESEARCH_MCP_SERVERS_FILE): which servers a run may use, and which of
their tools it searches or fetches with (docs/mcp.md).

The file is the ``mcpServers`` JSON that MCP hosts share (``servers`` as VS Code writes it works too): a
server is started as a command (``command``, ``args``, ``env``, ``cwd``) or reached over streamable HTTP
(``url``, ``headers``). A server takes part in research only through its ``deepresearch`` section, which maps
its tools to roles::

    "deepresearch": {
      "search": {"tool": "web_search", "query_arg": "query", "max_results_arg": "count"},
      "fetch": {"tool": "fetch", "url_arg": "url", "urls": ["https://docs.example.org/*"]},
      "timeout_seconds": 30
    }

Servers without that section are left alone (a host's file can be shared as it is). ``${NAME}`` in an
``env`` or ``headers`` value is read from this process's environment, so secrets need not be in the file.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["FetchRole", "McpConfigError", "McpServer", "SearchRole", "load_servers"]

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_FILE_BYTES = 1_000_000


class McpConfigError(ValueError):
    """The servers file cannot be used as written; the message names the file, the server and the fix."""


class _Role(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1, max_length=200, description="The server's tool for this role.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Fixed arguments sent with every call (language, region...)."
    )


class SearchRole(_Role):
    """A tool that takes a query and answers results with URLs, or texts."""

    query_arg: str = Field("query", min_length=1, description="The argument that takes the query.")
    max_results_arg: str | None = Field(
        None, description="The argument that takes how many results to return (left out when unset)."
    )


class FetchRole(_Role):
    """A tool that takes a URL and answers the page's text."""

    url_arg: str = Field("url", min_length=1, description="The argument that takes the URL.")
    urls: list[str] = Field(
        default_factory=lambda: ["http://*", "https://*"],
        description="Shell-style patterns of the URLs this tool fetches (default: every web URL).",
    )

    def handles(self, url: str) -> bool:
        return any(fnmatchcase(url, pattern) for pattern in self.urls)


class _Research(BaseModel):
    model_config = ConfigDict(extra="forbid")

    search: SearchRole | None = None
    fetch: FetchRole | None = None
    timeout_seconds: float | None = Field(None, gt=0, le=3600)

    @model_validator(mode="after")
    def _some_role(self) -> _Research:
        if self.search is None and self.fetch is None:
            raise ValueError("give it a search or a fetch role (or both)")
        return self


class _Entry(BaseModel):
    # hosts add keys of their own (type, disabled, ...): ignored, as they ignore ours
    model_config = ConfigDict(extra="ignore")

    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = Field(None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    deepresearch: _Research | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> _Entry:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either `command` (a stdio server) or `url` (streamable HTTP), not both")
        return self


@dataclass(frozen=True, slots=True)
class McpServer:
    """One server of the file with a role in research."""

    name: str
    command: str | None
    args: tuple[str, ...]
    env: dict[str, str] = field(hash=False)
    cwd: str | None
    url: str | None
    headers: dict[str, str] = field(hash=False)
    search: SearchRole | None
    fetch: FetchRole | None
    timeout_seconds: float | None

    @property
    def where(self) -> str:
        """How it is reached, for messages (never its headers or environment: they may hold secrets)."""
        return self.url or " ".join([self.command or "", *self.args]).strip()


def load_servers(path: Path) -> list[McpServer]:
    """The servers of the file with a ``deepresearch`` role, in the file's order; McpConfigError otherwise."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise McpConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes; is it the right file?")
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise McpConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise McpConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise McpConfigError(f"{path}: expected a JSON object with an `mcpServers` object")
    entries = data.get("mcpServers", data.get("servers"))
    if not isinstance(entries, dict):
        raise McpConfigError(f"{path}: expected an `mcpServers` object (name -> server)")
    servers: list[McpServer] = []
    for name, raw in entries.items():
        try:
            entry = _Entry.model_validate(raw)
        except ValidationError as exc:
            raise McpConfigError(f"{path}: server {name!r}: {_first_problem(exc)}") from None
        if entry.deepresearch is None:
            continue
        if not SERVER_NAME.match(name):
            raise McpConfigError(
                f"{path}: server name {name!r}: letters, digits, '.', '_' or '-' (at most 64), as it is "
                "shown in the run's timeline and sources"
            )
        servers.append(_server(path, name, entry, entry.deepresearch))
    return servers


def _server(path: Path, name: str, entry: _Entry, roles: _Research) -> McpServer:
    def expand(values: dict[str, str], what: str) -> dict[str, str]:
        expanded = {}
        for key, value in values.items():
            missing = [v for v in _VARIABLE.findall(value) if v not in os.environ]
            if missing:
                raise McpConfigError(
                    f"{path}: server {name!r}: {what} {key!r} names ${{{missing[0]}}}, which is not set in "
                    "the environment"
                )
            expanded[key] = _VARIABLE.sub(lambda m: os.environ[m.group(1)], value)
        return expanded

    return McpServer(
        name=name,
        command=entry.command,
        args=tuple(entry.args),
        env=expand(entry.env, "env"),
        cwd=entry.cwd,
        url=entry.url,
        headers=expand(entry.headers, "header"),
        search=roles.search,
        fetch=roles.fetch,
        timeout_seconds=roles.timeout_seconds,
    )


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
