"""Check that a PostgreSQL database is ready for deepresearch, without running any research.

    python pg_smoke.py [DSN]

The DSN comes from the argument, else DEEPRESEARCH_DATABASE_URL, else KSADK_LANGGRAPH_CHECKPOINT_DSN
(prefer the environment for DSNs with a password: arguments are visible in `ps`). It connects, sets up the
run store and the LangGraph checkpointer (idempotent), round-trips a throwaway run (event, receipt start and
finish, read back, delete) and prints a JSON summary with the password redacted.
Exit 0 on success, 1 on a failed check or connection, 2 on a usage error; errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import time
import uuid
from typing import Any

import psycopg

from deepresearch.errors import RunNotFound
from deepresearch.store import args_hash, open_persistence, redact_dsn
from deepresearch.store.pg_connection import PostgresUnavailable, scrub_password
from deepresearch.store.postgres import PostgresRunStore

logger = logging.getLogger("pg_smoke")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DSN_ENV_VARS = ("DEEPRESEARCH_DATABASE_URL", "KSADK_LANGGRAPH_CHECKPOINT_DSN")


class SmokeFailure(RuntimeError):
    """A check ran but returned something other than what was written."""


def resolve_dsn(argument: str | None) -> tuple[str, str] | None:
    """(dsn, where it came from), or None when no source provides one."""
    if argument:
        return argument, "argv"
    for name in DSN_ENV_VARS:
        if value := os.environ.get(name, "").strip():
            return value, name
    return None


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeFailure(what)


async def _round_trip(store: PostgresRunStore) -> dict[str, Any]:
    run = await store.create_run(
        "pg_smoke round trip", {"smoke": True}, engine="pg_smoke", run_id=f"pg-smoke-{uuid.uuid4().hex}"
    )
    args = {"query": "pg_smoke", "unicode": "ünïcødé ✓"}
    hash_ = args_hash(args)
    try:
        event = await store.append_event(run.run_id, "smoke", "smoke", {"payload": args})
        await store.start_receipt(run.run_id, "smoke.tool", hash_, "smoke_tool", "smoke", args)
        await store.finish_receipt(run.run_id, "smoke.tool", hash_, {"ok": True}, tokens=3, cost_usd=0.001)
        read_run = await store.get_run(run.run_id)
        events = await store.list_events(run.run_id)
        receipt = await store.get_receipt(run.run_id, "smoke.tool", hash_)
        _check(read_run.to_dict() == run.to_dict(), "run read back differs from the run written")
        _check([e.to_dict() for e in events] == [event.to_dict()], "event read back differs")
        _check(event.seq == 1, f"first event got seq {event.seq}, expected 1")
        _check(receipt is not None and receipt.status == "succeeded", "receipt is not succeeded")
        _check(
            receipt is not None and receipt.result == {"ok": True} and receipt.args == args,
            "receipt payload read back differs",
        )
    except BaseException:
        # Best-effort cleanup: the error being raised is what the operator needs to see.
        with contextlib.suppress(RunNotFound, psycopg.Error):
            await store.delete_run(run.run_id)
        raise
    await store.delete_run(run.run_id)
    try:
        await store.get_run(run.run_id)
    except RunNotFound:
        pass
    else:
        raise SmokeFailure("run still present after delete_run")
    _check(await store.list_events(run.run_id) == [], "events left after delete_run")
    return {"run_id": run.run_id, "events": len(events), "receipt": "succeeded", "deleted": True}


async def smoke(dsn: str) -> dict[str, Any]:
    started = time.monotonic()
    async with open_persistence(dsn) as persistence:
        store = persistence.store
        if not isinstance(store, PostgresRunStore):
            raise SmokeFailure(f"expected the PostgreSQL store, got {type(store).__name__}")
        round_trip = await _round_trip(store)
        missing = await persistence.checkpointer.aget_tuple(
            {"configurable": {"thread_id": f"pg-smoke-{uuid.uuid4().hex}", "checkpoint_ns": ""}}
        )
        _check(missing is None, "checkpointer returned a checkpoint for a thread that was never written")
        async with store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT current_setting('server_version') AS v, current_database() AS db"
            )
            server = await cur.fetchone()
            cur = await conn.execute("SELECT version FROM deepresearch_migrations ORDER BY version")
            store_migrations = [row["version"] for row in await cur.fetchall()]
            cur = await conn.execute("SELECT count(*) AS n FROM checkpoint_migrations")
            checkpointer = await cur.fetchone()
    return {
        "ok": True,
        "dsn": redact_dsn(dsn),
        "server_version": server["v"] if server else None,
        "database": server["db"] if server else None,
        "store_migrations": store_migrations,
        "checkpointer_migrations": checkpointer["n"] if checkpointer else 0,
        "round_trip": round_trip,
        "elapsed_ms": round((time.monotonic() - started) * 1000),
    }


def _fail(message: str, dsn: str | None, code: int = EXIT_FAILED) -> int:
    if dsn:
        message = scrub_password(message, dsn)
    print(f"pg_smoke: error: {' '.join(message.split())}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a PostgreSQL database for deepresearch.")
    parser.add_argument("dsn", nargs="?", help="postgresql://user:password@host:port/db (default: env)")
    parser.add_argument("--timeout", type=float, default=60.0, help="give up after this many seconds")
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.ERROR, format="%(levelname)s %(name)s: %(message)s"
    )
    resolved = resolve_dsn(args.dsn)
    if resolved is None:
        return _fail(f"no DSN: pass one as an argument or set {' or '.join(DSN_ENV_VARS)}", None, EXIT_USAGE)
    dsn, source = resolved
    if not dsn.startswith(("postgres://", "postgresql://")):
        return _fail(f"{source} is not a postgresql:// DSN: {redact_dsn(dsn)}", dsn, EXIT_USAGE)
    try:
        summary = asyncio.run(asyncio.wait_for(smoke(dsn), timeout=args.timeout))
    except TimeoutError:
        return _fail(f"timed out after {args.timeout:g}s against {redact_dsn(dsn)}", dsn)
    except KeyboardInterrupt:
        return _fail("interrupted", dsn, 130)
    except PostgresUnavailable as exc:  # already names host, port and database
        return _fail(str(exc), dsn)
    except Exception as exc:  # the CLI boundary: any failure becomes one line, never a traceback
        logger.debug("smoke test failed", exc_info=True)
        return _fail(f"{type(exc).__name__}: {exc}", dsn)
    print(json.dumps({**summary, "dsn_source": source}, indent=2, ensure_ascii=False))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
