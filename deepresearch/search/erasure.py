"""Where a folder's corpus index lives, and how a deleted document leaves it without a trace.

A corpus index (search/corpus.py) keeps each file's text three times: in the ``texts`` table, in the FTS5
table's content and in its term index. Deleting the rows is not enough: SQLite leaves deleted bytes in
free pages and in the write-ahead log, and FTS5 keeps a deleted document's terms in its segments until
they are merged. So every index connection runs with ``secure_delete`` (freed bytes are overwritten with
zeros), a removal merges the FTS5 segments (``optimize``) and the WAL is checkpointed and truncated. An
index whose folder is gone is deleted with its WAL.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from pathlib import Path

from deepresearch.search.ranking import SEQ_BITS

__all__ = ["drop_index", "forget_files", "index_path", "scrub", "secure", "sweep_indexes"]

logger = logging.getLogger(__name__)

_MAX_PASSAGES = (1 << SEQ_BITS) - 1


def index_path(home: Path, corpus_dir: Path) -> Path:
    """One index per corpus folder (an incremental re-index of one folder must not drop another's)."""
    digest = hashlib.sha256(str(Path(corpus_dir).resolve()).encode()).hexdigest()[:12]
    return Path(home) / f"corpus-{digest}.db"


def secure(conn: sqlite3.Connection) -> None:
    """Deleted rows are overwritten, not only unlinked (set on every connection: it is not persistent)."""
    conn.execute("PRAGMA secure_delete=ON")


def forget_files(conn: sqlite3.Connection, relatives: list[str]) -> int:
    """Remove these corpus-relative paths from the index; the number of files it held. Leaves no copy."""
    removed = 0
    with conn:
        for relative in relatives:
            row = conn.execute("SELECT id FROM files WHERE path = ?", (relative,)).fetchone()
            if row is None:
                continue
            low = int(row[0]) << SEQ_BITS
            conn.execute("DELETE FROM passages WHERE rowid BETWEEN ? AND ?", (low, low | _MAX_PASSAGES))
            conn.execute("DELETE FROM texts WHERE file_id = ?", (row[0],))
            conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
            removed += 1
    if removed:
        scrub(conn)
    return removed


def scrub(conn: sqlite3.Connection) -> None:
    """After deletes: merge FTS5's segments (a deleted document's terms go with the merge), then write
    the WAL into the file and truncate it, so no old page stays in either."""
    with conn:
        conn.execute("INSERT INTO passages(passages) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def drop_index(path: Path) -> None:
    """Delete an index and its WAL and shared-memory files (its folder is gone)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()
    logger.info("corpus index %s deleted with its folder", path.name)


def sweep_indexes(home: Path) -> list[Path]:
    """Delete the indexes in `home` whose folder is gone (a collection whose last document was deleted
    while an index was open, a folder removed by hand); the ones deleted. An index that does not say its
    folder (made before it did) is left alone."""
    dropped: list[Path] = []
    for path in sorted(Path(home).glob("corpus-*.db")):
        try:
            conn = sqlite3.connect(path, timeout=30)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'corpus_dir'").fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            logger.warning("corpus index %s cannot be read; left as it is", path, exc_info=True)
            continue
        if row is not None and not Path(row[0]).is_dir():
            drop_index(path)
            dropped.append(path)
    return dropped
