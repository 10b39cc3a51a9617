"""Web fetcher with a strict SSRF guard.

Every hop (the first request and each redirect) goes through the same steps: syntactic URL check,
one DNS resolution whose every answer must be public (unless the host is allowlisted), then a
connection pinned to those addresses (see :mod:`deepresearch.web.netguard`). Bodies are streamed and
capped after decompression; text extraction runs in a worker process (:mod:`deepresearch.cpu`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import weakref
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

import httpx

from config import Settings
from deepresearch.cpu import CpuPool, CpuWorkerLost
from deepresearch.web.extract import (
    ALLOWED_CONTENT_TYPES,
    ExtractionError,
    extract_document,
    truncate,
)
from deepresearch.web.netguard import (
    AllowList,
    BlockedURLError,
    CheckedURL,
    FetchError,
    PinnedTransport,
    Resolver,
    check_url_allowed,
    pinned,
    resolve_and_check,
)

__all__ = ["BlockedURLError", "FetchError", "FetchedPage", "WebFetcher", "check_url_allowed"]

logger = logging.getLogger(__name__)

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/pdf;q=0.8"


@dataclass(slots=True)
class FetchedPage:
    url: str  # final URL after redirects
    requested_url: str
    status_code: int
    content_type: str
    title: str
    text: str  # main text, truncated to settings.source_max_chars
    canonical_url: str | None
    published: str | None  # YYYY-MM-DD if found
    byte_size: int  # decoded (decompressed) body bytes
    extractor: str  # "trafilatura" | "readability" | "beautifulsoup" | "plain" | "pdf"
    redirects: list[str]  # URLs that answered with a redirect, in order (starts with requested_url)
    fetched_at: str  # ISO-8601 UTC
    text_sha256: str | None = None
    """Where the text is stored once (the run store's content-addressed texts); set by the fetch tool. A
    page read back from its receipt has only this, and ``text`` is empty."""
    chars: int | None = None
    """len(text) when the page was fetched (kept when the text itself is left out)."""

    def __post_init__(self) -> None:
        if self.chars is None:
            self.chars = len(self.text)

    def to_dict(self, *, with_text: bool = True) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if not with_text:
            del data["text"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FetchedPage:
        known = {field.name for field in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["redirects"] = list(values.get("redirects") or [])
        values.setdefault("text", "")  # receipts since the text store keep the hash, not the text
        return cls(**values)


class _BoundedDecoder:
    """Content-Encoding decoder that never produces more than ``limit`` bytes in total.

    httpx's own decoders inflate a whole network chunk at once, so a small gzip bomb chunk can
    allocate gigabytes before any counting happens; zlib's ``max_length`` stops that.
    """

    def __init__(self, encoding: str, limit: int, url: str) -> None:
        self._encoding = encoding
        self._limit = limit
        self._url = url
        self.size = 0
        self._members = 1
        self._finished = False  # stream end reached: later bytes are ignored
        self._zlib: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS)
        elif encoding not in ("", "identity"):
            raise FetchError(url, "content_type", f"Unsupported Content-Encoding {encoding!r} from {url}")

    def _count(self, data: bytes) -> bytes:
        self.size += len(data)
        if self.size > self._limit:
            raise FetchError(self._url, "too_large", f"{self._url} is larger than {self._limit} bytes")
        return data

    def feed(self, chunk: bytes) -> bytes:
        if self._zlib is None:
            return self._count(chunk)
        out = bytearray()
        while chunk and not self._finished:
            try:
                out += self._zlib.decompress(chunk, self._limit - self.size - len(out) + 1)
            except zlib.error as exc:
                if self._encoding == "deflate" and self.size == 0 and not out:
                    # "deflate" is often sent raw (no zlib header): retry once from the start.
                    self._encoding = "deflate-raw"
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                if self._members > 1:  # junk after a complete gzip member: ignore, like browsers
                    self._finished = True
                    break
                raise FetchError(self._url, "content_type", f"Corrupt {self._encoding} body") from exc
            if self.size + len(out) > self._limit or not self._zlib.eof:
                break  # over the limit (_count raises), or all input consumed
            chunk = self._zlib.unused_data
            if chunk and self._encoding in ("gzip", "x-gzip"):  # concatenated gzip members
                self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
                self._members += 1
            else:
                self._finished = True
        return self._count(bytes(out))

    def flush(self) -> bytes:
        if self._zlib is None or self._finished:
            return b""
        return self._count(self._zlib.flush())


class WebFetcher:
    """Fetch pages safely. One instance per process (or per run); close it with :meth:`aclose`.

    ``resolver`` replaces DNS resolution (``async (host, port) -> [ip, ...]``), for intranet
    resolvers and for tests that need a name which cannot exist in public DNS.
    """

    def __init__(
        self, settings: Settings, *, resolver: Resolver | None = None, cpu: CpuPool | None = None
    ) -> None:
        self._settings = settings
        self._cpu = cpu or CpuPool(0)  # extraction: the engine's worker processes, or threads
        self._allow = AllowList.parse(settings.fetch_allow_hosts)
        self._resolver = resolver
        self._client = httpx.AsyncClient(
            transport=PinnedTransport(
                limits=httpx.Limits(
                    max_connections=settings.fetch_concurrency * settings.fetch_per_host_concurrency,
                    max_keepalive_connections=settings.fetch_concurrency,
                )
            ),
            timeout=httpx.Timeout(
                connect=settings.fetch_connect_timeout_seconds,
                read=settings.fetch_read_timeout_seconds,
                write=settings.fetch_read_timeout_seconds,
                pool=settings.fetch_total_timeout_seconds,
            ),
            follow_redirects=False,  # redirects are followed by us, re-checking every hop
            trust_env=False,  # no proxies or netrc from the environment: they would bypass the guard
            headers={
                "User-Agent": settings.fetch_user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": "gzip, deflate",  # only what _BoundedDecoder can cap
            },
        )
        self._global = asyncio.Semaphore(settings.fetch_concurrency)
        # Weak values: a host's semaphore disappears when nobody is waiting on or holding it.
        self._per_host: weakref.WeakValueDictionary[str, asyncio.Semaphore] = weakref.WeakValueDictionary()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> FetchedPage:
        """Fetch ``url``, follow redirects, extract its main text. Raises :class:`FetchError`."""
        total = self._settings.fetch_total_timeout_seconds
        try:
            target = check_url_allowed(url, self._allow)  # before waiting for a slot: fail fast
            async with self._global:
                try:
                    async with asyncio.timeout(total):
                        return await self._fetch(url, target)
                except TimeoutError as exc:
                    raise FetchError(url, "timeout", f"Fetching {url} took longer than {total}s") from exc
        except BlockedURLError as exc:
            logger.info("fetch blocked: %s", exc)
            raise

    async def _fetch(self, requested_url: str, target: CheckedURL) -> FetchedPage:
        redirects: list[str] = []
        max_redirects = self._settings.fetch_max_redirects
        while True:
            async with self._open(target) as response:
                location = response.headers.get("location")
                if response.status_code in REDIRECT_STATUSES and location:
                    redirects.append(str(target.url))
                    if len(redirects) > max_redirects:
                        raise FetchError(
                            requested_url,
                            "too_many_redirects",
                            f"{requested_url} redirected more than {max_redirects} times",
                        )
                    try:
                        next_url = target.url.join(location)
                    except httpx.InvalidURL as exc:
                        raise BlockedURLError(str(target.url), f"Invalid redirect to {location!r}") from exc
                    logger.debug("redirect %s -> %s", target.url, next_url)
                    target = check_url_allowed(next_url, self._allow)
                    continue
                media_type, charset = self._check_response(response, target)
                body = await self._read_capped(response, str(target.url))
                status_code = response.status_code
                break
        return await self._build_page(
            requested_url, target, status_code, media_type, charset, body, redirects
        )

    @contextlib.asynccontextmanager
    async def _open(self, target: CheckedURL) -> AsyncIterator[httpx.Response]:
        """Resolve + check + pinned GET for one hop; yields the streaming response."""
        url = str(target.url)
        addresses = await resolve_and_check(
            target, resolver=self._resolver, dns_timeout=self._settings.fetch_connect_timeout_seconds
        )
        semaphore = self._per_host.get(target.host)
        if semaphore is None:
            semaphore = asyncio.Semaphore(self._settings.fetch_per_host_concurrency)
            self._per_host[target.host] = semaphore
        async with semaphore:
            with pinned(target.host, target.port, addresses):
                try:
                    response = await self._client.send(
                        self._client.build_request("GET", target.url), stream=True
                    )
                except httpx.TimeoutException as exc:
                    raise FetchError(
                        url, "timeout", f"Timed out fetching {url}: {type(exc).__name__}"
                    ) from exc
                except httpx.TransportError as exc:
                    raise FetchError(url, "connect", f"Could not connect to {url}: {exc!r}") from exc
                try:
                    yield response
                except httpx.TimeoutException as exc:
                    raise FetchError(
                        url, "timeout", f"Timed out reading {url}: {type(exc).__name__}"
                    ) from exc
                except httpx.TransportError as exc:
                    raise FetchError(url, "connect", f"Connection lost reading {url}: {exc!r}") from exc
                finally:
                    await response.aclose()

    def _check_response(self, response: httpx.Response, target: CheckedURL) -> tuple[str, str | None]:
        url = str(target.url)
        if not 200 <= response.status_code < 300:
            raise FetchError(
                url,
                "http_status",
                f"{url} answered HTTP {response.status_code} {response.reason_phrase}".rstrip(),
                status_code=response.status_code,
            )
        header = response.headers.get("content-type", "")
        media_type = header.split(";", 1)[0].strip().lower()
        if media_type not in ALLOWED_CONTENT_TYPES:
            raise FetchError(
                url, "content_type", f"{url} has unsupported content type {header or '(none)'!r}"
            )
        charset = None
        for param in header.split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset":
                charset = value.strip().strip("\"'") or None
        return media_type, charset

    async def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        limit = self._settings.fetch_max_bytes
        encoding = response.headers.get("content-encoding", "").strip().lower()
        declared = response.headers.get("content-length", "")
        if encoding in ("", "identity") and declared.isdigit() and int(declared) > limit:
            raise FetchError(url, "too_large", f"{url} declares {declared} bytes, limit is {limit}")
        decoder = _BoundedDecoder(encoding, limit, url)
        parts: list[bytes] = []
        async for chunk in response.aiter_raw():  # raw: decompression is ours, so it can be capped
            parts.append(decoder.feed(chunk))
        parts.append(decoder.flush())
        return b"".join(parts)

    async def _build_page(
        self,
        requested_url: str,
        target: CheckedURL,
        status_code: int,
        media_type: str,
        charset: str | None,
        body: bytes,
        redirects: list[str],
    ) -> FetchedPage:
        url = str(target.url)
        max_chars = self._settings.source_max_chars
        if not body.strip():
            raise FetchError(url, "empty", f"{url} returned an empty body")
        try:
            extracted = await self._cpu.run(extract_document, body, media_type, charset, url, max_chars)
        except ExtractionError as exc:
            raise FetchError(url, "empty", f"No text could be extracted from {url}: {exc}") from exc
        except CpuWorkerLost as exc:  # the page crashed the parser twice: that page only, not the run
            message = f"Extracting {url} crashed its worker: {exc}"
            raise FetchError(url, "extraction_crashed", message) from exc
        if not extracted.text.strip():
            raise FetchError(url, "empty", f"No text could be extracted from {url}")
        page = FetchedPage(
            url=url,
            requested_url=requested_url,
            status_code=status_code,
            content_type=media_type,
            title=extracted.title,
            text=truncate(extracted.text, max_chars),
            canonical_url=extracted.canonical_url,
            published=extracted.published,
            byte_size=len(body),
            extractor=extracted.extractor,
            redirects=redirects,
            fetched_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        logger.info(
            "fetched %s: %s, %s bytes, %s chars via %s",
            url,
            media_type,
            page.byte_size,
            len(page.text),
            page.extractor,
        )
        return page
