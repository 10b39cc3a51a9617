"""Every piece of a dependency's internals the store copies or leans on, in one place, pinned.

These are measured wins (docs/profile.md, second pass), kept on purpose. Each was checked against one exact
version; `PINS` records it, with a sha256 of the upstream source as it was then, and
tests/test_vendored.py fails when an installed version or an upstream source differs, naming what of ours
to re-check. The rest of store/ takes these pieces from here and touches no other private name.

Copied (adapted) code:

- aiosqlite 0.22.1, ``Connection._execute_fetchall``: `_run_statement` below, a statement executed,
  fetched and closed in one go on aiosqlite's thread; ours also keeps the rowcount and reads rows as
  `sqlite3.Row` per cursor (the saver on the same connection reads tuples).
- langgraph-checkpoint-sqlite 3.1.2, ``AsyncSqliteSaver.aput``: `put_checkpoint` below, its INSERT and
  its returned config, without its `setup()` call (open_persistence sets up), its lock and its commit (the
  statement joins the run store's group commit instead: store/savers.py `FencedSqliteSaver`).
- langgraph-checkpoint-sqlite 3.1.2, ``AsyncSqliteSaver.aput_writes``: `put_writes` below, likewise
  (one row per write instead of its executemany: same rows, same statement).

Private behaviour relied on, not copied:

- aiosqlite 0.22.1, ``Connection._execute`` (runs a function on the connection's thread) and the
  ``Connection._conn`` property (the sqlite3 connection): `one_trip` below.
- langgraph-checkpoint-sqlite 3.1.2, ``AsyncSqliteSaver.setup``: the `checkpoints` and `writes` tables the
  copied statements write and store/savers.py `compaction_statements` deletes from;
  ``AsyncSqliteSaver.aget_tuple`` and ``.alist``: the reads hold ``self.lock`` and use ``self.conn``, so
  store/__init__.py hands the saver the run store's lock (a commit never lands mid-read).
- langgraph-checkpoint-postgres 3.2.0, ``langgraph.checkpoint.postgres.base.MIGRATIONS``: the schema
  (`checkpoints`, `checkpoint_writes`, `checkpoint_blobs`, channel versions in the checkpoint's JSON)
  store/savers.py `compaction_statements` deletes from.

Public names used as upstream uses them (not pinned): langgraph-checkpoint 4.3.2's ``WRITES_IDX_MAP``
and ``get_checkpoint_metadata``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import RunnableConfig

from deepresearch.store.base import Row

__all__ = ["PINS", "OneTrip", "Pin", "one_trip", "put_checkpoint", "put_writes", "upstream_digest"]


@dataclass(frozen=True, slots=True)
class Pin:
    distribution: str
    version: str
    """The installed version the piece was checked against."""
    target: str
    """``module:qualified.name`` of the upstream function, property or value."""
    sha256: str
    """Of the target's source (inspect.getsource; a value: its JSON) at `version`."""
    recheck: str
    """What of ours depends on it: re-read it against the new upstream before re-pinning."""


_ONE_TRIP = "one_trip / _run_statement (store/vendored.py) and _Statements (store/sqlite.py)"
_SAVER = "put_checkpoint / put_writes (store/vendored.py) and FencedSqliteSaver (store/savers.py)"
_SCHEMA = "compaction_statements (store/savers.py) and the statements in store/vendored.py"
PINS: tuple[Pin, ...] = (
    Pin(
        "aiosqlite",
        "0.22.1",
        "aiosqlite.core:Connection._execute",
        "11f83d6bbbe803e390def4a083f1f5797f96a66a3a916c90f7411053ca314f21",
        _ONE_TRIP,
    ),
    Pin(
        "aiosqlite",
        "0.22.1",
        "aiosqlite.core:Connection._conn",
        "2b88b77116bfb96a6f3a9487b7d20b192502674ec5e81840650ef6eee43b397a",
        _ONE_TRIP,
    ),
    Pin(
        "aiosqlite",
        "0.22.1",
        "aiosqlite.core:Connection._execute_fetchall",
        "37d3a13243fc927654254d8fedec26469f28d2667979e98c7d327d7a245d0485",
        _ONE_TRIP,
    ),
    Pin(
        "langgraph-checkpoint-sqlite",
        "3.1.2",
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aput",
        "2c5755b2cf38ad2833abc8121f26eb2854a19bf2fdfc926b6e208f8ee1efc59c",
        _SAVER,
    ),
    Pin(
        "langgraph-checkpoint-sqlite",
        "3.1.2",
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aput_writes",
        "98986d6dde0f4d981fed46037e2a654b198a1d469809a3814772c1002a433626",
        _SAVER,
    ),
    Pin(
        "langgraph-checkpoint-sqlite",
        "3.1.2",
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.setup",
        "073c314fafa3809677246f221b6f2650c0b26e63ed5684a2b2fd04422fe168fc",
        _SCHEMA,
    ),
    Pin(
        "langgraph-checkpoint-sqlite",
        "3.1.2",
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aget_tuple",
        "1177b24b170508d486a5cac36f0b1a6d2ef5599fc3ce15dac636f220b6c66929",
        "store/__init__.py open_persistence: `saver.lock = store.lock` (the read must hold self.lock)",
    ),
    Pin(
        "langgraph-checkpoint-sqlite",
        "3.1.2",
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.alist",
        "e7b30231a176f94c4dcb1784abb7338fc24cf6435cb03814ff1f7844b62f549b",
        "store/__init__.py open_persistence: `saver.lock = store.lock` (the read must hold self.lock)",
    ),
    Pin(
        "langgraph-checkpoint-postgres",
        "3.2.0",
        "langgraph.checkpoint.postgres.base:MIGRATIONS",
        "2b0cc7564b5744b6d068ef8703dfd504f461490fcc8a1b9c0c0119b15ca984dd",
        "compaction_statements (store/savers.py), its PostgreSQL statements",
    ),
)


def upstream_digest(target: str) -> str:
    """sha256 of `target`'s source as installed (how `Pin.sha256` was computed). Imports the module."""
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = inspect.getattr_static(obj, part)  # a property itself, not its value on the class
    if isinstance(obj, property):
        obj = obj.fget
    source = inspect.getsource(obj) if callable(obj) else json.dumps(obj)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


# --- aiosqlite: a statement in one trip to the connection's thread ------------------------------------


def _run_statement(conn: sqlite3.Connection, statement: str, params: Sequence[Any]) -> tuple[int, list[Row]]:
    """On aiosqlite's thread: execute, fetch and close in one go (after `Connection._execute_fetchall`)."""
    cur = conn.execute(statement, params)
    try:
        cur.row_factory = sqlite3.Row  # per cursor: the saver on this connection reads tuples
        rows = cur.fetchall()
        return cur.rowcount, rows
    finally:
        cur.close()


OneTrip = Callable[[str, Sequence[Any]], Awaitable[tuple[int, list[Row]]]]


def one_trip(conn: aiosqlite.Connection) -> OneTrip | None:
    """(rowcount, rows) of a statement, in one trip to aiosqlite's thread instead of three (execute,
    fetchall, close): each trip is a queue hand-off and a wake-up of the event loop, ~600 statements per
    default run. aiosqlite's way of running a function there is private (`_execute`): None without it."""
    run = getattr(conn, "_execute", None)
    if run is None:
        return None

    async def execute(statement: str, params: Sequence[Any]) -> tuple[int, list[Row]]:
        return await run(_run_statement, conn._conn, statement, params)  # type: ignore[no-any-return]

    return execute


# --- langgraph-checkpoint-sqlite: AsyncSqliteSaver's writes as statements ---------------------------

_PUT_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,"
    " type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_WRITES_COLUMNS = "(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)"
_PUT_WRITES = f"INSERT OR REPLACE INTO writes {_WRITES_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
_ADD_WRITES = f"INSERT OR IGNORE INTO writes {_WRITES_COLUMNS} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"

Statement = tuple[str, Sequence[Any]]


def put_checkpoint(
    serde: SerializerProtocol,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
) -> tuple[Statement, RunnableConfig]:
    """`AsyncSqliteSaver.aput` as (its statement, the config it returns): the SQLite saver stores each
    checkpoint whole, so `new_versions` is not needed (as upstream)."""
    configurable = config["configurable"]
    thread_id, checkpoint_ns = configurable["thread_id"], configurable["checkpoint_ns"]
    type_, blob = serde.dumps_typed(checkpoint)
    meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False).encode("utf-8", "ignore")
    row = (
        str(thread_id),
        checkpoint_ns,
        checkpoint["id"],
        configurable.get("checkpoint_id"),
        type_,
        blob,
        meta,
    )
    stored: RunnableConfig = {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint["id"],
        }
    }
    return (_PUT_CHECKPOINT, row), stored


def put_writes(
    serde: SerializerProtocol,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str = "",
) -> list[Statement]:
    """`AsyncSqliteSaver.aput_writes` as statements, one per write."""
    configurable = config["configurable"]
    # special channels (errors, interrupts) replace their row; others keep the first one written
    statement = _PUT_WRITES if all(channel in WRITES_IDX_MAP for channel, _ in writes) else _ADD_WRITES
    key = (
        str(configurable["thread_id"]),
        str(configurable["checkpoint_ns"]),
        str(configurable["checkpoint_id"]),
    )
    return [
        (
            statement,
            (*key, task_id, task_path, WRITES_IDX_MAP.get(channel, idx), channel, *serde.dumps_typed(value)),
        )
        for idx, (channel, value) in enumerate(writes)
    ]
