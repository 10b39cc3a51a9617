"""PostgreSQL connections: DSN redaction, a fail-fast probe, the pool (which answers an exhausted checkout
with DatabaseBusy and names the holders) and session advisory locks."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from deepresearch.errors import ServerBusy

logger = logging.getLogger(__name__)
T = TypeVar("T")

POOL_SIZE = 10
POOL_TIMEOUT_SECONDS = 30.0
"""How long a checkout waits for a free connection before the request is answered 503 (psycopg_pool's
default)."""


class DatabaseBusy(PoolTimeout, ServerBusy):
    """No pooled connection came free in time. A psycopg error, so the loops that retry on database errors
    (DATABASE_ERRORS) retry it, and a ServerBusy, so a request that meets it is answered 503 with
    Retry-After, never 500."""


class Pool(AsyncConnectionPool[AsyncConnection[DictRow]]):
    """psycopg's pool, with checkouts and returns that a cancellation cannot cut in half, and that knows
    which task holds each connection since when.

    psycopg_pool hands a returned connection to the request queued for it under that request's condition
    lock, and a cancellation arriving while the hand-over waits for the lock loses the connection and
    strands the request (it is no longer queued, so it waits out its whole timeout with a connection
    free). Starlette cancels a stream whose client went away again at every await (anyio's cancel
    scopes), so the stream's last return often met that moment. Here each checkout and each return runs
    in a task of its own that the caller's cancellation does not reach (one cancel for an abandoned
    checkout, which psycopg_pool cleans up after), so a cancelled caller stops at once and the pool
    stays whole. (The waiting side has had races of its own upstream: psycopg issues 509, 1275, 1345.)
    A checkout that times out raises DatabaseBusy and logs the longest holders."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._holders: dict[int, tuple[float, asyncio.Task[Any] | None]] = {}
        self._handovers: set[asyncio.Task[Any]] = set()
        """Checkouts and returns in flight, referenced until they end (the loop keeps weak ones only)."""

    async def getconn(self, timeout: float | None = None) -> AsyncConnection[DictRow]:  # noqa: ASYNC109 (psycopg_pool's signature)
        checkout = self._detached(self._checkout(timeout))
        try:
            conn = await asyncio.shield(checkout)
        except asyncio.CancelledError:
            checkout.cancel()  # once: psycopg_pool's own clean-up then runs undisturbed
            checkout.add_done_callback(self._return_unused)
            raise
        self._holders[id(conn)] = (time.monotonic(), asyncio.current_task())
        return conn

    async def putconn(self, conn: AsyncConnection[DictRow]) -> None:
        self._holders.pop(id(conn), None)
        await asyncio.shield(self._detached(super().putconn(conn)))

    async def _checkout(self, wait: float | None) -> AsyncConnection[DictRow]:
        try:
            return await super().getconn(wait)
        except PoolTimeout:
            waited = self.timeout if wait is None else wait
            logger.warning(
                "no PostgreSQL connection came free within %g s: %s; longest holders: %s",
                waited,
                self.get_stats(),
                self.holders(),
            )
            raise DatabaseBusy(
                f"the database is busy: none of this server's {self.max_size} PostgreSQL connections came"
                f" free within {waited:g} s; try again shortly (DEEPRESEARCH_DATABASE_POOL_SIZE sets how"
                " many it opens)"
            ) from None

    def _return_unused(self, checkout: asyncio.Task[AsyncConnection[DictRow]]) -> None:
        """A checkout whose caller was cancelled: the connection it got anyway goes back to the pool."""
        if not checkout.cancelled() and checkout.exception() is None:
            self._detached(self._put_back(checkout.result()))

    async def _put_back(self, conn: AsyncConnection[DictRow]) -> None:
        try:
            await super().putconn(conn)
        except psycopg.Error:  # nobody awaits this return: its failure is logged here
            logger.warning("returning an unused PostgreSQL connection to the pool failed", exc_info=True)

    def _detached(self, step: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.get_running_loop().create_task(step)
        self._handovers.add(task)
        task.add_done_callback(self._handovers.discard)
        return task

    def holders(self, limit: int = 5) -> list[str]:
        """The `limit` longest checkouts: the task, for how long, and the line of ours it waits at."""
        now = time.monotonic()
        found = []
        for since, task in sorted(self._holders.values(), key=lambda held: held[0])[:limit]:
            name = task.get_name() if task is not None else "?"
            found.append(f"{name} for {now - since:.1f} s at {_waiting_at(task)}")
        return found


def _waiting_at(task: asyncio.Task[Any] | None) -> str:
    """file:line of the innermost frame of our code in the task's await chain (Task.get_stack shows only
    the outermost coroutine of a suspended task)."""
    where = "?"
    step: Any = task.get_coro() if task is not None else None
    for _ in range(100):  # an await chain is tens deep; bounded all the same
        frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
        if frame is None:
            break
        path = frame.f_code.co_filename
        if "/deepresearch/" in path and "site-packages" not in path:
            where = f"{path[path.rindex('/deepresearch/') + 1 :]}:{frame.f_lineno} ({frame.f_code.co_name})"
        step = getattr(step, "cr_await", None) or getattr(step, "ag_await", None)
    return where


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
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = POOL_SIZE,
    connect_timeout: int = 5,
    checkout_seconds: float = POOL_TIMEOUT_SECONDS,
) -> AsyncIterator[Pool]:
    """A pool configured the way both the run store and AsyncPostgresSaver need it."""
    await probe(dsn, connect_timeout)
    pool = Pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        timeout=checkout_seconds,
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
