"""The core every part of the SQL store stands on: the dialect that spells a statement for SQLite or
PostgreSQL, and the transaction primitives (`_atomic`, `_read`, `_write`, the lease check).

A backend (sqlite.py, postgres.py) supplies the two abstract methods: its connections (`_transaction`) and
the lock that orders writers of one run or of the schema across processes (`_serialise`). The parts of the
store (tokens.py, leases.py, steering.py, texts.py and sql.py's SqlRunStore) are subclasses of SqlCore, so
each writes its statements once, for both databases, on the same primitives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from deepresearch.store.base import CancelRequested, LeaseLost, Row

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    placeholder: str
    types: dict[str, str]
    size_sql: str
    """One row, column `size`: the database's size in bytes."""
    row_lock: str
    """Appended to a SELECT of a run inside a write transaction: holds the row until the commit, so a
    claim of the run by another process waits (PostgreSQL). SQLite's BEGIN IMMEDIATE already holds the
    whole file."""
    row_update_lock: str
    """The same, for a transaction that goes on to UPDATE the run's row: taken exclusive from the start.
    Two transactions that each share-lock the row and then both update it wait for each other (a
    deadlock PostgreSQL breaks by aborting one)."""

    def sql(self, statement: str) -> str:
        """``?`` placeholders in this dialect's spelling (no statement here contains a literal ? or %)."""
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)

    def ddl(self, template: str) -> str:
        return template.format(**self.types)

    def params(self, params: Sequence[Any]) -> Sequence[Any]:
        """Bound values this database can store: a lookup by an id holding NUL or a lone surrogate (which
        no stored id holds) must find nothing, not fail to encode."""
        if all(not isinstance(p, str) or (p.isascii() and "\x00" not in p) for p in params):
            return params
        return [_storable(p, self.name) if isinstance(p, str) else p for p in params]

    def storable(self, value: str) -> str:
        """`value` as this database stores it (PostgreSQL: no NUL; both: valid UTF-8)."""
        return _storable(value, self.name)

    def text(self, value: str | None) -> str | None:
        # PostgreSQL TEXT cannot hold NUL (SQLite can): an exception message quoting a scraped page must
        # not turn recording a failure into a second failure.
        if value and self.name == "postgres":
            return value.replace("\x00", "\ufffd")
        return value


def _storable(value: str, dialect: str) -> str:
    if dialect == "postgres" and "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


SQLITE = Dialect(
    "sqlite",
    "?",
    {"c": "", "bigint": "INTEGER", "bool": "INTEGER", "false": "0", "double": "REAL", "blob": "BLOB"},
    "SELECT page_count * page_size AS size FROM pragma_page_count(), pragma_page_size()",
    "",
    "",
)
# COLLATE "C" makes ORDER BY match SQLite's byte order whatever the database locale is.
POSTGRES = Dialect(
    "postgres",
    "%s",
    {
        "c": ' COLLATE "C"',
        "bigint": "BIGINT",
        "bool": "BOOLEAN",
        "false": "FALSE",
        "double": "DOUBLE PRECISION",
        "blob": "BYTEA",
    },
    "SELECT pg_database_size(current_database()) AS size",
    " FOR SHARE",
    " FOR NO KEY UPDATE",
)


class Statements(Protocol):
    """What a transaction offers: run one statement (``?`` placeholders), get (rowcount, rows)."""

    async def execute(self, statement: str, params: Sequence[Any] = ()) -> tuple[int, list[Row]]: ...


class SqlCore(ABC):
    """Transactions and reads on one database, for the parts of the store."""

    dialect: Dialect

    @abstractmethod
    def _transaction(self, *, write: bool = True) -> AbstractAsyncContextManager[Statements]:
        """One transaction (write) or one autocommit read."""

    async def _atomic(self, body: Callable[[Statements], Awaitable[T]]) -> T:
        """Run `body` in one write transaction: committed if it returns, rolled back if it raises."""
        async with self._transaction() as tx:
            return await body(tx)

    @abstractmethod
    async def _serialise(self, tx: Statements, key: str) -> None:
        """Inside `tx`: wait until no other process holds `key` (a run id, or the schema) in a transaction."""

    async def _announce(self, tx: Statements, run_id: str, seq: int) -> None:
        """Inside the transaction appending an event of `run_id`: tell other processes (at commit)."""
        return None  # SQLite: one process per file writes; PostgreSQL overrides it with NOTIFY

    async def scrub(self) -> None:
        """After deletes: no copy of what was deleted left in the database's files. SQLite overrides it
        (WAL checkpoint); PostgreSQL's deleted rows are gone for every query at once, and their space is
        reclaimed by (auto)vacuum, which the operator runs."""
        return None

    async def watch_events(self, wake: Callable[[str], None]) -> None:
        """Until cancelled, call `wake(run_id)` when another process appends an event (where the
        database can tell; otherwise streamers poll the log)."""
        return None

    async def _write(self, statement: str, params: Sequence[Any] = ()) -> tuple[int, list[Row]]:
        """One writing statement in its own transaction: (rowcount, RETURNING rows)."""

        async def body(tx: Statements) -> tuple[int, list[Row]]:
            return await tx.execute(statement, params)

        return await self._atomic(body)

    async def _read(self, statement: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of one SELECT, read outside any transaction."""
        async with self._transaction(write=False) as tx:
            return (await tx.execute(statement, params))[1]

    async def _hold_lease(
        self,
        tx: Statements,
        run_id: str,
        fence: str | None,
        *,
        unless_cancelled: bool = False,
        updating_run: bool = False,
    ) -> None:
        """Fencing: inside `tx`, LeaseLost unless `fence` holds the run's lease. The row stays locked until
        the commit, so a takeover cannot slip in between this check and the write it guards.
        `unless_cancelled`: CancelRequested if somebody asked to cancel the run (same row, same read).
        `updating_run`: the transaction goes on to update the run's row (Dialect.row_update_lock)."""
        if fence is None and not unless_cancelled:
            return
        _, rows = await tx.execute(
            "SELECT lease_owner, cancel_requested FROM runs WHERE run_id = ?"
            + (self.dialect.row_update_lock if updating_run else self.dialect.row_lock),
            (run_id,),
        )
        if fence is not None and (not rows or rows[0]["lease_owner"] != fence):
            raise LeaseLost(run_id, fence)
        if unless_cancelled and rows and rows[0]["cancel_requested"]:
            raise CancelRequested(run_id)
