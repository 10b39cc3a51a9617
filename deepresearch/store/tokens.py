"""The API tokens' SQL (a part of SqlRunStore): tokens are stored as SHA-256 hashes, never in clear."""

from __future__ import annotations

from deepresearch.store.base import TokenRecord, record_from_row, utcnow
from deepresearch.store.core import SqlCore


class TokenSql(SqlCore):
    """Token statements on SqlRunStore's `_read` / `_write` (written once for both databases)."""

    async def add_token(self, record: TokenRecord) -> None:
        await self._write(
            "INSERT INTO api_tokens (token_id, name, token_hash, admin, created_at) VALUES (?, ?, ?, ?, ?)",
            (record.token_id, record.name, record.token_hash, record.admin, record.created_at),
        )

    async def find_token(self, token_hash: str) -> TokenRecord | None:
        """The active (not revoked) token with this hash."""
        rows = await self._read(
            "SELECT * FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )
        return record_from_row(TokenRecord, rows[0]) if rows else None

    async def list_tokens(self) -> list[TokenRecord]:
        rows = await self._read("SELECT * FROM api_tokens ORDER BY created_at, token_id")
        return [record_from_row(TokenRecord, row) for row in rows]

    async def revoke_tokens(self, token_id_or_name: str) -> list[TokenRecord]:
        """Revoke the token with this id, or else every active token of the user with this name."""
        now = utcnow()
        _, rows = await self._write(
            "UPDATE api_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL RETURNING *",
            (now, token_id_or_name),
        )
        if not rows:
            _, rows = await self._write(
                "UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL RETURNING *",
                (now, token_id_or_name),
            )
        return [record_from_row(TokenRecord, row) for row in rows]

    async def touch_token(self, token_id: str, older_than: str) -> None:
        """Record a use, unless one was recorded after `older_than` (one write a minute, not per request)."""
        await self._write(
            "UPDATE api_tokens SET last_used_at = ? WHERE token_id = ?"
            " AND (last_used_at IS NULL OR last_used_at < ?)",
            (utcnow(), token_id, older_than),
        )
