"""The local corpus (deepresearch/search/corpus.py, documents.py): a temp folder indexed with SQLite
FTS5, searched, read, reindexed, and put in front of the web providers in the chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepresearch.search import AllProvidersFailed, CorpusError, CorpusIndex, IndexStats, build_search_chain
from deepresearch.search.documents import PASSAGE_CHARS, chunk_text, extract_text
from deepresearch.search.folder import has_documents
from peers.static_site import pdf_bytes
from tests._search_helpers import SITE, Backend, web_settings


def tiny_pdf(lines: tuple[str, ...]) -> bytes:
    """A minimal valid one-page PDF with real text that pypdf can extract."""
    ops = " ".join(f"BT /F1 12 Tf 72 {720 - 20 * i} Td ({line}) Tj ET" for i, line in enumerate(lines))
    stream = ops.encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]
    return pdf_bytes(objects)


LONG_FILLER = "\n\n".join(
    f"Paragraph {i} talks about gardening, soil moisture and the patience of growing tomatoes. " * 3
    for i in range(40)
)


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "sqlite.md").write_text(
        "# SQLite WAL notes\n\nWrite-ahead logging lets readers keep reading while a single writer "
        "appends frames to the log. Checkpoints copy frames back into the database file.\n"
    )
    (root / "heat.txt").write_text(
        "Heat pump field trials\n\nAir-source heat pumps in cold climates keep a useful coefficient "
        "of performance well below freezing, according to measurements from Canada.\n"
    )
    (root / "page.html").write_text(
        "<html><head><title>Durable checkpoints</title><script>var secret = 'zebracorn';</script>"
        "<style>.x{color:red}</style></head><body><h1>Resuming work</h1><p>A workflow that records "
        "<b>checkpoints</b> after every step can resume after a crash without repeating side "
        "effects.</p></body></html>"
    )
    (root / "paper.pdf").write_bytes(tiny_pdf(("Photosynthesis efficiency in algae", "Measured in 2021")))
    (root / "long.md").write_text(
        f"# Garden journal\n\n{LONG_FILLER}\n\nA quasar appeared in the night sky.\n\n{LONG_FILLER}\n\n"
        "Another quasar sighting, much later.\n"
    )
    # never indexed: hidden files, hidden folders, unsupported types
    (root / ".hidden.md").write_text("zebracorn hidden")
    (root / ".git").mkdir()
    (root / ".git" / "config.md").write_text("zebracorn in git")
    (root / "image.png").write_bytes(b"\x89PNG zebracorn")
    return root


@pytest.fixture
async def corpus(tmp_path: Path, corpus_dir: Path) -> CorpusIndex:
    index = CorpusIndex(tmp_path / "index" / "corpus.db", corpus_dir)
    stats = await index.reindex()
    assert stats == IndexStats(added=5)
    return index


# --- corpus ----------------------------------------------------------------------------------------
def test_chunking_bounds_passages() -> None:
    chunks = chunk_text(LONG_FILLER + "\n\n" + "x" * 3000)
    assert len(chunks) > 5
    assert all(len(chunk) <= PASSAGE_CHARS for chunk in chunks)
    assert "".join(chunks).count("tomatoes") == LONG_FILLER.count("tomatoes")


@pytest.mark.parametrize(
    ("query", "expected_url"),
    [
        ("write-ahead log readers", "corpus://notes/sqlite.md"),
        ("heat pumps in cold climates", "corpus://heat.txt"),
        ("resume workflow checkpoints after a crash", "corpus://page.html"),
        ("photosynthesis efficiency", "corpus://paper.pdf"),
    ],
)
async def test_corpus_ranks_the_right_document_first(
    corpus: CorpusIndex, query: str, expected_url: str
) -> None:
    results = await corpus.search(query, 5)
    assert results[0].url == expected_url
    assert results[0].provider == "corpus"
    assert results[0].snippet


async def test_corpus_titles_snippets_and_exclusions(corpus: CorpusIndex) -> None:
    (html_hit,) = await corpus.search("resuming side effects", 1)
    assert html_hit.title == "Durable checkpoints"
    assert "side effects" in html_hit.snippet
    (md_hit,) = await corpus.search("readers writer", 1)
    assert md_hit.title == "SQLite WAL notes"
    # script text, hidden files/folders and unsupported types are not indexed
    assert await corpus.search("zebracorn", 5) == []


async def test_long_document_collapses_to_best_passage(corpus: CorpusIndex) -> None:
    results = await corpus.search("quasar", 5)
    assert [r.url for r in results] == ["corpus://long.md"]
    assert "quasar" in results[0].snippet.lower()
    assert len(results[0].snippet) < PASSAGE_CHARS


async def test_incremental_reindex(corpus: CorpusIndex, corpus_dir: Path) -> None:
    assert await corpus.reindex() == IndexStats(unchanged=5)
    sqlite_md = corpus_dir / "notes" / "sqlite.md"
    stat = sqlite_md.stat()
    os.utime(sqlite_md, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touch only
    assert await corpus.reindex() == IndexStats(unchanged=5)

    sqlite_md.write_text("# SQLite notes\n\nBusy timeouts and the lighthouse keeper.\n")
    os.utime(sqlite_md, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
    (corpus_dir / "heat.txt").unlink()
    (corpus_dir / "notes" / "new.txt").write_text("Fresh notes about volcanoes.\n")
    assert await corpus.reindex() == IndexStats(added=1, updated=1, removed=1, unchanged=3)

    assert [r.url for r in await corpus.search("lighthouse", 5)] == ["corpus://notes/sqlite.md"]
    assert await corpus.search("frames appended", 5) == []  # old passages are gone
    assert await corpus.search("coefficient of performance", 5) == []
    assert [r.url for r in await corpus.search("volcanoes", 5)] == ["corpus://notes/new.txt"]
    assert await corpus.reindex() == IndexStats(unchanged=5)


async def test_unreadable_file_is_counted_once(tmp_path: Path, corpus_dir: Path) -> None:
    (corpus_dir / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    index = CorpusIndex(tmp_path / "other.db", corpus_dir)
    assert await index.reindex() == IndexStats(added=5, failed=1)
    assert await index.reindex() == IndexStats(unchanged=6)


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "AND OR NOT",
        "NEAR(write readers, 2)",
        "title:secret",
        "wal*",
        "^wal -readers +x",
        "c++ && rust || go!",
        "()",
        "{}[]",
        "'",
        "",
        "   ",
        "über résumé naïve",
        'sqlite" OR "x',
        "a" * 5000,
    ],
)
async def test_punctuation_queries_never_raise(corpus: CorpusIndex, query: str) -> None:
    assert isinstance(await corpus.search(query, 5), list)


async def test_operator_words_are_searched_as_words(corpus: CorpusIndex) -> None:
    results = await corpus.search('NEAR("write-ahead" readers) AND title:', 5)
    assert results[0].url == "corpus://notes/sqlite.md"


async def test_read_returns_document_text(corpus: CorpusIndex, corpus_dir: Path) -> None:
    doc = await corpus.read("corpus://page.html")
    assert doc.title == "Durable checkpoints"
    assert "resume after a crash" in doc.text
    assert "zebracorn" not in doc.text
    assert doc.path == (corpus_dir / "page.html").resolve()
    assert doc.modified.endswith("+00:00")
    pdf = await corpus.read("corpus://paper.pdf")
    assert "Photosynthesis efficiency in algae" in pdf.text
    md = await corpus.read("corpus://notes/sqlite.md")
    assert md.text.startswith("# SQLite WAL notes")


@pytest.mark.parametrize(
    "url",
    [
        "corpus://../outside.md",
        "corpus://notes/../../outside.md",
        "corpus:///etc/passwd",
        "corpus://",
        "corpus://missing.md",
        "corpus://image.png",
        "https://example.com/page.md",
        "notes/sqlite.md",
    ],
)
async def test_read_rejects_bad_urls(corpus: CorpusIndex, url: str) -> None:
    with pytest.raises(CorpusError):
        await corpus.read(url)


async def test_symlink_out_of_corpus_is_neither_indexed_nor_read(
    tmp_path: Path, corpus_dir: Path, corpus: CorpusIndex
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Private\n\nplatypus secrets\n")
    (corpus_dir / "link.md").symlink_to(outside)
    assert await corpus.reindex() == IndexStats(unchanged=5)
    assert await corpus.search("platypus", 5) == []
    with pytest.raises(CorpusError, match="escapes the corpus folder"):
        await corpus.read("corpus://link.md")


async def test_corpus_only_never_calls_the_web(backend: Backend, corpus: CorpusIndex) -> None:
    chain = build_search_chain(web_settings(backend), corpus=corpus, corpus_only=True)
    outcome = await chain.search("sqlite wal readers", 5)
    nothing = await chain.search("nothing at all matches", 5)
    await chain.aclose()
    assert outcome.providers_used == ["corpus"]
    assert outcome.results[0].url == "corpus://notes/sqlite.md"
    assert (nothing.results, nothing.failures) == ([], {})
    assert backend.server.calls == []


async def test_corpus_results_come_first_then_web(backend: Backend, corpus: CorpusIndex) -> None:
    chain = build_search_chain(web_settings(backend), corpus=corpus)
    outcome = await chain.search("sqlite wal heat pumps checkpoints", 2)
    await chain.aclose()
    assert outcome.providers_used == ["corpus", "searxng"]
    urls = [r.url for r in outcome.results]
    assert len(urls) == 4  # max_results from the corpus plus max_results from the web
    assert all(u.startswith("corpus://") for u in urls[:2])
    assert all(u.startswith(SITE) for u in urls[2:])
    assert backend.server.calls == [("searxng", "sqlite wal heat pumps checkpoints")]


async def test_broken_corpus_is_a_recorded_failure(
    backend: Backend, tmp_path: Path, corpus_dir: Path
) -> None:
    # the index path is a directory: SQLite cannot open it
    broken = CorpusIndex(tmp_path, corpus_dir)
    chain = build_search_chain(web_settings(backend), corpus=broken)
    outcome = await chain.search("sqlite", 3)
    await chain.aclose()
    assert outcome.providers_used == ["searxng"]
    assert "corpus" in outcome.failures
    only = build_search_chain(web_settings(backend), corpus=broken, corpus_only=True)
    with pytest.raises(AllProvidersFailed, match="corpus: "):
        await only.search("sqlite", 3)
    await only.aclose()


def test_the_quick_check_finds_a_document_as_the_indexer_does_and_stays_bounded(tmp_path: Path) -> None:
    (tmp_path / ".drafts").mkdir()
    (tmp_path / ".drafts" / "hidden.md").write_text("# Hidden\n")
    for i in range(3):
        (tmp_path / f"table{i}.csv").write_text("a,b\n")
    assert not has_documents(tmp_path)  # hidden folders and unsupported files hold nothing to index
    # past its scan limit the check answers yes: a huge folder is the indexer's to judge, not a request's
    assert has_documents(tmp_path, scan_limit=2)
    (tmp_path / "z.md").write_text("# Notes\n")
    assert has_documents(tmp_path)


def _gardens(root: Path) -> None:
    """Pages on something else, enough of them for the words' rarity in the corpus to mean something."""
    for i in range(30):
        (root / f"garden-{i}.md").write_text(f"# garden {i}\n\nTomatoes {i} need water and patience.\n")


async def _reindexed(tmp_path: Path, root: Path) -> CorpusIndex:
    index = CorpusIndex(tmp_path / "index" / "corpus.db", root)
    await index.reindex()
    return index


async def test_a_page_that_holds_the_options_asked_about_is_found(tmp_path: Path) -> None:
    # "should I use -S or -G?": the tokenizer reads the options as the words "s" and "g", so the page that
    # documents them (in words other than the question's) ranked below pages that repeat its prose
    root = tmp_path / "manual"
    root.mkdir()
    (root / "lamp-log.md").write_text(
        "# lamp-log\n\nShow the lamp's history.\n\n-S<string>\n:   Look for differences that change the "
        "number of occurrences of the string.\n\n-G<regex>\n:   Look for differences whose patch text "
        "has lines that match the regex.\n"
    )
    _gardens(root)
    for i in range(4):
        (root / f"commit-{i}.md").write_text(
            f"# lamp-commit-{i}\n\nRecord the commit {i}"
            + (" that added or removed a function call.\n\n" if i == 0 else ".\n\n")
            + "--Sign\n:   sign it. TLS-S and -Gx are other things: it's the lamp's G string, G for green.\n"
        )
    index = await _reindexed(tmp_path, root)
    question = "How can I find the commit that added or removed a function call, and should I use -S or -G?"
    urls = [r.url for r in await index.search(question, 3)]
    assert "corpus://lamp-log.md" in urls, urls  # below them before: four pages say "commit" and "call"
    # the same words without the options: the prose wins, as before
    urls = [r.url for r in await index.search("find the commit that added or removed a function call", 5)]
    assert urls[-1] == "corpus://lamp-log.md" or "corpus://lamp-log.md" not in urls, urls


async def test_an_option_many_pages_hold_names_none(tmp_path: Path) -> None:
    root = tmp_path / "manual"
    root.mkdir()
    for i in range(14):  # more than OPTION_DOCUMENTS pages hold "-f": it tells no page in particular
        (root / f"lamp-{i}.md").write_text(f"# lamp-{i}\n\nTrim wick number {i}.\n\n-f\n:   force.\n")
    (root / "wick.md").write_text("# wick\n\nHow to trim the wick with force, trim it, trim the wick.\n")
    index = await _reindexed(tmp_path, root)
    urls = [r.url for r in await index.search("trim the wick with -f", 3)]
    assert urls[0] == "corpus://wick.md", urls


async def test_a_page_that_holds_a_pasted_identifier_is_found(tmp_path: Path) -> None:
    # "version strings like v2.1-14-g2414721": the hash is one word among the question's others, which
    # pages on protocol versions repeat far more often than the one page that explains such names
    root = tmp_path / "manual"
    root.mkdir()
    (root / "lamp-describe.md").write_text(
        "# lamp-describe\n\nGive a lamp version a readable name from its nearest label.\n\n"
        "## Examples\n\nOn a lamp 14 changes past "
        "its label you get v1.0.4-14-g2414721: the label, the count of changes and the short name.\n"
    )
    _gardens(root)
    for i in range(4):
        (root / f"protocol-{i}.md").write_text(
            f"# lamp protocol {i}\n\nThe version strings of the protocol come in parts. The handshake "
            "sends capabilities, the server lists its lamps and the client asks for the ones it wants.\n"
        )
    index = await _reindexed(tmp_path, root)
    question = "Where do version strings like v2.1-14-g2414721 come from and what do their parts mean?"
    urls = [r.url for r in await index.search(question, 3)]
    assert urls[0] == "corpus://lamp-describe.md", urls
    # without the identifier, the prose wins, as before
    urls = [r.url for r in await index.search("where do version strings come from, what do parts mean", 5)]
    assert "corpus://lamp-describe.md" not in urls[:4], urls


async def test_an_identifier_a_title_names_lifts_no_other_page(tmp_path: Path) -> None:
    # the page titled "mod_wick" is found by its title; the pages that merely mention mod_wick are not
    # lifted over the pages whose prose answers
    root = tmp_path / "manual"
    root.mkdir()
    (root / "mod_wick.md").write_text("# mod_wick\n\nThe mod_wick module trims wicks and logs each trim.\n")
    (root / "trimming.md").write_text(
        "# Trimming\n\nA wick is trimmed to stop smoke: trim the wick short, trim it before each lighting.\n"
    )
    (root / "smoke.md").write_text("# Smoke\n\nA long wick smokes before it settles: keep it short.\n")
    for i in range(3):
        (root / f"modules-{i}.md").write_text(f"# Module list {i}\n\nmod_wick, mod_flame and mod_wax {i}.\n")
    _gardens(root)
    index = await _reindexed(tmp_path, root)
    urls = [r.url for r in await index.search("why trim the wick short with mod_wick before lighting", 3)]
    # the module lists name mod_wick but say nothing of trimming: below the page on smoke, which does
    assert sorted(urls[:2]) == ["corpus://mod_wick.md", "corpus://trimming.md"], urls
    assert urls[2] == "corpus://smoke.md", urls


async def test_a_sphinx_builds_theme_files_and_generated_pages_are_not_documents(tmp_path: Path) -> None:
    # a fresh corpus (borgbackup-doc) answered a password question with its font's read-me ("Read Me File
    # for Adobe OpenType Fonts", under _static/) and listed Flask's 404 page among the sources read
    root = tmp_path / "docs"
    build = root / "html"
    (build / "_static" / "fonts").mkdir(parents=True)
    (build / "_images").mkdir()
    (build / "searchindex.js").write_text("Search.setIndex({})")
    page = "<html><head><title>{}</title></head><body><p>{}</p></body></html>"
    (build / "usage.html").write_text(page.format("Usage", "The lantern keeper trims the wick at dusk."))
    for name in ("genindex.html", "genindex-A.html", "search.html", "py-modindex.html", "404.html"):
        (build / name).write_text(page.format(name, "The lantern keeper index of wick terms."))
    (build / "_static" / "fonts" / "ReadMe.html").write_text(page.format("Read Me", "The lantern wick font."))
    (build / "_images" / "notes.txt").write_text("The lantern wick picture notes.")
    # a folder named _static outside a Sphinx build is the user's own
    (root / "notes" / "_static").mkdir(parents=True)
    (root / "notes" / "_static" / "wick.md").write_text("# Wick\n\nThe lantern wick is trimmed square.\n")
    (root / "notes" / "404.html").write_text(page.format("Missing wick", "The lantern wick went missing."))
    corpus = CorpusIndex(tmp_path / "index.db", root)
    stats = await corpus.reindex()
    assert stats.added == 3, stats
    found = sorted(r.url for r in await corpus.search("lantern wick", 10))
    assert found == ["corpus://html/usage.html", "corpus://notes/404.html", "corpus://notes/_static/wick.md"]


async def test_viewcode_source_pages_and_a_stripped_builds_index_are_not_documents(tmp_path: Path) -> None:
    # celery's docs answered with "Source code for celery.platforms" (_modules/), and bind9-doc, whose
    # packager dropped searchindex.js and objects.inv, with its index of terms (genindex.html)
    root = tmp_path / "docs"
    page = "<html><head><title>{}</title></head><body><p>{}</p></body></html>"
    celery, bind = root / "celery", root / "bind"
    (celery / "_modules" / "lamp").mkdir(parents=True)
    (celery / "objects.inv").write_bytes(b"# Sphinx inventory")
    (celery / "usage.html").write_text(page.format("Usage", "The lantern keeper trims the wick at dusk."))
    (celery / "_modules" / "lamp" / "wick.html").write_text(page.format("Source", "def trim_lantern_wick():"))
    (bind / "_static").mkdir(parents=True)
    (bind / "chapter1.html").write_text(page.format("Chapter", "The lantern wick burns all night."))
    (bind / "genindex.html").write_text(page.format("Index", "lantern wick, 1, 2, 3"))
    # without a theme folder a genindex.html is the user's own page
    (root / "notes").mkdir()
    (root / "notes" / "genindex.html").write_text(page.format("Genes", "The lantern wick gene index."))
    corpus = CorpusIndex(tmp_path / "index.db", root)
    await corpus.reindex()
    found = sorted(r.url for r in await corpus.search("lantern wick", 10))
    assert found == [
        "corpus://bind/chapter1.html",
        "corpus://celery/usage.html",
        "corpus://notes/genindex.html",
    ]


def test_a_footnote_mark_is_no_part_of_the_text() -> None:
    # bind9-doc's "every record [5] now comes with ..." was quoted "... RRSIG [5][2]": the page's footnote
    # number read as a citation of the report's fifth source
    page = (
        "<html><head><title>Lamps</title></head><body><h1>Lamps</h1><p>Every wick "
        '<a class="footnote-reference brackets" href="#f5" id="id5" role="doc-noteref">'
        '<span class="fn-bracket">[</span>5<span class="fn-bracket">]</span></a> is trimmed, and oil '
        '<a class="footnote-reference" href="#f6">[*]</a> is clear.</p>'
        '<aside class="footnote brackets" id="f5"><p>Of a lamp.</p></aside></body></html>'
    )
    text = extract_text(Path("lamps.html"), page.encode()).text
    assert "Every wick is trimmed, and oil is clear." in text, text
    page = page.replace("[*]</a> is clear", "[*]</a>, they say, is clear")
    assert "and oil, they say, is clear." in extract_text(Path("lamps.html"), page.encode()).text
    assert "Of a lamp" not in text


def test_the_buttons_of_tabbed_content_are_no_text() -> None:
    # Flask's docs quoted "... set in the shell before starting the server: `BashFishCMDPowershell`": the tab
    # buttons' names in place of the first tab's command
    page = (
        "<html><head><title>Lamps</title></head><body><h1>Lamps</h1>"
        "<p>The keeper sets the wick in the shell before lighting the lamp:</p>"
        '<div class="sphinx-tabs"><div role="tablist" aria-label="Tabbed content">'
        '<button role="tab">Bash</button><button role="tab">Fish</button></div>'
        '<div role="tabpanel"><pre>$ export WICK=2</pre></div>'
        '<div role="tabpanel" hidden><pre>$ set -x WICK 2</pre></div></div></body></html>'
    )
    text = extract_text(Path("lamps.html"), page.encode()).text
    assert "Bash" not in text and "Fish" not in text, text
    assert "lighting the lamp:\n\n$ export WICK=2" in text, text


def test_a_sites_banner_and_menu_are_no_text() -> None:
    # the Exim specification: '<h1 id="header"><a href="http://www.exim.org">Exim Internet Mailer</a></h1>'
    # over every chapter labelled its quotes, and its menu ("Home", "Download", ...) read as a list
    page = (
        "<html><head><title>Lamps</title></head><body>"
        '<h1 id="header"><a href="http://lamps.example">Lighthouse Lamps</a></h1>'
        '<ul class="nav"><li><a href="/">Home</a></li><li><a href="/dl">Download</a></li></ul>'
        "<h2>Chapter 3 - Wicks</h2><p>The keeper trims the wick at dusk.</p>"
        '<h1><a href="http://lamps.example">Lamps</a> of the north tower</h1><p>They burn oil.</p>'
        "</body></html>"
    )
    text = extract_text(Path("lamps.html"), page.encode()).text
    assert text.startswith("## Chapter 3 - Wicks\n\nThe keeper trims the wick at dusk."), text
    assert "# Lamps of the north tower" in text  # a title that only names a link is still a title


def test_a_bold_header_cell_is_no_heading() -> None:
    # celery's changelog labelled ten quotes "Application: ##### Logger Name": a table's bold header cells
    # were taken for headings
    page = (
        "<html><head><title>Lamps</title></head><body><h1>Lamps</h1><p>Each lamp has a keeper:</p><table>"
        "<thead><tr><th><p><strong>Lamp</strong></p></th><th><p><strong>Keeper Name</strong></p></th></tr>"
        "</thead><tbody><tr><td><p>north</p></td><td><p>Ann</p></td></tr>"
        "<tr><th><p><strong>south</strong></p></th><td><p>Bo</p></td></tr></tbody></table></body></html>"
    )
    text = extract_text(Path("lamps.html"), page.encode()).text
    assert "#####" not in text, text
    # ... and the header row, which names the columns, is a Markdown table's row (celery: "Possible event
    # types are: `Event: Meaning`", the header taken for the sample the sentence announces)
    assert "Each lamp has a keeper:\n\n| Lamp | Keeper Name |\n\nnorth: Ann" in text, text
    assert "south: Bo" in text, text  # a row's own bold header cell stays its name
    # a header row written in bold <td> cells, first in its table, goes too ("Sign | Argument | Meaning")
    header = (
        "<thead><tr><th><p><strong>Lamp</strong></p></th><th><p><strong>Keeper Name</strong></p></th></tr>"
    )
    page = page.replace(header, "<tr>" + header.split("<tr>")[1].replace("th>", "td>"))
    assert "| Lamp | Keeper Name |" in extract_text(Path("lamps.html"), page.encode()).text


def test_a_list_item_that_names_a_setting_in_code_keeps_the_name_with_its_description() -> None:
    # celery's daemonizing page quoted "*Available options*: User to run the worker as.": the setting's
    # name (a list item in code, its description in a block after it) was lost
    page = (
        "<html><head><title>Lamps</title></head><body><h1>Lamps</h1><h2>Available options</h2><ul>"
        "<li><p><code>WICK_USER</code></p><blockquote><div><p>Keeper who trims the wick. Default is the "
        "tower keeper.</p></div></blockquote></li>"
        "<li><p>A plain item of the list.</p></li><li><p><code>WICK_LEN</code></p></li></ul></body></html>"
    )
    text = extract_text(Path("lamps.html"), page.encode()).text
    assert "- WICK_USER: Keeper who trims the wick. Default is the tower keeper." in text, text
    assert "- A plain item of the list." in text and "- WICK_LEN" in text, text
