"""WebFetcher and its SSRF guard, against real HTTP servers on 127.0.0.1 (peers/static_site.py).

Allowlist semantics under test: ``fetch_allow_hosts`` entries match the URL's host as written
(after canonicalising IP literals, so ``127.1`` == ``127.0.0.1``) and its port. A different spelling
that merely *resolves* to an allowlisted address (``localhost``, ``[::ffff:127.0.0.1]``) is blocked,
and so is another port on the same host.
"""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import json
import pickle
import shutil
import socket
import ssl
import subprocess
import time
import tracemalloc
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from bs4 import XMLParsedAsHTMLWarning

from config import Settings
from deepresearch.search.documents import extract_text
from deepresearch.web.extract import _soup_text, decode_body, extract_html, iso_date, truncate
from deepresearch.web.fetch import (
    BlockedURLError,
    FetchedPage,
    FetchError,
    WebFetcher,
    _BoundedDecoder,
    check_url_allowed,
)
from deepresearch.web.netguard import (
    AllowList,
    PinnedTransport,
    address_problem,
    parse_numeric_ipv4,
    pinned,
    resolve_and_check,
    system_resolver,
)
from peers import free_port, serve_app
from peers.static_site import (
    ARTICLES,
    BOILERPLATE_MARKERS,
    CANONICAL_BASE,
    LEGACY_TEXT,
    MARKDOWN_TEXT,
    PLAIN_TEXT,
    PUBLISHED,
    StaticSite,
    article_html,
    make_static_site,
)


# --- fixtures --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served() -> Iterator[tuple[StaticSite, str]]:
    site = make_static_site(slow_delay=3.0)
    with serve_app(site.app) as base:
        yield site, base


@pytest.fixture(scope="module")
def other_served() -> Iterator[tuple[StaticSite, str]]:
    """A second site on another loopback port that is never allowlisted."""
    site = make_static_site()
    with serve_app(site.app) as base:
        yield site, base


@pytest.fixture
def site(served: tuple[StaticSite, str]) -> StaticSite:
    served[0].reset()
    return served[0]


@pytest.fixture
def base(served: tuple[StaticSite, str]) -> str:
    return served[1]


def _hostport(base: str) -> str:
    return base.removeprefix("http://")


def _settings(base: str | None = None, **overrides: object) -> Settings:
    allow = [_hostport(base)] if base else []
    return Settings(fetch_allow_hosts=allow, **overrides)  # type: ignore[arg-type]


class RecordingResolver:
    """The real system resolver, plus a log of what was asked (to prove what did or did not hit DNS)."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host in self.answers:
            return list(self.answers[host])
        return await system_resolver(host, port)


async def _fetch_error(fetcher: WebFetcher, url: str) -> FetchError:
    with pytest.raises(FetchError) as info:
        await fetcher.fetch(url)
    return info.value


# --- extraction ------------------------------------------------------------------------------------
@pytest.mark.parametrize("slug", list(ARTICLES))
async def test_article_main_text_and_metadata(site: StaticSite, base: str, slug: str) -> None:
    title, paragraphs = ARTICLES[slug]
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/articles/{slug}")
    assert page.status_code == 200
    assert page.url == page.requested_url == f"{base}/articles/{slug}"
    assert page.content_type == "text/html"
    assert page.extractor == "trafilatura"
    assert page.title == title
    for paragraph in paragraphs:
        assert paragraph in page.text
    for marker in (*BOILERPLATE_MARKERS, "Related posts", "window.analytics"):
        assert marker not in page.text
    assert page.canonical_url == f"{CANONICAL_BASE}/articles/{slug}"
    assert page.published == PUBLISHED[slug]
    assert page.byte_size == len(article_html(slug).encode("utf-8"))
    assert page.redirects == []
    assert site.hits[f"/articles/{slug}"] == 1


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_compressed_article_is_decoded(site: StaticSite, base: str, encoding: str) -> None:
    slug = "sqlite-wal"
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/articles/{slug}?encoding={encoding}")
    assert ARTICLES[slug][1][3] in page.text
    assert page.byte_size == len(article_html(slug).encode("utf-8"))  # decoded size, not wire size


async def test_plain_text_and_markdown(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        plain = await fetcher.fetch(f"{base}/notes.txt")
        markdown = await fetcher.fetch(f"{base}/readme.md")
    assert (plain.extractor, plain.content_type) == ("plain", "text/plain")
    assert plain.text == PLAIN_TEXT.strip()
    assert plain.title == "Field notes: reading list"
    assert (markdown.extractor, markdown.content_type) == ("plain", "text/markdown")
    assert "seasonal performance between 2.5 and 3.5" in markdown.text
    assert markdown.title == "Research log"
    assert markdown.byte_size == len(MARKDOWN_TEXT.encode())


async def test_pdf_text_is_extracted(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/paper.pdf")
    assert page.extractor == "pdf"
    assert page.title == "Checkpoint storage benchmark"
    assert "Write-ahead logging halves commit latency" in page.text


async def test_text_is_truncated_to_source_max_chars(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base, source_max_chars=1000)) as fetcher:
        page = await fetcher.fetch(f"{base}/articles/heat-pumps-cold-climates")
    assert 800 < len(page.text) <= 1000
    assert truncate("word " * 500, 1000).endswith("word")


async def test_page_without_text_is_empty_error(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, f"{base}/empty")
    assert error.reason == "empty"


async def test_charset_from_meta_tag(site: StaticSite, base: str) -> None:
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/legacy")
    assert LEGACY_TEXT in page.text


def test_decode_body_fallbacks() -> None:
    assert decode_body("naïve".encode("utf-16"), "utf-16", html=False) == "naïve"
    assert decode_body("naïve".encode(), "no-such-codec", html=False) == "naïve"
    russian = "Привет, как дела? Это тестовая страница о тепловых насосах зимой."
    assert decode_body(russian.encode("cp1251"), None, html=False) == russian
    assert decode_body("café".encode("latin-1"), None, html=True) == "café"


_ARTICLE_BODY = "<p>" + "Seasonal performance of heat pumps was measured over three winters. " * 8 + "</p>"


@pytest.mark.parametrize(
    ("head", "headings", "title"),
    [
        # the page's declared title wins
        (
            '<meta property="og:title" content="Declared"><title>Other | Site</title>',
            "<h1>Head</h1>",
            "Declared",
        ),
        # the leading part of <title> when the <h1> repeats it
        (
            "<title>Heat pumps in winter | Field Notes</title>",
            "<h1>Heat pumps in winter</h1>",
            "Heat pumps in winter",
        ),
        # the site's name dropped when the markup names the site
        (
            '<meta property="og:site_name" content="Field Notes"><title>Field Notes — Heat pumps</title>',
            "",
            "Heat pumps",
        ),
        # a menu <h1> repeating the site's name is no headline: the whole <title> stays
        (
            "<title>Heat pumps - The Book</title>",
            "<h1>The Book</h1><h1>Heat pumps, measured</h1>",
            "Heat pumps - The Book",
        ),
        # no <title>: the first <h1>
        ("", "<h1>Only a heading</h1>", "Only a heading"),
    ],
)
def test_html_title_from_one_parse(head: str, headings: str, title: str) -> None:
    html = f"<html><head>{head}</head><body><article>{headings}{_ARTICLE_BODY}</article></body></html>"
    extracted = extract_html(html, "https://news.example/a/b")
    assert extracted.title == title
    assert "Seasonal performance of heat pumps" in extracted.text
    assert extracted.extractor == "trafilatura"


@pytest.mark.parametrize(
    ("markup", "published"),
    [
        ('<meta name="dc.date" content="2021-06-30">', "2021-06-30"),
        ('<meta itemprop="datePublished" content="2020-02-03T10:00:00Z">', "2020-02-03"),
        (
            '<script type="application/ld+json">{"@graph": [{"dateCreated": "2019-04-05"}]}</script>',
            "2019-04-05",
        ),
        ('<time datetime="2018-07-08T00:00">8 July</time>', "2018-07-08"),
        ('<p class="byline">Published on 2017-09-10 by the editors</p>', "2017-09-10"),  # htmldate's guess
        ("", None),
    ],
)
def test_html_publish_date_sources(markup: str, published: str | None) -> None:
    html = (
        f"<html><head><title>T</title></head><body>{markup}<article>{_ARTICLE_BODY}</article></body></html>"
    )
    assert extract_html(html, "https://news.example/story").published == published


def test_canonical_link_is_resolved_and_must_be_http() -> None:
    head = '<link rel="alternate canonical" href="/stories/1?x=2"><title>T</title>'
    html = f"<html><head>{head}</head><body><article>{_ARTICLE_BODY}</article></body></html>"
    assert (
        extract_html(html, "https://news.example/a/b").canonical_url == "https://news.example/stories/1?x=2"
    )
    ftp = html.replace("/stories/1?x=2", "ftp://files.example/1")
    assert extract_html(ftp, "https://news.example/a/b").canonical_url is None


def test_xhtml_with_an_xml_declaration_is_parsed() -> None:
    html = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f"<title>Declared XML</title></head><body><article>{_ARTICLE_BODY}</article></body></html>"
    )
    extracted = extract_html(html, "https://news.example/x")
    assert extracted.title == "Declared XML"
    assert "Seasonal performance of heat pumps" in extracted.text


def test_soup_fallback_drops_page_chrome() -> None:
    html = (
        "<html><body><nav>Home Topics</nav><main><div>Measured data from three winters.</div></main>"
        "<footer>Cookie settings</footer><script>var x = 1;</script></body></html>"
    )
    assert _soup_text(html) == "Measured data from three winters."


_FEED = (
    '<?xml version="1.0" encoding="utf-8"?>\n<!-- generated -->\n<rss version="2.0"><channel>'
    "<title>Heat pump notes</title><item><title>Winter data</title>"
    "<description>Measured data from three winters.</description></item></channel></rss>"
)


def test_an_xml_feed_is_read_without_beautifulsoups_warning(tmp_path: Path) -> None:
    """An RSS page (fetched, or a corpus .html file) is XML: read with the XML parser, not the HTML one
    BeautifulSoup warns about (XMLParsedAsHTMLWarning, once per page in the log)."""
    xhtml = '<?xml version="1.0"?>\n<html><body><nav>Menu</nav><main>Kept as HTML.</main></body></html>'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fetched = _soup_text(_FEED)
        corpus = extract_text(tmp_path / "feed.html", _FEED.encode())
        page = _soup_text(xhtml)
    assert [w for w in caught if issubclass(w.category, XMLParsedAsHTMLWarning)] == []
    assert "Measured data from three winters." in fetched
    assert corpus.title == "Heat pump notes" and "Measured data from three winters." in corpus.text
    assert page == "Kept as HTML."  # an XHTML page (its root is <html>) is still read as HTML


def test_fetched_page_round_trips_through_json() -> None:
    page = FetchedPage(
        url="https://a.example/x",
        requested_url="https://a.example/y",
        status_code=200,
        content_type="text/html",
        title="T",
        text="body",
        canonical_url=None,
        published="2024-01-02",
        byte_size=4,
        extractor="trafilatura",
        redirects=["https://a.example/y"],
        fetched_at="2024-05-01T00:00:00+00:00",
    )
    data = json.loads(json.dumps(page.to_dict()))
    assert FetchedPage.from_dict({**data, "unknown_future_field": 1}) == page


def test_iso_date_normalisation() -> None:
    assert iso_date("2024-03-18T09:30:00Z") == "2024-03-18"
    assert iso_date("2023-11-02T08:00:00+01:00") == "2023-11-02"
    assert iso_date("2024-02-30") is None
    assert iso_date("last Tuesday") is None


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


# --- SSRF guard without any allowlist ----------------------------------------------------------------
SSRF_URLS = [
    "http://127.0.0.1/",
    "http://10.0.0.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://0177.0.0.1/",
    "http://127.0.0.1./",
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[64:ff9b::a00:1]/",  # NAT64 of 10.0.0.1
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo, client 127.0.0.1
    "http://[fe80::1]/",
    "http://0.0.0.0/",
    "http://100.64.1.1/",
    "http://224.0.0.1/",
    "http://192.0.0.8/",  # IETF protocol assignment that Python 3.11 calls global
    "http://1.2.3.999/",  # numeric but invalid: refused rather than guessed
    "http://example.0x10/",  # last label numeric: an IPv4 spelling or nothing
    "file:///etc/passwd",
    "ftp://x/",
    "gopher://example.com/",
    "data:text/html,hello",
    "http://user:pw@example.com/",
    "http://user@example.com/",
    "http://exa%20mple.com/",
    "http:///nohost",
]


@pytest.mark.parametrize("url", SSRF_URLS)
async def test_ssrf_targets_are_blocked_before_dns(url: str) -> None:
    resolver = RecordingResolver()
    async with WebFetcher(Settings(), resolver=resolver) as fetcher:
        error = await _fetch_error(fetcher, url)
    assert isinstance(error, BlockedURLError)
    assert error.reason == "blocked"
    assert error.url == url
    assert str(error).startswith("Blocked")
    assert resolver.calls == []  # literal / syntactic: decided without any DNS lookup
    with pytest.raises(BlockedURLError):
        check_url_allowed(url, [])


@pytest.mark.parametrize(
    ("host", "answers"),
    [
        ("localhost", None),  # the real system resolver: /etc/hosts says 127.0.0.1
        ("rebind.test", ["127.0.0.1"]),
        ("mixed.test", ["93.184.215.14", "10.1.2.3"]),  # one private answer taints the host
        ("metadata.test", ["169.254.169.254"]),
        ("mapped.test", ["::ffff:192.168.0.1"]),
    ],
)
async def test_hostnames_resolving_to_internal_addresses_are_blocked(
    site: StaticSite, base: str, host: str, answers: list[str] | None
) -> None:
    port = base.rsplit(":", 1)[1]
    resolver = RecordingResolver({host: answers} if answers else None)
    async with WebFetcher(_settings(base), resolver=resolver) as fetcher:
        error = await _fetch_error(fetcher, f"http://{host}:{port}/articles/sqlite-wal")
    assert isinstance(error, BlockedURLError)
    assert f"{host} resolves to" in str(error)
    assert resolver.calls == [(host, int(port))]
    assert site.total_hits == 0


@pytest.mark.parametrize(
    "spelling", ["localhost:{port}", "[::ffff:127.0.0.1]:{port}", "127.0.0.1:{other}", "[::1]:{port}"]
)
async def test_allowlist_is_host_and_port_specific(
    site: StaticSite, base: str, other_served: tuple[StaticSite, str], spelling: str
) -> None:
    other_site, other_base = other_served
    other_site.reset()
    url = "http://" + spelling.format(port=base.rsplit(":", 1)[1], other=other_base.rsplit(":", 1)[1]) + "/"
    async with WebFetcher(_settings(base)) as fetcher:
        error = await _fetch_error(fetcher, url)
    assert error.reason == "blocked"
    assert site.total_hits == 0
    assert other_site.total_hits == 0


@pytest.mark.parametrize("spelling", ["127.1", "2130706433", "0x7f.0.0.1"])
async def test_numeric_spellings_are_normalised(site: StaticSite, base: str, spelling: str) -> None:
    port = base.rsplit(":", 1)[1]
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"http://{spelling}:{port}/notes.txt")
    assert page.url == f"http://127.0.0.1:{port}/notes.txt"
    assert page.requested_url == f"http://{spelling}:{port}/notes.txt"
    assert site.hosts[f"127.0.0.1:{port}"] == 1


# --- connection pinning ----------------------------------------------------------------------------
async def test_connection_goes_to_the_checked_address_without_a_second_lookup(
    site: StaticSite, base: str
) -> None:
    # ".test" never resolves in real DNS: the fetch can only succeed if the connection is made to the
    # address our resolver returned, with no lookup of its own by the HTTP stack.
    port = int(base.rsplit(":", 1)[1])
    resolver = RecordingResolver({"pinned.test": ["127.0.0.1"]})
    settings = Settings(fetch_allow_hosts=[f"pinned.test:{port}"])
    async with WebFetcher(settings, resolver=resolver) as fetcher:
        page = await fetcher.fetch(f"http://pinned.test:{port}/articles/sqlite-wal")
    assert page.url == f"http://pinned.test:{port}/articles/sqlite-wal"
    assert resolver.calls == [("pinned.test", port)]
    assert site.hosts == {f"pinned.test:{port}": 1}  # original Host header kept


async def test_allowlisted_hostname_uses_the_system_resolver(site: StaticSite, base: str) -> None:
    port = base.rsplit(":", 1)[1]
    async with WebFetcher(Settings(fetch_allow_hosts=[f"localhost:{port}"])) as fetcher:
        page = await fetcher.fetch(f"http://localhost:{port}/notes.txt")
    assert page.text.startswith("Field notes")
    assert site.hosts[f"localhost:{port}"] == 1


async def test_pinned_transport_refuses_unchecked_hosts(site: StaticSite, base: str) -> None:
    async with httpx.AsyncClient(transport=PinnedTransport()) as client:
        with pytest.raises(BlockedURLError, match="unchecked host"):
            await client.get(f"{base}/notes.txt")
    assert site.total_hits == 0


async def test_pinned_transport_connects_to_the_pinned_address(site: StaticSite, base: str) -> None:
    # The URL names 10.0.0.1; the pin sends the TCP connection to our loopback server instead,
    # which shows the backend dials the checked address, never the name in the URL. 127.0.0.2 has
    # no listener (the server is bound to 127.0.0.1): the next pinned address is tried.
    port = int(base.rsplit(":", 1)[1])
    async with httpx.AsyncClient(transport=PinnedTransport()) as client:
        with pinned("10.0.0.1", port, ["127.0.0.2", "127.0.0.1"]):
            response = await client.get(f"http://10.0.0.1:{port}/notes.txt")
        assert response.text == PLAIN_TEXT
        with pytest.raises(BlockedURLError):  # the pin ends with the block
            await client.get(f"http://10.0.0.2:{port}/notes.txt")
    assert site.hosts == {f"10.0.0.1:{port}": 1}


async def test_resolve_and_check_returns_every_checked_address() -> None:
    target = check_url_allowed("http://multi.test/", [])
    answers = {"multi.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "93.184.215.14"]}
    addresses = await resolve_and_check(target, resolver=RecordingResolver(answers))
    assert addresses == ("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")


# --- pure guard functions ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("2002:808:808::", True),  # 6to4 of a public address
        ("64:ff9b::808:808", True),  # NAT64 of a public address
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("255.255.255.255", False),
        ("224.0.0.251", False),
        ("198.18.0.1", False),
        ("::", False),
        ("::1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:0:7f00:1", False),  # IPv4-translated loopback
        ("::7f00:1", False),  # deprecated IPv4-compatible
        ("2002:a9fe:a9fe::", False),  # 6to4 of the metadata address
        ("fc00::1", False),
        ("fec0::1", False),  # site-local: is_global is True on some Pythons
        ("ff02::1", False),
        ("2001:db8::1", False),
    ],
)
def test_address_classification(address: str, public: bool) -> None:
    assert (address_problem(ipaddress.ip_address(address)) is None) is public


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("0xA9FEA9FE", "169.254.169.254"),
        ("example.com", None),
        ("1.example", None),
    ],
)
def test_numeric_ipv4_spellings(host: str, expected: str | None) -> None:
    result = parse_numeric_ipv4(host)
    assert (str(result) if result else None) == expected


@pytest.mark.parametrize("host", ["1.2.3.256", "08.0.0.1", "1.2.3.4.5", "4294967296", "foo.1"])
def test_invalid_numeric_hosts_raise(host: str) -> None:
    with pytest.raises(ValueError):
        parse_numeric_ipv4(host)


def test_allowlist_parsing() -> None:
    allow = AllowList.parse(["127.0.0.1:8080", "Intranet.Example", "[::1]:9000", "0x7f.2:81", " "])
    assert allow.allows("127.0.0.1", 8080)
    assert not allow.allows("127.0.0.1", 8081)
    assert allow.allows("intranet.example", 443)
    assert allow.allows("::1", 9000)
    assert allow.allows("127.0.0.2", 81)
    checked = check_url_allowed("http://127.0.0.1:8080/x", allow)
    assert checked.allowlisted and checked.ip == ipaddress.ip_address("127.0.0.1")
    with pytest.raises(ValueError, match="fetch_allow_hosts"):
        AllowList.parse(["host:notaport"])
    assert check_url_allowed("https://Intranet.Example./a", allow).url == httpx.URL(
        "https://intranet.example/a"
    )


async def test_environment_proxies_are_ignored(
    site: StaticSite, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A proxy would make the proxy, not us, resolve and connect: trust_env must stay off.
    dead_proxy = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, dead_proxy)
    async with WebFetcher(_settings(base)) as fetcher:
        page = await fetcher.fetch(f"{base}/notes.txt")
    assert page.text.startswith("Field notes")


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


# --- TLS through a pinned connection -------------------------------------------------------------
@pytest.fixture(scope="module")
def tls_cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for ``secure.test``, made with the openssl CLI."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not available")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = str(folder / "cert.pem"), str(folder / "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=secure.test",
         "-addext", "subjectAltName=DNS:secure.test"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def _https_server(cert: str, key: str, sni_seen: list[str | None]) -> asyncio.Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: sni_seen.append(name)  # type: ignore[assignment]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass  # the client rejected our certificate
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)


async def test_tls_uses_the_url_hostname_for_sni_and_verification(tls_cert: tuple[str, str]) -> None:
    cert, key = tls_cert
    sni_seen: list[str | None] = []
    server = await _https_server(cert, key, sni_seen)
    port = server.sockets[0].getsockname()[1]
    client_context = ssl.create_default_context(cafile=cert)
    try:
        async with httpx.AsyncClient(transport=PinnedTransport(verify=client_context)) as client:
            # Connected to the pinned IP, yet SNI and certificate check use the name from the URL.
            with pinned("secure.test", port, ["127.0.0.1"]):
                response = await client.get(f"https://secure.test:{port}/")
            assert response.text == "ok"
            assert sni_seen == ["secure.test"]
            # Same server and IP under another name: the certificate does not match, so no request.
            with pinned("other.test", port, ["127.0.0.1"]), pytest.raises(httpx.ConnectError):
                await client.get(f"https://other.test:{port}/")
    finally:
        server.close()
        await server.wait_closed()
