"""The documents a corpus folder holds, as the indexer reads them, and a quick check that it holds any."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from deepresearch.search.documents import SUPPORTED_SUFFIXES

__all__ = [
    "DOCUMENT_KINDS",
    "HAS_DOCUMENTS_SCAN",
    "folder_documents",
    "has_documents",
    "sphinx_chrome",
    "sphinx_copy",
]

logger = logging.getLogger(__name__)

DOCUMENT_KINDS = ".md, .txt, .html or .pdf"
"""The kinds of document a corpus folder is searched for, as messages name them (SUPPORTED_SUFFIXES)."""


class _ScanLimit(Exception):
    """More files looked at than a quick check may take."""


def folder_documents(root: Path, scan_limit: int | None = None) -> Iterator[tuple[str, Path]]:
    """The documents a corpus folder holds (relative path, path): supported suffixes, no hidden files or
    folders, no symlink out of the folder, no Sphinx copy of a page that is there nor a Sphinx build's theme
    files and generated pages. Past ``scan_limit`` file names looked at, raises _ScanLimit."""
    scanned = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(name for name in dirnames if not name.startswith("."))
        for name in sorted(filenames):
            scanned += 1
            if scan_limit is not None and scanned > scan_limit:
                raise _ScanLimit
            if name.startswith(".") or Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            path = Path(dirpath) / name
            if not path.resolve().is_relative_to(root):
                logger.debug("corpus: skipping %s (symlink outside the corpus folder)", path)
                continue
            relative = path.relative_to(root).as_posix()
            if not sphinx_copy(root, relative) and not sphinx_chrome(root, relative):
                yield relative, path


def sphinx_copy(root: Path, relative: str) -> bool:
    """A Sphinx build ships each page twice: x.html and its source, _sources/x.rst.txt (or x.txt). The source
    copy of a page that is there as HTML is left out: indexing both would make every page two sources."""
    if not relative.startswith("_sources/"):
        return False
    page = relative.removeprefix("_sources/")
    for suffix in (".rst.txt", ".txt"):
        if page.endswith(suffix):
            return (root / (page.removesuffix(suffix) + ".html")).is_file()
    return False


_GENERATED = re.compile(r"(?:genindex(?:-\w+)?|py-modindex|modindex|search|404)\.html")
_ASSETS = frozenset(("_static", "_images", "_modules"))
"""The theme's files, the pictures, and the highlighted source of each module (viewcode's "Source code for
celery.platforms": the API pages hold its docstrings)."""


def sphinx_chrome(root: Path, relative: str) -> bool:
    """What a Sphinx build holds besides its pages (a folder with its searchindex.js or objects.inv, or with
    its _static/ theme and genindex.html): the theme's files (_static/: a font's read-me, "Read Me File for
    Adobe OpenType Fonts"), the source code viewcode highlights (_modules/), and the pages it generates -
    the index of terms, the search page, the "page not found" page - which say nothing."""
    parts = relative.split("/")
    if _GENERATED.fullmatch(parts[-1]) and _sphinx_build(root.joinpath(*parts[:-1])):
        return True
    return any(
        part in _ASSETS and _sphinx_build(root.joinpath(*parts[:i])) for i, part in enumerate(parts[:-1])
    )


def _sphinx_build(folder: Path) -> bool:
    # a packager may drop the search index and the inventory (Debian's bind9-doc): its theme and index stay;
    # a copy of the pages alone still has the index and the search page side by side
    marks = (folder / "searchindex.js").is_file() or (folder / "objects.inv").is_file()
    pages = (folder / "genindex.html").is_file() and (
        (folder / "_static").is_dir() or (folder / "search.html").is_file()
    )
    return marks or pages


HAS_DOCUMENTS_SCAN = 10_000
"""File names has_documents looks at, at most: it runs as a run is created, and a folder that large is left
to the indexer to judge."""


def has_documents(folder: Path, scan_limit: int = HAS_DOCUMENTS_SCAN) -> bool:
    """Whether a corpus folder holds a document to index: stops at the first, and answers yes past
    ``scan_limit`` file names (the check must stay quick; the index says the rest)."""
    try:
        return next(folder_documents(folder.resolve(), scan_limit), None) is not None
    except _ScanLimit:
        return True
