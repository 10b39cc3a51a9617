"""Local corpus: a folder of .md/.txt/.html/.pdf files, indexed incrementally in SQLite FTS5.

Each file is split into ~1200-char passages; BM25 ranks passages and each document is represented
by its best passage. The ``files`` table remembers (mtime_ns, size, sha256) so a re-index only reads
new or changed files, and removes deleted ones. Passage rowids are ``file_id << 20 | seq`` so a
file's passages can be deleted by rowid range (FTS5 cannot index an ordinary column).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from deepresearch.extractive.reading.text import LINE_BREAK
from deepresearch.search.base import SearchResult
from deepresearch.search.documents import (
    SUPPORTED_SUFFIXES,
    ExtractedText,
    extract_text,
    passage_sections,
)
from deepresearch.search.erasure import forget_files, scrub, secure
from deepresearch.search.folder import folder_documents
from deepresearch.search.ranking import (
    BM25_WEIGHTS,
    SEQ_BITS,
    DocumentRanker,
    document_shares,
    match_expression,
)
from deepresearch.search.repeats import Fingerprint, boilerplate, duplicates, fingerprint, strip_boilerplate

__all__ = ["CORPUS_SCHEME", "CorpusDocument", "CorpusError", "CorpusIndex", "IndexStats", "match_expression"]

logger = logging.getLogger(__name__)

CORPUS_SCHEME = "corpus://"
# bump when extraction or chunking changes: a mismatching index is rebuilt from scratch
INDEX_VERSION = "44"
# bump when the rules of search/repeats.py change: boilerplate and duplicates are found again (no rebuild)
REPEATS_VERSION = "2"
_SEQ_BITS = SEQ_BITS
_MAX_PASSAGES = (1 << _SEQ_BITS) - 1
_COLUMNS = ("title", "headings", "body")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    title TEXT NOT NULL,
    passage_count INTEGER NOT NULL,
    error TEXT,
    blocks BLOB,
    shingles BLOB,
    duplicate_of INTEGER
);
CREATE TABLE IF NOT EXISTS boilerplate (key INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS texts (file_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS passages USING fts5(
    title, headings, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

# the escape the corpus text puts before a sample's comment that opens a line (search/documents.py: it would
# read as a Markdown heading) is no part of what the page shows: snippets read "\# leave out ..."
_ESCAPED_COMMENT = re.compile(r"(^|\n|…)\\#")
_SNIPPET_SQL = f"""
SELECT files.path, files.title, snippet(passages, 2, '', '', '…', 32), files.mtime_ns
FROM passages JOIN files ON files.id = :file_id
WHERE passages MATCH :q AND passages.rowid BETWEEN :low AND :high
ORDER BY bm25(passages, {BM25_WEIGHTS}) LIMIT 1
"""
_FIRST_SQL = """
SELECT files.path, files.title, substr(passages.body, 1, 200), files.mtime_ns
FROM passages JOIN files ON files.id = :file_id
WHERE passages.rowid BETWEEN :low AND :high ORDER BY passages.rowid LIMIT 1
"""


Progress = Callable[[int, int], Awaitable[None]]
"""Told (files indexed, files in all) while a long re-index runs."""


class CorpusError(Exception):
    """A corpus URL/path is invalid, escapes the corpus folder, or the file cannot be read."""


@dataclass(frozen=True)
class IndexStats:
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0  # unreadable/unparsable files; recorded so they are retried only once changed
    empty: int = 0  # read, but no text to search: a page whose content the reader did not find


@dataclass(frozen=True)
class CorpusDocument:
    url: str
    path: Path
    title: str
    text: str
    modified: str  # ISO-8601 UTC modification time of the file


@dataclass
class _Known:
    file_id: int
    mtime_ns: int
    size: int
    sha256: str


def _iso(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).isoformat(timespec="seconds")


class CorpusIndex:
    """FTS5 index of ``corpus_dir`` stored at ``db_path``. All SQLite work runs in worker threads."""

    def __init__(
        self,
        db_path: Path,
        corpus_dir: Path,
        *,
        max_file_bytes: int = 50_000_000,
        extract: Callable[[Path, bytes], ExtractedText] = extract_text,
    ) -> None:
        self.db_path = Path(db_path)
        self.extract = extract  # the server's reads PDFs in a CPU worker, within limits
        self.corpus_dir = Path(corpus_dir)
        self.max_file_bytes = max_file_bytes
        self._reindex_lock = asyncio.Lock()
        self._repeats: tuple[frozenset[int], frozenset[int]] | None = None
        self._ranker: DocumentRanker | None = None

    @property
    def root(self) -> Path:
        return self.corpus_dir.resolve()

    # --- public API ---------------------------------------------------------------------------
    async def reindex(self, progress: Progress | None = None, every: float = 5.0) -> IndexStats:
        """Bring the index in line with the folder; only new/changed files are read. A long re-index
        says how far it is, in the log and to `progress` (files done, files in all), at most `every`
        seconds apart once it has taken that long (a small folder says nothing)."""
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:  # in the re-index's thread
            logger.info("corpus %s: %d of %d files indexed", self.corpus_dir, done, total)
            if progress is not None:  # waited for: the events keep their order, and a lost lease stops it
                asyncio.run_coroutine_threadsafe(progress(done, total), loop).result()

        async with self._reindex_lock:
            stats = await asyncio.to_thread(self._reindex_sync, report, every)
        logger.info("corpus %s re-indexed: %s", self.corpus_dir, stats)
        return stats

    def forget_sync(self, relatives: list[str]) -> int:
        """Remove deleted files from the index at once, leaving no copy (not waiting for a re-index)."""
        self._repeats, self._ranker = None, None
        conn = self._connect()
        try:
            return forget_files(conn, relatives)
        finally:
            conn.close()

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        """Best-matching documents (one result per document, its best passage as snippet)."""
        expression = match_expression(query)
        if expression is None or limit < 1:
            return []
        return await asyncio.to_thread(self._search_sync, query, expression, limit)

    async def document_shares(self, phrases: list[str]) -> dict[str, float]:
        """The share of the corpus's documents that contain each phrase (0 when none does)."""
        return await asyncio.to_thread(self._shares_sync, phrases)

    def _shares_sync(self, phrases: list[str]) -> dict[str, float]:
        conn = self._connect()
        try:
            return document_shares(conn, phrases, self._repeated()[1])
        finally:
            conn.close()

    async def read(self, url: str) -> CorpusDocument:
        """Full text of a corpus document, read from disk (the fetch stage uses this, not HTTP)."""
        return await asyncio.to_thread(self._read_sync, url)

    def url_for(self, relative_path: str) -> str:
        return f"{CORPUS_SCHEME}{relative_path}"

    def resolve(self, url_or_path: str) -> Path:
        """Absolute path of a ``corpus://`` URL or corpus-relative path; refuses anything outside."""
        relative = url_or_path[len(CORPUS_SCHEME) :] if url_or_path.startswith(CORPUS_SCHEME) else url_or_path
        if not relative or "\x00" in relative or "\\" in relative:
            raise CorpusError(f"invalid corpus path {url_or_path!r}")
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts:
            raise CorpusError(f"corpus path {url_or_path!r} escapes the corpus folder")
        root = self.root
        full = (root / pure).resolve()
        # resolve() follows symlinks: a link pointing outside the folder is refused as well
        if not full.is_relative_to(root):
            raise CorpusError(f"corpus path {url_or_path!r} escapes the corpus folder")
        return full

    # --- database -----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=30)
        try:
            secure(conn)  # a deleted or replaced document leaves no bytes behind (search/erasure.py)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
            columns = {info[1] for info in conn.execute("PRAGMA table_info(passages)")}
            if row is None or row[0] != INDEX_VERSION or (columns and columns != set(_COLUMNS)):
                # another extractor or another set of columns: rebuild from scratch
                with conn:
                    conn.execute("DROP TABLE IF EXISTS passages")
                    conn.execute("DROP TABLE IF EXISTS files")
                    conn.execute("DROP TABLE IF EXISTS texts")
                    conn.execute("DROP TABLE IF EXISTS boilerplate")
                    conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('index_version', ?)",
                        (INDEX_VERSION,),
                    )
            conn.executescript(_SCHEMA)
        except sqlite3.OperationalError as exc:
            conn.close()
            if "fts5" in str(exc).lower():
                raise CorpusError("this Python's sqlite3 has no FTS5 support") from exc
            raise
        return conn

    def _search_sync(self, query: str, expression: str, limit: int) -> list[SearchResult]:
        conn = self._connect()
        try:
            if self._ranker is None:
                self._ranker = DocumentRanker(conn, self._repeated()[1])
            rows = []
            for file_id in self._ranker.rank(conn, query, limit):
                low = file_id << _SEQ_BITS
                params = {"q": expression, "file_id": file_id, "low": low, "high": low | _MAX_PASSAGES}
                row = conn.execute(_SNIPPET_SQL, params).fetchone()
                if row is None:  # found by the feedback terms only: its first passage stands for it
                    row = conn.execute(_FIRST_SQL, params).fetchone()
                if row is not None:
                    rows.append(row)
        finally:
            conn.close()
        return [
            SearchResult(
                title=title or path,
                url=self.url_for(path),
                snippet=" ".join(_ESCAPED_COMMENT.sub(r"\1#", snippet).replace(LINE_BREAK, " ").split()),
                published=_iso(mtime_ns),
                provider="corpus",
            )
            for path, title, snippet, mtime_ns in rows
        ]

    def _walk(self) -> list[tuple[str, Path]]:
        return list(folder_documents(self.root))

    def _reindex_sync(self, report: Callable[[int, int], None], every: float) -> IndexStats:
        if not self.corpus_dir.is_dir():
            raise CorpusError(f"corpus folder {self.corpus_dir} does not exist")
        counts = {"added": 0, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0, "empty": 0}
        empty: list[str] = []
        conn = self._connect()
        try:
            known = {
                path: _Known(file_id, mtime_ns, size, sha)
                for file_id, path, mtime_ns, size, sha in conn.execute(
                    "SELECT id, path, mtime_ns, size, sha256 FROM files"
                )
            }
            seen: set[str] = set()
            files = self._walk()
            last, reported = time.monotonic(), 0
            for done, (relative, path) in enumerate(files, start=1):
                seen.add(relative)
                outcome = self._index_file(conn, relative, path, known.get(relative))
                counts[outcome] += 1
                empty += [relative] if outcome == "empty" else []
                if time.monotonic() - last >= every or (reported and done == len(files)):
                    report(done, len(files))
                    last, reported = time.monotonic(), done
            if empty:  # said once: ImageMagick's 123 pages had read as empty, silently, and answered nothing
                shown = ", ".join(empty[:3]) + (", ..." if len(empty) > 3 else "")
                logger.warning(
                    "corpus: %d of %d files hold no text to search (%s)", len(empty), len(files), shown
                )
            counts["removed"] = forget_files(conn, sorted(known.keys() - seen))
            if counts["updated"] and not counts["removed"]:
                scrub(conn)  # a replaced document's old text goes as a deleted one's does
            with conn:  # which folder this is: an index whose folder is gone is deleted (sweep_indexes)
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('corpus_dir', ?)", (str(self.root),)
                )
            found = conn.execute("SELECT value FROM meta WHERE key = 'repeats_version'").fetchone()
            changed = counts["added"] or counts["updated"] or counts["empty"] or counts["removed"]
            if changed or found != (REPEATS_VERSION,):
                self._find_repeats(conn)
        finally:
            conn.close()
        self._repeats, self._ranker = None, None
        return IndexStats(**counts)

    @staticmethod
    def _find_repeats(conn: sqlite3.Connection) -> None:
        """Boilerplate blocks and duplicate documents over the whole corpus (search/repeats.py): after any
        change, since one new page can make a block common or a file a copy."""
        rows = conn.execute("SELECT id, path, blocks, shingles FROM files WHERE error IS NULL").fetchall()
        common = boilerplate([blocks for _, _, blocks, _ in rows])
        copies = duplicates((file_id, path, shingles) for file_id, path, _, shingles in rows)
        with conn:
            conn.execute("DELETE FROM boilerplate")
            conn.executemany("INSERT INTO boilerplate (key) VALUES (?)", [(key,) for key in sorted(common)])
            conn.execute("UPDATE files SET duplicate_of = NULL")
            conn.executemany(
                "UPDATE files SET duplicate_of = ? WHERE id = ?", [(kept, i) for i, kept in copies.items()]
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('repeats_version', ?)", (REPEATS_VERSION,)
            )
        logger.info("corpus: %d boilerplate blocks, %d duplicate documents", len(common), len(copies))

    def _repeated(self) -> tuple[frozenset[int], frozenset[int]]:
        """(boilerplate block keys, ids of duplicate documents), read once per index object."""
        if self._repeats is None:
            conn = self._connect()
            try:
                keys = frozenset(key for (key,) in conn.execute("SELECT key FROM boilerplate"))
                copies = frozenset(
                    i for (i,) in conn.execute("SELECT id FROM files WHERE duplicate_of IS NOT NULL")
                )
            finally:
                conn.close()
            self._repeats = (keys, copies)
        return self._repeats

    def _index_file(self, conn: sqlite3.Connection, relative: str, path: Path, known: _Known | None) -> str:
        try:
            stat = path.stat()
        except OSError as exc:
            logger.warning("corpus: cannot stat %s: %s", path, exc)
            return "failed"
        if known is not None and (known.mtime_ns, known.size) == (stat.st_mtime_ns, stat.st_size):
            return "unchanged"
        error: str | None = None
        title, passages, digest, text = relative, [], "", None
        prints = Fingerprint(b"", b"")
        if stat.st_size > self.max_file_bytes:
            error = f"file is larger than {self.max_file_bytes} bytes"
        else:
            try:
                data = path.read_bytes()
            except OSError as exc:
                logger.warning("corpus: cannot read %s: %s", path, exc)
                return "failed"
            digest = hashlib.sha256(data).hexdigest()
            if known is not None and known.sha256 == digest:
                # touched but identical: remember the new mtime so it is not hashed again
                with conn:
                    conn.execute(
                        "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?",
                        (stat.st_mtime_ns, stat.st_size, known.file_id),
                    )
                return "unchanged"
            try:
                extracted = self.extract(path, data)
                title, passages, text = extracted.title, passage_sections(extracted.text), extracted.text
                prints = fingerprint(text)
            except Exception as exc:
                # a malformed PDF/HTML file must not stop the whole corpus from being indexed
                error = f"{type(exc).__name__}: {exc}"
        if error is not None:
            logger.warning("corpus: cannot index %s: %s", relative, error)
        if len(passages) > _MAX_PASSAGES:
            logger.warning(
                "corpus: %s has %d passages; keeping the first %d", relative, len(passages), _MAX_PASSAGES
            )
            passages = passages[:_MAX_PASSAGES]
        with conn:
            if known is None:
                cursor = conn.execute(
                    "INSERT INTO files (path, mtime_ns, size, sha256, title, passage_count, error, blocks, "
                    "shingles) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (relative, stat.st_mtime_ns, stat.st_size, digest, title, len(passages), error, *prints),
                )
                file_id = int(cursor.lastrowid or 0)
            else:
                file_id = known.file_id
                self._delete_passages(conn, file_id)
                conn.execute(
                    "UPDATE files SET mtime_ns = ?, size = ?, sha256 = ?, title = ?, passage_count = ?, "
                    "error = ?, blocks = ?, shingles = ? WHERE id = ?",
                    (stat.st_mtime_ns, stat.st_size, digest, title, len(passages), error, *prints, file_id),
                )
            if text is not None:  # the fetch stage reads this instead of parsing the file again
                conn.execute("INSERT OR REPLACE INTO texts (file_id, text) VALUES (?, ?)", (file_id, text))
            conn.executemany(
                "INSERT INTO passages (rowid, title, headings, body) VALUES (?, ?, ?, ?)",
                [
                    ((file_id << _SEQ_BITS) | seq, title, headings, body)
                    for seq, (headings, body) in enumerate(passages)
                ],
            )
        if error is not None:
            return "failed"
        if not passages:
            return "empty"
        return "added" if known is None else "updated"

    @staticmethod
    def _delete_passages(conn: sqlite3.Connection, file_id: int) -> None:
        low = file_id << _SEQ_BITS
        conn.execute("DELETE FROM passages WHERE rowid BETWEEN ? AND ?", (low, low | _MAX_PASSAGES))
        conn.execute("DELETE FROM texts WHERE file_id = ?", (file_id,))

    def _cached_text(self, relative: str, stat: os.stat_result) -> tuple[str, str] | None:
        """The text the index extracted, if the file is unchanged since (same mtime and size)."""
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT files.title, texts.text FROM files JOIN texts ON texts.file_id = files.id "
                "WHERE files.path = ? AND files.mtime_ns = ? AND files.size = ?",
                (relative, stat.st_mtime_ns, stat.st_size),
            ).fetchone()
        finally:
            conn.close()
        return (row[0], row[1]) if row is not None else None

    def _read_sync(self, url: str) -> CorpusDocument:
        if not url.startswith(CORPUS_SCHEME):
            raise CorpusError(f"not a corpus URL: {url!r}")
        path = self.resolve(url)
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise CorpusError(f"unsupported corpus file type: {url!r}")
        try:
            stat = path.stat()
            if stat.st_size > self.max_file_bytes:
                raise CorpusError(f"corpus file {url!r} is larger than {self.max_file_bytes} bytes")
            cached = self._cached_text(url[len(CORPUS_SCHEME) :], stat)
            if cached is not None:
                title, text = cached
                return CorpusDocument(
                    url=url, path=path, title=title, text=self._clean(text), modified=_iso(stat.st_mtime_ns)
                )
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise CorpusError(f"corpus file not found: {url!r}") from exc
        except OSError as exc:
            raise CorpusError(f"cannot read corpus file {url!r}: {exc}") from exc
        try:
            extracted = self.extract(path, data)
        except Exception as exc:
            # same reasoning as indexing: report a readable error instead of a parser traceback
            raise CorpusError(f"cannot extract text from {url!r}: {type(exc).__name__}: {exc}") from exc
        return CorpusDocument(
            url=url,
            path=path,
            title=extracted.title,
            text=self._clean(extracted.text),
            modified=_iso(stat.st_mtime_ns),
        )

    def _clean(self, text: str) -> str:
        """The text as a source: without the blocks the corpus repeats on many pages (navigation, footers)
        and without copyright and licence notices."""
        return strip_boilerplate(text, self._repeated()[0])
