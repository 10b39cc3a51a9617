"""What WebFetcher makes of a page (deepresearch/web/extract.py): main text, title, date, canonical link,
charset, PDFs and plain text; real pages from the static site on 127.0.0.1 (peers/static_site.py)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from bs4 import XMLParsedAsHTMLWarning

from deepresearch.search.documents import extract_text
from deepresearch.web.extract import _soup_text, decode_body, extract_html, iso_date, truncate
from deepresearch.web.fetch import FetchedPage, WebFetcher
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
)
from tests._fetch_helpers import _fetch_error, _settings


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
        # ... and the Debian handbook's XHTML: a DOCTYPE and a namespace, which BeautifulSoup warned about
        strict = "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"
        doctype = f'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "{strict}">'
        # (BeautifulSoup looks at the first 500 characters: no "</html" in them)
        head = "<head>" + '<link rel="stylesheet" href="default.css" />' * 12 + "</head>"
        handbook = xhtml.replace("\n<html>", f'\n{doctype}<html xmlns="http://www.w3.org/1999/xhtml">{head}')
        assert "Kept as HTML." in extract_text(tmp_path / "handbook.html", handbook.encode()).text
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
