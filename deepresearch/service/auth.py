"""Who is asking: API tokens (created and revoked with the CLI, stored as hashes) and the principal a request
acts as, which decides the runs it can see.

A workbench session (``drs_<secret>``, in an HttpOnly cookie) is made from a token by signing in: only its
SHA-256 is stored, it expires (``DEEPRESEARCH_SESSION_SECONDS``), signing out revokes it, and so does revoking
the token it was made from - the cookie never holds the token itself.

A token is ``drt_<id>_<secret>``: the id is public (``token list`` shows it, ``token revoke`` takes it), the
secret is 32 random bytes. Only the SHA-256 of the whole token is stored — a token carries 256 bits of
entropy, so a fast hash is enough (slow password hashes exist for guessable secrets).

Ownership is one rule, :func:`can_see`: a run is visible to its owner and to admins. Everyone else is told
that it does not exist (404), so run ids cannot be probed.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from deepresearch.store import LOCAL_OWNER, RunRecord, RunStore, TokenRecord, utcnow

TOKEN_PREFIX = "drt_"
_TOKEN = re.compile(r"^drt_([0-9a-f]{8})_[A-Za-z0-9_-]{43}$")
SESSION_PREFIX = "drs_"
_SESSION = re.compile(r"^drs_[A-Za-z0-9_-]{43}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Principal:
    """The user a request or command acts as."""

    user: str
    admin: bool = False
    token_id: str | None = None
    server_folders: bool = False
    """May name any folder on the server as a corpus (the CLI: its user owns the machine already)."""


CLI = Principal(LOCAL_OWNER, admin=True, server_folders=True)
"""The command line: the operator, on the server itself."""
LOCAL_CLIENT = Principal(LOCAL_OWNER)
"""An HTTP client without a token on a server that does not require one (loopback only)."""


class TokenError(ValueError):
    """A token command cannot be carried out as given; the message names the fix."""


def can_see(principal: Principal, run: RunRecord) -> bool:
    """The one ownership rule: a run is its owner's, and every admin's."""
    return principal.admin or run.owner == principal.user


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):  # match() would take "alice\n" ($ matches before a final newline)
        raise TokenError(
            f"invalid user name {name!r}: 1-64 characters, lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if name == LOCAL_OWNER:
        raise TokenError(f"{LOCAL_OWNER!r} is the owner of the CLI's runs; choose another name")
    return name


def is_loopback(host: str) -> bool:
    """A bind address reachable only from this machine (`localhost` counts; 0.0.0.0 and :: do not)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


class Tokens:
    """Create, list, revoke and check API tokens."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    async def create(self, name: str, admin: bool = False) -> tuple[TokenRecord, str]:
        """A new token for user `name`: its record and the token itself (shown once, never stored)."""
        check_name(name)
        token_id = secrets.token_hex(4)
        token = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        record = TokenRecord(
            token_id=token_id, name=name, token_hash=hash_token(token), admin=admin, created_at=utcnow()
        )
        await self.store.add_token(record)
        return record, token

    async def list(self) -> list[TokenRecord]:
        return await self.store.list_tokens()

    async def revoke(self, token_id_or_name: str) -> list[TokenRecord]:
        revoked = await self.store.revoke_tokens(token_id_or_name)
        if not revoked:
            raise TokenError(
                f"no active token with id or user name {token_id_or_name!r} (see: deepresearch token list)"
            )
        return revoked

    async def active_count(self) -> int:
        return sum(1 for t in await self.store.list_tokens() if t.revoked_at is None)

    async def authenticate(self, token: str) -> Principal | None:
        """The principal of an active token, or None (unknown, malformed or revoked)."""
        if not _TOKEN.fullmatch(token):
            return None
        record = await self.store.find_token(hash_token(token))
        if record is None:
            return None
        older_than = (datetime.now(UTC) - _TOUCH_EVERY).isoformat(timespec="milliseconds")
        await self.store.touch_token(record.token_id, older_than)
        return Principal(record.name, admin=record.admin, token_id=record.token_id)

    async def start_session(self, principal: Principal, lifetime_seconds: int) -> str:
        """A new workbench session acting as `principal` (who signed in with a token): the session id, which
        only the cookie holds (the database keeps its hash)."""
        if principal.token_id is None:
            raise TokenError("a session is made from an API token")
        session = f"{SESSION_PREFIX}{secrets.token_urlsafe(32)}"
        expires = (datetime.now(UTC) + timedelta(seconds=lifetime_seconds)).isoformat(timespec="milliseconds")
        await self.store.add_session(hash_token(session), principal.token_id, expires)
        return session

    async def session_principal(self, session: str) -> Principal | None:
        """Who a live session acts as, or None: unknown, malformed, signed out, expired, token revoked."""
        if not _SESSION.fullmatch(session):
            return None
        record = await self.store.find_session(hash_token(session))
        if record is None:
            return None
        return Principal(record.name, admin=record.admin, token_id=record.token_id)

    async def end_session(self, session: str) -> bool:
        """Sign out: the session is refused from the next request on (every replica reads the database)."""
        return bool(_SESSION.fullmatch(session)) and await self.store.revoke_session(hash_token(session))
