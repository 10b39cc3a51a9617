"""WebFetcher's limits, errors and redirects (deepresearch/web/fetch.py), against the static site on
127.0.0.1 (peers/static_site.py): body size caps and bounded decompression, content types, HTTP and
connection errors, timeouts, per-host concurrency, redirect chains."""

from __future__ import annotations

import asyncio
import gzip
import pickle
import socket
import time
import tracemalloc
import zlib

import pytest

from config import Settings
from deepresearch.web.fetch import BlockedURLError, FetchError, WebFetcher, _BoundedDecoder
from peers import free_port
from peers.static_site import ARTICLES, StaticSite
from tests._fetch_helpers import _fetch_error, _settings


# --- limits and errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/huge", "/huge?declared=1", "/bomb"])
async def test_body_size_cap(site: StaticSite, base: str, path: str) -> None:
    async with WebFetcher(_settings(base, fetch_max_bytes=100_000)) as fetcher:
        started = time.monotonic()
        error = await _fetch_error(fetcher, base + path)
    assert error.reason == "too_large"
    assert "100000" in str(error)
    assert time.monotonic() - started < 3


async def test_disallowed_content_type(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/image.png")
    assert error.reason == "content_type"
    assert "image/png" in str(error)


async def test_not_found_is_http_status_error(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/no/such/page")
    assert (error.reason, error.status_code) == ("http_status", 404)
    assert "404" in str(error)
    restored = pickle.loads(pickle.dumps(error))
    assert (type(restored), restored.reason, restored.status_code) == (FetchError, "http_status", 404)


async def test_connection_refused_is_connect_error() -> None:
    closed = f"127.0.0.1:{free_port()}"
    async with WebFetcher(Settings(fetch_allow_hosts=[closed])) as fetcher:
        error = await _fetch_error(fetcher, f"http://{closed}/")
    assert error.reason == "connect"


async def test_dns_failure_is_dns_error() -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async with WebFetcher(Settings(), resolver=failing) as fetcher:
        error = await _fetch_error(fetcher, "https://no-such-host.example/")
    assert error.reason == "dns"


async def test_total_deadline_gives_timeout(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base, fetch_total_timeout_seconds=0.3)) as fetcher:
        started = time.monotonic()
        error = await _fetch_error(fetcher, f"{base}/slow")
    assert error.reason == "timeout"
    assert time.monotonic() - started < 1.5


async def test_read_timeout_gives_timeout(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base, fetch_read_timeout_seconds=0.2)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/slow?delay=2")
    assert error.reason == "timeout"


async def test_per_host_concurrency_limit(site: StaticSite, base: str) -> None:
    settings = _settings(base, fetch_concurrency=8, fetch_per_host_concurrency=2)
    async with WebFetcher(settings) as fetcher:
        pages = await asyncio.gather(*(fetcher.fetch(f"{base}/slow?delay=0.15") for _ in range(5)))
    assert all(page.title == "Slow" for page in pages)
    assert site.max_in_flight == 2


# --- redirects -------------------------------------------------------------------------------------
async def test_redirect_chain_is_followed_and_recorded(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/redirect/3")
    assert page.requested_url == f"{base}/redirect/3"
    assert page.url == f"{base}/articles/sqlite-wal"
    assert page.redirects == [f"{base}/redirect/{n}" for n in (3, 2, 1, 0)]
    assert page.title == ARTICLES["sqlite-wal"][0]


async def test_too_many_redirects(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base, fetch_max_redirects=2)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/redirect/5")
    assert error.reason == "too_many_redirects"
    assert site.hits["/redirect/3"] == 1
    assert site.hits["/redirect/2"] == 0  # the third redirect is not followed


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{other_port}/articles/sqlite-wal",  # loopback, port not allowlisted
        "http://localhost:{port}/articles/sqlite-wal",  # allowlisted port, other spelling
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
        "file:///etc/passwd",
    ],
)
async def test_redirect_to_internal_target_is_blocked(
    site: StaticSite, base: str, other_served: tuple[StaticSite, str], target: str
) -> None:
    other_site, other_base = other_served
    other_site.reset()
    location = target.format(other_port=other_base.rsplit(":", 1)[1], port=base.rsplit(":", 1)[1])
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/redirect-to?url={location}")
    assert isinstance(error, BlockedURLError)
    assert error.reason == "blocked"
    assert site.hits["/redirect-to"] == 1
    assert site.hits["/articles/sqlite-wal"] == 0
    assert other_site.total_hits == 0


def test_decompression_is_bounded_in_memory() -> None:
    # 50 MB of zeros gzip to ~50 KB; inflating it in one go would allocate all 50 MB.
    bomb = gzip.compress(b"\0" * 50_000_000, compresslevel=9)
    decoder = _BoundedDecoder("gzip", 100_000, "http://bomb.example/")
    tracemalloc.start()
    try:
        with pytest.raises(FetchError) as info:
            decoder.feed(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.reason == "too_large"
    assert peak < 2_000_000


def test_bounded_decoder_handles_raw_deflate_and_gzip_members() -> None:
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    raw_body = raw.compress(b"raw deflate body") + raw.flush()
    decoder = _BoundedDecoder("deflate", 10_000, "http://x.example/")
    assert decoder.feed(raw_body[:5]) + decoder.feed(raw_body[5:]) + decoder.flush() == b"raw deflate body"
    members = gzip.compress(b"first ") + gzip.compress(b"second")
    decoder = _BoundedDecoder("gzip", 10_000, "http://x.example/")
    assert decoder.feed(members) + decoder.flush() == b"first second"
    with pytest.raises(FetchError) as info:
        _BoundedDecoder("br", 10_000, "http://x.example/")
    assert info.value.reason == "content_type"
