"""Bulky texts, stored once and content-addressed (a part of SqlRunStore).

A page's text is the bulkiest value a run has. It used to ride in the graph state (so every checkpoint
re-serialised every source's text) and in the fetch receipt; an LLM call's prompt (which quotes passages of
those pages) sat whole in its receipt. Now each is written once here, keyed by the SHA-256 of its UTF-8
bytes and zlib-compressed; the state and the receipts carry only the hash. ``run_texts`` says which runs use
which text, so deleting (or pruning) a run removes the texts no other run uses, in the same transaction.

Concurrent writers and deleters of one text (two runs that fetched the same page, one being deleted):
``put_text`` upserts the text row (taking its row lock) before linking it; ``forget_run_texts`` locks the
run's text rows before deleting those no other run links. Whichever comes second sees the other's commit,
so a linked text is never deleted (on SQLite, transactions are serial anyway).
"""

from __future__ import annotations

import asyncio
import hashlib
import zlib
from collections.abc import Iterable

from deepresearch.store.base import utcnow
from deepresearch.store.core import SqlCore, Statements

_LEVEL = 6
_OFF_LOOP_BYTES = 64_000  # zlib releases the GIL: bigger texts compress in a worker thread


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def _packed(data: bytes) -> bytes:
    if len(data) >= _OFF_LOOP_BYTES:
        return await asyncio.to_thread(zlib.compress, data, _LEVEL)
    return zlib.compress(data, _LEVEL)


class TextSql(SqlCore):
    async def put_text(self, run_id: str, text: str, *, fence: str | None = None) -> str:
        """Store `text` for `run_id` (once, whoever stored it first) and return its SHA-256 hex digest.
        With `fence`, only while that lease owner holds the run (LeaseLost otherwise), like every write of
        an execution."""
        prepared = await self._prepare_text(text)

        async def body(tx: Statements) -> None:
            await self._hold_lease(tx, run_id, fence)
            await self._store_text(tx, run_id, prepared)

        await self._atomic(body)
        return prepared[0]

    async def _prepare_text(self, text: str) -> tuple[str, int, bytes]:
        """(digest, chars, compressed bytes) of `text` as this database stores it: valid UTF-8 (and on
        PostgreSQL no NUL) like every TEXT; the digest names what is stored."""
        stored = self.dialect.storable(text)
        raw = stored.encode("utf-8")
        return hashlib.sha256(raw).hexdigest(), len(stored), await _packed(raw)

    async def _store_text(self, tx: Statements, run_id: str, prepared: tuple[str, int, bytes]) -> None:
        digest, chars, packed = prepared
        # DO UPDATE, not DO NOTHING: it takes the row lock a concurrent forget_run_texts waits on
        await tx.execute(
            "INSERT INTO texts (sha256, data, chars, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (sha256) DO UPDATE SET chars = excluded.chars",
            (digest, packed, chars, utcnow()),
        )
        await tx.execute(
            "INSERT INTO run_texts (run_id, sha256) VALUES (?, ?) ON CONFLICT DO NOTHING", (run_id, digest)
        )

    async def get_texts(self, digests: Iterable[str]) -> dict[str, str]:
        """The stored texts of these digests (a digest that is not stored is absent from the answer)."""
        wanted = sorted(set(digests))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 200):  # bounded IN lists
            chunk = wanted[start : start + 200]
            marks = ", ".join("?" for _ in chunk)
            rows = await self._read(f"SELECT sha256, data FROM texts WHERE sha256 IN ({marks})", chunk)
            found.update({row["sha256"]: zlib.decompress(bytes(row["data"])).decode("utf-8") for row in rows})
        return found

    async def run_text_digests(self, run_id: str) -> list[str]:
        rows = await self._read("SELECT sha256 FROM run_texts WHERE run_id = ? ORDER BY sha256", (run_id,))
        return [row["sha256"] for row in rows]

    async def forget_run_texts(self, tx: Statements, run_id: str) -> None:
        """Inside the transaction deleting `run_id`: unlink its texts and delete those no other run uses."""
        if self.dialect.name == "postgres":
            await tx.execute(
                "SELECT sha256 FROM texts WHERE sha256 IN"
                " (SELECT sha256 FROM run_texts WHERE run_id = ?) ORDER BY sha256 FOR UPDATE",
                (run_id,),
            )
        await tx.execute(
            "DELETE FROM texts WHERE sha256 IN (SELECT sha256 FROM run_texts WHERE run_id = ?)"
            " AND NOT EXISTS (SELECT 1 FROM run_texts other"
            " WHERE other.sha256 = texts.sha256 AND other.run_id <> ?)",
            (run_id, run_id),
        )
        await tx.execute("DELETE FROM run_texts WHERE run_id = ?", (run_id,))
