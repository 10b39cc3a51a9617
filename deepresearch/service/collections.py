"""Document collections a run may search: the operator's (DEEPRESEARCH_CORPUS_ROOTS, offered to everyone) and
each user's own, uploaded through the API into ``<home>/uploads/<user>/<collection>/``.

A run names a collection (``options.corpus``); only the CLI names a folder. Uploads are checked by name,
type and size, written atomically (a reader never sees half a file), and indexed incrementally by the next
run that searches the collection (search/corpus.py re-reads only files whose size or time changed).
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import logging
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from config import Settings
from deepresearch.cpu import CpuPool, CpuWorkerLost
from deepresearch.errors import (
    DocumentNotFound,
    InvalidInput,
    QuotaExceeded,
    TooManyRequests,
    UnsupportedDocument,
)
from deepresearch.options import CORPUS_NAME_PATTERN
from deepresearch.search.corpus import CorpusIndex
from deepresearch.search.documents import DocumentLimit, read_within_limits
from deepresearch.search.erasure import drop_index, index_path
from deepresearch.service.auth import Principal
from deepresearch.service.contracts import CollectionPublic, DocumentPublic, StoragePublic

logger = logging.getLogger(__name__)


def _parse_errors() -> tuple[type[Exception], ...]:
    """What pypdf raises on a malformed file (its own errors, and the builtins its parsing code lets
    through). pypdf is imported at the first PDF upload, not with the server: start-up CPU."""
    from pypdf.errors import PyPdfError

    return (PyPdfError, ValueError, KeyError, TypeError, IndexError, AttributeError, OSError)


FILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,140}\.(md|MD|txt|TXT|html|HTML|htm|HTM|pdf|PDF)$"
"""A plain file name with an extension the corpus indexes (also stated in the OpenAPI document)."""
_FILE_NAME = re.compile(FILE_NAME_PATTERN)
_COLLECTION_NAME = re.compile(CORPUS_NAME_PATTERN)
# fullmatch, never match: "$" also matches before a final newline, so match() takes "notes\n" for "notes"
# the types the corpus indexes, by extension, with the media types a client may send for them
MEDIA_TYPES = {
    ".md": {"text/markdown", "text/plain", "text/x-markdown", "application/octet-stream"},
    ".txt": {"text/plain", "application/octet-stream"},
    ".html": {"text/html", "application/octet-stream"},
    ".htm": {"text/html", "application/octet-stream"},
    ".pdf": {"application/pdf", "application/octet-stream"},
}


class Collections:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @functools.cached_property
    def uploads(self) -> Path:
        """Resolved on first use, which is in a worker thread (resolving stats the path's folders), not
        when the service is built on the event loop."""
        return self.settings.home.resolve() / "uploads"

    # --- what a principal may search -----------------------------------------------------------
    def names(self, principal: Principal) -> list[str]:
        return sorted(set(self.settings.corpus_roots) | set(self._uploaded(principal)))

    def offered(self, principal: Principal) -> list[CollectionPublic]:
        uploaded = self._uploaded(principal)
        listed = [
            CollectionPublic(name=name, kind="server", documents=None)
            for name in sorted(self.settings.corpus_roots)
        ]
        listed += [
            CollectionPublic(name=name, kind="uploaded", documents=len(self._files(folder)))
            for name, folder in sorted(uploaded.items())
        ]
        return listed

    def resolve(self, name: str, principal: Principal) -> Path | None:
        """The folder of collection `name` as `principal` sees it (their own uploads first), or None."""
        own = self._uploaded(principal).get(name)
        if own is not None:
            return own
        root = self.settings.corpus_roots.get(name)
        return root.resolve() if root is not None else None

    def describe(self, principal: Principal) -> str:
        names = self.names(principal)
        if not names:
            return (
                "this server offers none: upload documents (PUT /api/collections/NAME/documents/FILE) or ask "
                "the operator to list folders in DEEPRESEARCH_CORPUS_ROOTS"
            )
        return "available: " + ", ".join(names)

    # --- uploads ---------------------------------------------------------------------------------
    def documents(self, principal: Principal, name: str) -> list[DocumentPublic]:
        folder = self._uploaded(principal).get(name)
        if folder is None:
            raise DocumentNotFound("you have no uploaded collection of that name")
        return [DocumentPublic(name=p.name, size=p.stat().st_size) for p in self._files(folder)]

    async def upload(
        self, principal: Principal, name: str, file_name: str, body: bytes, media_type: str, cpu: CpuPool
    ) -> DocumentPublic:
        """`put`, after a PDF is read once in a CPU worker within DEEPRESEARCH_DOCUMENT_MAX_PAGES and
        DEEPRESEARCH_DOCUMENT_PARSE_SECONDS: what a run could not index is refused now (422), and a
        crafted PDF costs a worker that long at most, never the server's own process."""
        suffix = _check_file_name(file_name)
        _check_content(suffix, body, media_type)
        if suffix == ".pdf":
            limits = (self.settings.document_max_pages, self.settings.document_parse_seconds)
            parse_errors = await asyncio.to_thread(_parse_errors)  # the first imports pypdf: off the loop
            try:
                await read_within_limits(cpu, file_name, body, *limits)
            except DocumentLimit as exc:
                raise InvalidInput(str(exc), "body") from None
            except CpuWorkerLost:
                raise UnsupportedDocument("the PDF cannot be read: its parser crashed") from None
            except parse_errors:  # a malformed PDF is stored and indexed as failed, as before; not refused
                logger.info("uploaded PDF %s does not parse; stored, it will be indexed as failed", file_name)
        return await asyncio.to_thread(self.put, principal, name, file_name, body, media_type)

    def put(
        self, principal: Principal, name: str, file_name: str, body: bytes, media_type: str
    ) -> DocumentPublic:
        """Store (or replace) one document in the user's collection `name`, created on first use."""
        _check_collection_name(name)
        if name in self.settings.corpus_roots:
            raise InvalidInput(
                "that name is a collection of this server; upload into a collection of another name",
                "path.name",
            )
        suffix = _check_file_name(file_name)
        _check_content(suffix, body, media_type)
        with self._locked(principal):
            return self._put_locked(principal, name, file_name, body)

    def _put_locked(self, principal: Principal, name: str, file_name: str, body: bytes) -> DocumentPublic:
        """Count and write under the user's lock: uploads at once cannot all pass the same count."""
        folder = self._folder(principal, name)
        existing = self._files(folder) if folder.is_dir() else []
        replaced = next((p.stat().st_size for p in existing if p.name == file_name), None)
        if replaced is None and len(existing) >= self.settings.max_documents_per_collection:
            raise InvalidInput(
                f"the collection holds {len(existing)} documents, the most allowed "
                "(DEEPRESEARCH_MAX_DOCUMENTS_PER_COLLECTION); delete some first",
                "path.file_name",
            )
        self._check_quota(principal, folder, len(body) - (replaced or 0))
        folder.mkdir(parents=True, exist_ok=True)
        # written next to its final name, then renamed: the index never reads half a document
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".upload-", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(body)
            os.replace(temporary, folder / file_name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return DocumentPublic(name=file_name, size=len(body))

    def storage(self, principal: Principal) -> StoragePublic:
        """How much of the user's quota their uploads use."""
        uploaded = self._uploaded(principal)
        return StoragePublic(
            bytes=sum(p.stat().st_size for folder in uploaded.values() for p in self._files(folder)),
            max_bytes=self.settings.max_storage_bytes_per_user,
            collections=len(uploaded),
            max_collections=self.settings.max_collections_per_user,
        )

    def _check_quota(self, principal: Principal, folder: Path, growth: int) -> None:
        used = self.storage(principal)
        if not folder.is_dir() and used.collections >= used.max_collections:
            raise TooManyRequests(
                f"you have {used.collections} collections, the most allowed "
                "(DEEPRESEARCH_MAX_COLLECTIONS_PER_USER); upload into one of them or delete one first",
                retry_after=60,
            )
        if growth > 0 and used.bytes + growth > used.max_bytes:
            raise QuotaExceeded(
                f"your documents take {used.bytes} of {used.max_bytes} bytes; this one needs {growth} more "
                "(DEEPRESEARCH_MAX_STORAGE_BYTES_PER_USER); delete some first"
            )

    @contextmanager
    def _locked(self, principal: Principal) -> Iterator[None]:
        """The user's upload lock: an exclusive flock on <uploads>/<user>/.lock, which orders the uploads
        and deletes of every thread and every process on this machine (replicas sharing the folder)."""
        mine = self.uploads / principal.user
        mine.mkdir(parents=True, exist_ok=True)
        with open(mine / ".lock", "ab") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
            yield

    def delete(self, principal: Principal, name: str, file_name: str) -> None:
        with self._locked(principal):
            self._delete_locked(principal, name, file_name)

    def _delete_locked(self, principal: Principal, name: str, file_name: str) -> None:
        folder = self._uploaded(principal).get(name)
        target = folder / file_name if folder is not None and _FILE_NAME.fullmatch(file_name) else None
        if target is None or not target.is_file() or target.is_symlink():
            raise DocumentNotFound("no such document in your collections")
        index = index_path(self.settings.home, folder)  # type: ignore[arg-type]
        target.unlink()
        if not self._files(folder):  # type: ignore[arg-type]
            for leftover in folder.iterdir():  # type: ignore[union-attr]
                leftover.unlink()
            folder.rmdir()  # type: ignore[union-attr]
            drop_index(index)
        elif index.is_file():  # out of the index now, not at the next run's re-index: no copy is kept
            CorpusIndex(index, folder).forget_sync([file_name])  # type: ignore[arg-type]

    # --- internals -------------------------------------------------------------------------------
    def _folder(self, principal: Principal, name: str) -> Path:
        return self.uploads / principal.user / name

    def _uploaded(self, principal: Principal) -> dict[str, Path]:
        mine = self.uploads / principal.user
        if not mine.is_dir():
            return {}
        return {
            p.name: p
            for p in mine.iterdir()
            if p.is_dir() and not p.is_symlink() and _COLLECTION_NAME.fullmatch(p.name)
        }

    @staticmethod
    def _files(folder: Path) -> list[Path]:
        return sorted(
            p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
        )


def _check_collection_name(name: str) -> None:
    if not _COLLECTION_NAME.fullmatch(name):
        raise InvalidInput(
            "letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit", "path.name"
        )


def _check_file_name(file_name: str) -> str:
    suffix = Path(file_name).suffix.lower()
    if suffix not in MEDIA_TYPES:
        raise UnsupportedDocument(f"only {', '.join(sorted(MEDIA_TYPES))} documents can be searched")
    if not _FILE_NAME.fullmatch(file_name):
        raise InvalidInput(
            "a plain file name: letters, digits, spaces, '.', '_', '-', '(', ')', at most 145 characters",
            "path.file_name",
        )
    return suffix


def _check_content(suffix: str, body: bytes, media_type: str) -> None:
    media_type = media_type.split(";")[0].strip().lower()
    if media_type not in MEDIA_TYPES[suffix]:
        expected = " or ".join(sorted(MEDIA_TYPES[suffix] - {"application/octet-stream"}))
        raise UnsupportedDocument(
            f"a {suffix} document is sent as {expected}, not {media_type or 'no Content-Type'}"
        )
    if not body:
        raise InvalidInput("the document is empty", "body")
    if suffix == ".pdf":
        if not body.startswith(b"%PDF-"):
            raise UnsupportedDocument("the file is named .pdf but is not a PDF")
        return
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        raise UnsupportedDocument(f"a {suffix} document must be UTF-8 text") from None
    if b"\x00" in body:
        raise UnsupportedDocument(f"a {suffix} document must be text (it holds NUL bytes)")
