"""PostgreSQL connections: DSN redaction, a fail-fast probe, the pool factory and session advisory locks."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

logger = logging.getLogger(__name__)

Pool = AsyncConnectionPool[AsyncConnection[DictRow]]


class PostgresUnavailable(ConnectionError):
    """The server cannot be reached or refuses the connection; the message never contains the password."""


# --- DSN helpers ---------------------------------------------------------------------------------
_KV_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def redact_dsn(dsn: str) -> str:
    """The DSN with its password (URL userinfo, ?password= or password=...) replaced by ***."""
    scheme, sep, rest = dsn.partition("://")
    if not sep:
        return _KV_PASSWORD.sub(r"\1***", dsn)
    end = next((i for i, ch in enumerate(rest) if ch in "/?#"), len(rest))
    authority, tail = rest[:end], _QUERY_PASSWORD.sub(r"\1***", rest[end:])
    userinfo, at, hosts = authority.rpartition("@")
    if at and ":" in userinfo:
        authority = f"{userinfo.partition(':')[0]}:***@{hosts}"
    return f"{scheme}://{authority}{tail}"


def describe_target(dsn: str) -> str:
    """`host:port/dbname (user u)` of a DSN, with libpq's environment defaults, for error messages."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return redact_dsn(dsn)
    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "local socket"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER")
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or user or "(default)"
    return f"{host}:{port}/{dbname}" + (f" (user {user})" if user else "")


def scrub_password(message: str, dsn: str) -> str:
    # libpq does not echo passwords, but an error quoting the conninfo must still never leak one.
    try:
        password = conninfo_to_dict(dsn).get("password")
    except psycopg.ProgrammingError:
        password = None
    if password:
        message = message.replace(str(password), "***")
    return message


def _connect_kwargs(dsn: str, connect_timeout: int) -> dict[str, Any]:
    """What both AsyncPostgresSaver and the store need: autocommit, dict rows, no server-side prepared
    statements (they break behind pgbouncer). A connect_timeout in the DSN wins over the default."""
    kwargs: dict[str, Any] = {"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0}
    try:
        in_dsn = "connect_timeout" in conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise PostgresUnavailable(
            f"invalid PostgreSQL DSN {redact_dsn(dsn)}: {scrub_password(str(exc), dsn)}"
        ) from None
    if not in_dsn:
        kwargs["connect_timeout"] = connect_timeout
    return kwargs


IDLE_IN_TRANSACTION_TIMEOUT = "10s"
"""A process frozen in the middle of a transaction (SIGSTOP, a paused VM) would hold its row and advisory
locks, and every replica's writes to that run would wait for it; the server ends such a session after this
long (our transactions last milliseconds). Set with SET rather than a startup option, which pgbouncer
refuses."""


async def _configure(conn: AsyncConnection[Any]) -> None:
    await conn.execute(f"SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_TIMEOUT}'")


async def probe(dsn: str, connect_timeout: int = 5) -> None:
    """One direct connection attempt, so an unreachable server fails now with libpq's own reason
    (a pool would retry in the background and only report a timeout)."""
    try:
        conn = await psycopg.AsyncConnection.connect(dsn, **_connect_kwargs(dsn, connect_timeout))
    except psycopg.OperationalError as exc:
        reason = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise PostgresUnavailable(
            f"cannot connect to PostgreSQL at {describe_target(dsn)}: {scrub_password(reason, dsn)}"
        ) from None
    await conn.close()


@asynccontextmanager
async def open_postgres_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, connect_timeout: int = 5
) -> AsyncIterator[Pool]:
    """A pool configured the way both the run store and AsyncPostgresSaver need it."""
    await probe(dsn, connect_timeout)
    pool: Pool = AsyncConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        kwargs=_connect_kwargs(dsn, connect_timeout),
        connection_class=AsyncConnection[DictRow],
        # A replica outlives server restarts and failovers: hand out only connections that still work.
        check=AsyncConnectionPool.check_connection,
        configure=_configure,
        name="deepresearch",
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=float(connect_timeout) * 2)
    except PoolTimeout:
        await pool.close()
        raise PostgresUnavailable(
            f"cannot connect to PostgreSQL at {describe_target(dsn)}: the pool could not open"
            f" {min_size} connection(s) within {connect_timeout * 2}s"
        ) from None
    try:
        yield pool
    finally:
        await pool.close()


@asynccontextmanager
async def session_advisory_lock(
    conn: AsyncConnection[DictRow], key: int, *, wait_seconds: float = 120.0, poll: float = 0.1
) -> AsyncIterator[None]:
    """Hold a session-level advisory lock, for setup steps that cannot run inside one transaction
    (AsyncPostgresSaver's migrations use CREATE INDEX CONCURRENTLY).

    Waiters poll pg_try_advisory_lock instead of blocking in pg_advisory_lock: CREATE INDEX CONCURRENTLY
    waits for every open transaction, including a waiter's blocked statement, which would deadlock."""
    deadline = time.monotonic() + wait_seconds
    while True:
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (key,))
        row = await cur.fetchone()
        if row is not None and row["locked"]:
            break
        if time.monotonic() >= deadline:
            raise TimeoutError(f"advisory lock {key} still held by another process after {wait_seconds:g}s")
        await asyncio.sleep(poll)
    try:
        yield
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
