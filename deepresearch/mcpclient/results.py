"""Reading a provider tool's answer: the hits of a search tool, the text of a fetch tool.

MCP servers answer in many shapes, so the readers are lenient about where things are and strict about what
they keep. A search answer may be structured content or JSON text (a list of results, or an object holding
one under ``results``, ``items``, ``hits``...), resource links, or plain text: blocks with a URL each become
hits, and text without any URL becomes one text result (kept as a source without a web address).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp_types import CallToolResult, EmbeddedResource, ResourceLink, TextContent, TextResourceContents

__all__ = ["Hit", "UnusableResult", "fetched_text", "search_hits"]

LIST_KEYS = ("results", "items", "hits", "documents", "data", "organic", "web", "result")
URL_KEYS = ("url", "link", "href", "uri", "source_url", "sourceUrl")
TITLE_KEYS = ("title", "name", "heading")
SNIPPET_KEYS = ("snippet", "description", "summary", "content", "text", "body")
TEXT_KEYS = ("text", "content", "markdown", "body", "page_content")
PUBLISHED_KEYS = ("published", "published_date", "publishedDate", "date", "page_age", "age")
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_LABEL = re.compile(r"^\s*(?:title|name)\s*:\s*", re.IGNORECASE)
_URL_LINE = re.compile(r"^\s*(?:url|link|source)\s*:\s*", re.IGNORECASE)
_SNIPPET_LABEL = re.compile(r"^\s*(?:description|snippet|summary|content)\s*:\s*", re.IGNORECASE)
_TITLE_CHARS = 160
_SNIPPET_CHARS = 400
_MAX_DEPTH = 3


class UnusableResult(ValueError):
    """The tool answered, but not with anything this role can use (an error result, or nothing)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: a web page (``url``) or a text the tool returned itself (``text``)."""

    title: str
    url: str | None
    snippet: str
    published: str | None = None
    text: str | None = None


def error_text(result: CallToolResult) -> str:
    return " ".join(" ".join(c.text.split()) for c in result.content if isinstance(c, TextContent))[:300]


def search_hits(result: CallToolResult) -> list[Hit]:
    """The hits of a search tool's answer, in its order; UnusableResult for an error result."""
    if result.is_error:
        raise UnusableResult(f"the tool answered an error: {error_text(result) or 'no message'}")
    if result.structured_content is not None:
        hits = _hits_in(result.structured_content, 0)
        if hits:
            return hits
    hits = []
    for block in result.content:
        if isinstance(block, ResourceLink) and _is_web(str(block.uri)):
            title = _clip(block.title or block.name, _TITLE_CHARS)
            hits.append(Hit(title, str(block.uri), block.description or ""))
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            uri = str(block.resource.uri)
            hits.append(_text_hit(block.resource.text, uri if _is_web(uri) else None))
        elif isinstance(block, TextContent):
            hits.extend(_hits_in_text(block.text))
    return [hit for hit in hits if hit.url or (hit.text or "").strip()]


def fetched_text(result: CallToolResult) -> tuple[str, str]:
    """(title, text) of a fetch tool's answer; UnusableResult for an error or an empty answer."""
    if result.is_error:
        raise UnusableResult(f"the tool answered an error: {error_text(result) or 'no message'}")
    structured = result.structured_content
    if isinstance(structured, dict) and (found := _text_of(structured)) is not None:
        return found
    title, parts = "", []
    for block in result.content:
        if isinstance(block, TextContent):
            parsed = _json(block.text)
            found = _text_of(parsed) if isinstance(parsed, dict) else None
            if found is not None:
                title = title or found[0]
                parts.append(found[1])
            else:
                parts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            parts.append(block.resource.text)
    text = "\n\n".join(part.strip() for part in parts if part.strip())
    if not text:
        raise UnusableResult("the tool answered no text")
    heading = text.splitlines()[0]
    if not title and heading.startswith("# "):  # a Markdown page names itself
        title = _clip(heading[2:], _TITLE_CHARS)
    return title, text


def _text_of(item: dict[str, Any]) -> tuple[str, str] | None:
    text = next((v for k in TEXT_KEYS if isinstance(v := item.get(k), str) and v.strip()), None)
    if text is None:
        return None
    title = next((v for k in TITLE_KEYS if isinstance(v := item.get(k), str)), "")
    return _clip(title, _TITLE_CHARS), text


def _hits_in(value: Any, depth: int) -> list[Hit]:
    """Hits in a JSON value: a list of results, or an object holding one (a level or two down)."""
    if isinstance(value, list):
        return [hit for item in value if (hit := _item_hit(item)) is not None]
    if isinstance(value, dict) and depth < _MAX_DEPTH:
        for key in LIST_KEYS:
            if key in value:
                hits = _hits_in(value[key], depth + 1)
                if hits:
                    return hits
        if (hit := _item_hit(value)) is not None:
            return [hit]
    if isinstance(value, str) and depth == 0:
        return _hits_in_text(value)
    return []


def _item_hit(item: Any) -> Hit | None:
    if isinstance(item, str):
        return Hit(item, item, "") if _is_web(item.strip()) else _text_hit(item, None)
    if not isinstance(item, dict):
        return None
    url = next((v.strip() for k in URL_KEYS if isinstance(v := item.get(k), str) and _is_web(v)), None)
    title = next((v for k in TITLE_KEYS if isinstance(v := item.get(k), str) and v.strip()), "")
    published = next((v for k in PUBLISHED_KEYS if isinstance(v := item.get(k), str) and v.strip()), None)
    if url is not None:
        snippet = next((v for k in SNIPPET_KEYS if isinstance(v := item.get(k), str)), "")
        return Hit(_clip(title or url, _TITLE_CHARS), url, _clip(snippet, _SNIPPET_CHARS), published)
    text = next((v for k in TEXT_KEYS if isinstance(v := item.get(k), str) and v.strip()), None)
    if text is None:
        return None
    hit = _text_hit(text, None)
    return Hit(_clip(title, _TITLE_CHARS) or hit.title, None, hit.snippet, published, text)


def _hits_in_text(text: str) -> list[Hit]:
    parsed = _json(text)
    if parsed is not None:
        return _hits_in(parsed, 1)
    if not _URL.search(text):
        return [_text_hit(text, None)] if text.strip() else []
    hits = []
    for block in re.split(r"\n\s*\n", text):
        urls = _URL.findall(block)
        if not urls:
            continue
        url = urls[0].rstrip(".,;:")
        lines = [line for line in block.splitlines() if line.strip()]
        title = next((_LABEL.sub("", line) for line in lines if _LABEL.match(line)), "")
        rest = [line for line in lines if not _URL_LINE.match(line) and not _LABEL.match(line)]
        if not title and rest:  # the block's first line names it (less its address, when it has it)
            title, rest = _URL.sub("", rest[0]), rest[1:]
        snippet = " ".join(_URL.sub("", " ".join(_SNIPPET_LABEL.sub("", line) for line in rest)).split())
        hits.append(Hit(_clip(title.strip(" #*-") or url, _TITLE_CHARS), url, _clip(snippet, _SNIPPET_CHARS)))
    return hits


def _text_hit(text: str, url: str | None) -> Hit:
    lines = [line.strip(" #*-\t") for line in text.strip().splitlines() if line.strip(" #*-\t")]
    title = _clip(lines[0] if lines else "", _TITLE_CHARS)
    return Hit(title or "untitled text", url, _clip(" ".join(text.split()), _SNIPPET_CHARS), None, text)


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        return None


def _is_web(url: str) -> bool:
    return bool(re.match(r"^https?://[^\s/]+", url.strip()))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
