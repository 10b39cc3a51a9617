"""The workbench's sign-in is a server-side session (docs/security.md, "Tokens and ownership"): its cookie
holds a random id, not the API token; signing out, its expiry and revoking its token each end it, on SQLite
and PostgreSQL. Live servers on loopback; HTTPS is what a reverse proxy on this machine reports
(``X-Forwarded-Proto``, which uvicorn trusts from 127.0.0.1)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path

import httpx

from config import Settings
from deepresearch.store import open_persistence
from tests._security_helpers import _create_tokens, _revoke, served
from tests.conftest import Servers

PLAIN = "deepresearch_session"
SECURE = "__Host-deepresearch_session"
HTTPS = {"X-Forwarded-Proto": "https"}


def _sign_in(base: str, token: str, headers: dict[str, str] | None = None) -> tuple[str, str, str]:
    """(cookie name, session id, the whole Set-Cookie header) of a fresh sign-in."""
    response = httpx.post(f"{base}/api/session", json={"token": token}, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    header = response.headers["set-cookie"]
    name, _, rest = header.partition("=")
    return name, rest.split(";", 1)[0], header


def _who(base: str, cookie: str, headers: dict[str, str] | None = None) -> httpx.Response:
    """GET /api/session with only this Cookie header (no jar: a copy of a cookie, as an attacker holds it)."""
    return httpx.get(f"{base}/api/session", headers={"Cookie": cookie} | (headers or {}), timeout=30)


async def _stored_session_hashes(settings: Settings) -> list[str]:
    async with open_persistence(settings.resolved_database_url) as persistence:
        rows = await persistence.store._read("SELECT session_hash FROM browser_sessions")  # type: ignore[attr-defined]
        return [row["session_hash"] for row in rows]


def test_a_sign_in_is_a_session_that_sign_out_and_token_revocation_end(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    settings = servers.settings(tmp_path, require_token=True, database_url=database_url)
    alice, bob = asyncio.run(_create_tokens(settings, ("alice", False), ("bob", False)))
    with served(settings) as base:
        name, session, header = _sign_in(base, alice)
        # the cookie is a session id: not the token, and the database keeps only its hash
        assert name == PLAIN and session.startswith("drs_") and alice not in header and session != alice
        lowered = header.lower()
        assert "httponly" in lowered and "samesite=strict" in lowered and "path=/" in lowered
        assert "secure" not in lowered  # plain HTTP: a Secure cookie would never come back
        # and the cookie of earlier releases, which held the token itself, is dropped from the browser
        assert 'deepresearch_token=""' in header and "path=/api" in lowered
        assert hashlib.sha256(session.encode()).hexdigest() in asyncio.run(_stored_session_hashes(settings))
        assert session not in asyncio.run(_stored_session_hashes(settings))
        assert _who(base, f"{PLAIN}={session}").json()["user"] == "alice"
        # the old cookie (the raw token) is no way in any more, and neither is a made-up session
        assert _who(base, f"deepresearch_token={alice}").status_code == 401
        assert _who(base, f"{PLAIN}={alice}").status_code == 401
        assert _who(base, f"{PLAIN}=drs_{'A' * 43}").status_code == 401

        # signing out revokes the session on the server: a copy of the cookie kept elsewhere is refused
        _, other, _ = _sign_in(base, alice)  # a second sign-in (another browser) is a session of its own
        with httpx.Client(base_url=base, timeout=30) as browser:
            browser.cookies.set(PLAIN, session)
            out = browser.delete("/api/session")
            assert out.status_code == 204 and PLAIN in out.headers["set-cookie"]
        refused = _who(base, f"{PLAIN}={session}")
        assert refused.status_code == 401 and "sign in" in refused.json()["detail"]
        assert httpx.get(f"{base}/api/runs", headers={"Cookie": f"{PLAIN}={session}"}).status_code == 401
        assert _who(base, f"{PLAIN}={other}").json()["user"] == "alice"

        # revoking the token ends every session made from it (and only those)
        _, bobs, _ = _sign_in(base, bob)
        asyncio.run(_revoke(settings, "alice"))
        assert _who(base, f"{PLAIN}={other}").status_code == 401
        assert _who(base, f"{PLAIN}={bobs}").json()["user"] == "bob"


def test_a_session_expires(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, require_token=True, session_seconds=1)
    (alice,) = asyncio.run(_create_tokens(settings, ("alice", False)))
    with served(settings) as base:
        _, session, header = _sign_in(base, alice)
        assert "max-age=1" in header.lower()
        assert _who(base, f"{PLAIN}={session}").json()["user"] == "alice"
        deadline = time.monotonic() + 10
        while _who(base, f"{PLAIN}={session}").status_code == 200:
            assert time.monotonic() < deadline, "the session outlived its lifetime by 9 s"
            time.sleep(0.2)
        assert _who(base, f"{PLAIN}={session}").status_code == 401
        # the token itself is not touched by its session's end
        assert _sign_in(base, alice)[0] == PLAIN


def test_over_https_the_cookie_is_host_prefixed_and_secure(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)  # loopback, no token required: signing in works the same
    (alice,) = asyncio.run(_create_tokens(settings, ("alice", False)))
    with served(settings) as base:
        name, session, header = _sign_in(base, alice, HTTPS)
        lowered = header.lower()
        assert name == SECURE and "secure" in lowered and "path=/" in lowered and "domain" not in lowered
        assert _who(base, f"{SECURE}={session}", HTTPS).json()["user"] == "alice"
        # over HTTPS a cookie without the prefix (one a sibling subdomain could have planted) does not count
        assert _who(base, f"{PLAIN}={session}", HTTPS).json()["user"] == "local"
        out = httpx.delete(f"{base}/api/session", headers={"Cookie": f"{SECURE}={session}"} | HTTPS)
        assert out.status_code == 204 and out.headers["set-cookie"].startswith(f"{SECURE}=")
        assert _who(base, f"{SECURE}={session}", HTTPS).status_code == 401
