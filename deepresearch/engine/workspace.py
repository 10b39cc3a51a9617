"""The run workspace: atomic, idempotent artifact writes that can never escape the workspace root."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path

from deepresearch.errors import DeepResearchError

# a write's result is kept in its receipt: its type is the receipts' (tools and specs read it there)
from deepresearch.receipts.results import WrittenFile


class WorkspaceError(DeepResearchError, ValueError):
    """A path that escapes the workspace. Callers that take a path from a request turn it into a 404; one
    that reaches a front end untranslated is a fault of the server (HTTP 500, logged with its traceback)."""


def slugify(text: str, max_length: int = 48) -> str:
    normalized = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", normalized.lower()).strip("-")
    return slug[:max_length].rstrip("-") or "research"


def run_artifact_dir(question: str, run_id: str) -> str:
    """Relative artifact folder of a run: research/<topic-slug>-<short-run-id>."""
    return f"research/{slugify(question)}-{run_id[:8]}"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, relative_path: str) -> Path:
        """Absolute path for a workspace-relative path; refuses anything that would leave the root."""
        if not relative_path or "\x00" in relative_path:
            raise WorkspaceError("empty or invalid workspace path")
        candidate = Path(relative_path)
        if candidate.is_absolute() or any(part == ".." for part in candidate.parts):
            raise WorkspaceError(f"path {relative_path!r} escapes the workspace")
        target = (self.root / candidate).resolve()
        if target != self.root and self.root not in target.parents:
            raise WorkspaceError(f"path {relative_path!r} escapes the workspace")
        return target

    async def write_bytes(self, relative_path: str, data: bytes) -> WrittenFile:
        return await asyncio.to_thread(self._write_sync, relative_path, data)

    async def write_text(self, relative_path: str, text: str) -> WrittenFile:
        return await self.write_bytes(relative_path, text.encode("utf-8"))

    def _write_sync(self, relative_path: str, data: bytes) -> WrittenFile:
        target = self.resolve(relative_path)
        digest = sha256_bytes(data)
        if (
            target.is_file()
            and target.stat().st_size == len(data)
            and sha256_bytes(target.read_bytes()) == digest
        ):
            return WrittenFile(relative_path, digest, len(data), written=False)
        target.parent.mkdir(parents=True, exist_ok=True)
        # temp file in the same directory + os.replace: readers see the old or the new file, never half.
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
        return WrittenFile(relative_path, digest, len(data), written=True)

    async def read_text(self, relative_path: str) -> str:
        return await asyncio.to_thread(self.resolve(relative_path).read_text, "utf-8")

    def file_digest(self, relative_path: str) -> str | None:
        target = self.resolve(relative_path)
        return sha256_bytes(target.read_bytes()) if target.is_file() else None
