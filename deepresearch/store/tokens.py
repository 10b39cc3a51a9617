"""The API tokens' and the workbench sessions' SQL (a part of SqlRunStore): both are stored as SHA-256 hashes,
never in clear. A session is made from a token and lasts while both are valid."""

from __future__ import annotations

from deepresearch.store.base import TokenRecord, record_from_row, utcnow
from deepresearch.store.core import SqlCore, Statements


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

    async def add_session(self, session_hash: str, token_id: str, expires_at: str) -> None:
        """A new sign-in; the sessions that expired before now go in the same transaction (no sweeper)."""
        now = utcnow()

        async def body(tx: Statements) -> None:
            await tx.execute("DELETE FROM browser_sessions WHERE expires_at <= ?", (now,))
            await tx.execute(
                "INSERT INTO browser_sessions (session_hash, token_id, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (session_hash, token_id, now, expires_at),
            )

        await self._atomic(body)

    async def find_session(self, session_hash: str) -> TokenRecord | None:
        """The token a live session was made from: the session neither revoked nor expired, and its token
        not revoked (revoking a token ends every session made from it)."""
        rows = await self._read(
            "SELECT t.* FROM browser_sessions s JOIN api_tokens t ON t.token_id = s.token_id"
            " WHERE s.session_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?"
            " AND t.revoked_at IS NULL",
            (session_hash, utcnow()),
        )
        return record_from_row(TokenRecord, rows[0]) if rows else None

    async def revoke_session(self, session_hash: str) -> bool:
        """Sign out: the session is refused from now on, on every replica. False: no live session."""
        count, _ = await self._write(
            "UPDATE browser_sessions SET revoked_at = ? WHERE session_hash = ? AND revoked_at IS NULL",
            (utcnow(), session_hash),
        )
        return count > 0
