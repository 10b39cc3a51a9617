"""The run store contract: runs, the append-only event log, the checkpoint index and tool receipts.

Everything a run needs to survive a crash lives here (and in the LangGraph checkpointer, which shares the
database), never in process memory. The SQLite implementation is the embedded default; PostgreSQL
implements the same protocol.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar

RunStatus = Literal[
    "queued", "running", "waiting_for_input", "cancelled", "interrupted", "failed", "completed"
]
ACTIVE_STATUSES: frozenset[str] = frozenset({"queued", "running"})
RESUMABLE_STATUSES: frozenset[str] = frozenset({"cancelled", "interrupted", "failed"})
ReceiptStatus = Literal["started", "succeeded", "failed"]
LOCAL_OWNER = "local"
"""The owner of runs started by the CLI, or over HTTP without a token where none is required."""


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def utcnow_precise() -> str:
    """To the microsecond: orders runs queued within one millisecond (first in, first out)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_run_id() -> str:
    return uuid.uuid4().hex


def thread_id_for(run_id: str) -> str:
    """Deterministic LangGraph thread id of a run (a replica can rebuild it from the run id alone)."""
    return f"deepresearch-{run_id}"


def args_hash(args: Any) -> str:
    """Stable hash of normalised call arguments (sorted keys, compact separators, UTF-8)."""
    blob = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class RunRecord:
    run_id: str
    thread_id: str
    question: str
    options: dict[str, Any]
    status: str
    engine: str
    created_at: str
    updated_at: str
    current_stage: str | None = None
    error: str | None = None
    artifact_dir: str | None = None
    cancel_requested: bool = False
    started_at: str | None = None
    finished_at: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    """Bumped by every update of the record (see RunStore.update_run's expect_version)."""
    owner: str = LOCAL_OWNER
    """The user the run belongs to: a token's name, or `local` (the CLI, a loopback client without token)."""
    lease_owner: str | None = None
    """The process executing the run (a replica id), while its lease is live."""
    lease_expires_at: str | None = None
    attempts: int = 0
    """Executions started since the run was last started or resumed by a person."""
    pending_input: dict[str, Any] | None = None
    """What a run `waiting_for_input` waits for (kind, plan, since); None otherwise."""
    forked_from: dict[str, Any] | None = None
    """A fork: the run and checkpoint it started from."""
    follow_up_of: str | None = None
    """A follow-up: the finished run whose sources and evidence it started with."""
    queued_at: str | None = None
    """When the run last entered the queue (created or resumed): runs waiting for a runner go first in,
    first out by it."""
    title: str | None = None
    """The name the user gave the run (null: its question names it)."""
    resumes: int = 0
    """Times a person resumed the run (continue or fork)."""
    forks: int = 0
    """Of those, resumes from a checkpoint older than the latest (each starts a new branch)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class EventRecord:
    run_id: str
    seq: int
    type: str
    ts: str
    stage: str | None
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The event as clients see it: the envelope, then the type's own fields."""
        envelope = {name: getattr(self, name) for name in ("seq", "run_id", "type", "ts", "stage")}
        return envelope | self.data


@dataclass(slots=True)
class CheckpointRecord:
    run_id: str
    checkpoint_id: str
    stage: str
    title: str
    created_at: str
    next: list[str]
    summary: str
    thread_id: str
    checkpoint_ns: str
    parent_checkpoint_id: str | None
    fork_of: str | None = None
    """Set on the first checkpoint written after resuming from an older checkpoint (a fork)."""

    def to_dict(self) -> dict[str, Any]:
        """The index entry; where LangGraph keeps the checkpoint is under framework_ref."""
        values = asdict(self)
        del values["run_id"]
        langgraph = {name: values.pop(name) for name in ("thread_id", "checkpoint_ns")}
        return values | {"framework_ref": {"langgraph": langgraph | {"checkpoint_id": self.checkpoint_id}}}


@dataclass(slots=True)
class Receipt:
    run_id: str
    receipt_key: str
    args_hash: str
    tool_name: str
    stage: str | None
    status: str
    args: Any
    result: Any
    error: str | None
    tokens: int
    cost_usd: float
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        """Everything but the run id and the recorded result (which can be large)."""
        values = asdict(self)
        del values["run_id"], values["result"]
        return values


@dataclass(slots=True)
class TokenRecord:
    """An API token, as stored: its hash, never the token itself."""

    token_id: str
    name: str
    token_hash: str
    admin: bool
    created_at: str
    last_used_at: str | None = None
    revoked_at: str | None = None


@dataclass(slots=True)
class LLMCapability:
    """How one (endpoint, model) takes structured output, found out once and remembered (see
    deepresearch/llm/modes.py for the modes)."""

    endpoint: str
    model: str
    mode: str
    detail: str
    checked_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- rows (sqlite3.Row or psycopg dict rows: both are read by column name) --------------------------
Row = Mapping[str, Any]


def dumps_json(value: Any) -> str:
    """The JSON text both backends store (TEXT columns: identical records from SQLite and PostgreSQL)."""
    return json.dumps(value, ensure_ascii=False, default=str)


# Record fields stored as JSON text, by column; and the fields whose type a backend may spell otherwise
# (SQLite has no BOOLEAN; a PostgreSQL BIGINT is an int already).
_JSON_COLUMNS = {
    "options": "options_json",
    "usage": "usage_json",
    "data": "data_json",
    "next": "next_json",
    "args": "args_json",
    "result": "result_json",
    "pending_input": "pending_input_json",
    "forked_from": "forked_from_json",
}
_CONVERT: dict[str, Any] = {
    "cancel_requested": bool,
    "tokens": int,
    "cost_usd": float,
    "seq": int,
    "version": int,
    "admin": bool,
    "attempts": int,
}
R = TypeVar("R", "RunRecord", "EventRecord", "CheckpointRecord", "Receipt", "TokenRecord", "LLMCapability")


def record_from_row(cls: type[R], row: Row) -> R:
    """A record from a row of its table, read by column name: the same record from either backend."""
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in _JSON_COLUMNS:
            raw = row[_JSON_COLUMNS[f.name]]
            values[f.name] = json.loads(raw) if raw is not None else None
        else:
            value = row[f.name]
            values[f.name] = _CONVERT[f.name](value) if f.name in _CONVERT else value
    return cls(**values)


class LeaseLost(Exception):
    """A fenced write found that the writer no longer holds the run's lease: another process took the run
    over (this one stalled past the expiry). Nothing was written; the writer must stop executing the run."""

    def __init__(self, run_id: str, owner: str) -> None:
        super().__init__(f"run {run_id!r} is no longer leased to {owner}")
        self.run_id = run_id
        self.owner = owner


class CancelRequested(Exception):
    """A write that starts a call found the run's cancel requested (by any process): nothing was written,
    and the call must not be made."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r}: cancel requested")
        self.run_id = run_id


class RunChanged(Exception):
    """A compare-and-set update found the run changed since it was read (another request or process)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} changed meanwhile")
        self.run_id = run_id


class ActiveRunsLimit(Exception):
    """A run was not created: its owner already has `active` runs queued or running, the limit given."""

    def __init__(self, owner: str, active: int) -> None:
        super().__init__(f"{owner!r} has {active} runs queued or running")
        self.owner = owner
        self.active = active


class RunStore(Protocol):
    """Storage for runs. All methods are safe to call concurrently from one event loop."""

    async def setup(self) -> None: ...
    async def aclose(self) -> None: ...
    async def ping(self) -> None: ...
    async def size_bytes(self) -> int: ...

    async def create_run(
        self,
        question: str,
        options: dict[str, Any],
        engine: str,
        run_id: str | None = None,
        owner: str = LOCAL_OWNER,
        active_limit: int | None = None,
    ) -> RunRecord: ...
    async def get_run(self, run_id: str) -> RunRecord: ...
    async def list_runs(
        self,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
        owner: str | None = None,
        search: str | None = None,
    ) -> list[RunRecord]: ...
    async def finished_before(self, cutoff: str, limit: int = 1000) -> list[RunRecord]: ...
    async def count_active(self, owner: str) -> int: ...
    async def update_run(
        self, run_id: str, *, expect_version: int | None = None, fence: str | None = None, **fields: Any
    ) -> RunRecord: ...
    async def claim_run(
        self,
        run_id: str,
        owner: str,
        expires_at: str,
        now: str,
        dead_owner: str | None = None,
        statuses: Sequence[str] = ("queued", "running"),
    ) -> RunRecord | None: ...
    async def check_lease(self, run_id: str, owner: str) -> None: ...
    async def cancel_requested_among(self, owner: str) -> list[str]: ...
    async def queue_positions(self, limit: int = 10_000) -> dict[str, int]: ...
    async def renew_lease(self, run_id: str, owner: str, expires_at: str) -> bool: ...
    async def release_lease(self, run_id: str, owner: str) -> None: ...
    async def unclaimed_runs(
        self, statuses: Sequence[str], idle_before: str, limit: int = 1000
    ) -> list[RunRecord]: ...
    async def request_cancel(self, run_id: str) -> RunRecord: ...
    async def is_cancel_requested(self, run_id: str) -> bool: ...
    async def delete_run(self, run_id: str) -> None: ...
    async def scrub(self) -> None: ...

    async def append_event(
        self, run_id: str, type_: str, stage: str | None, data: dict[str, Any], *, fence: str | None = None
    ) -> EventRecord: ...
    async def list_events(self, run_id: str, after: int = 0, limit: int = 10_000) -> list[EventRecord]: ...
    async def watch_events(self, wake: Callable[[str], None]) -> None: ...

    async def add_checkpoint(self, record: CheckpointRecord, *, fence: str | None = None) -> bool: ...
    async def compact_thread(
        self, run_id: str, thread_id: str, keep: Sequence[str], *, fence: str | None = None
    ) -> None: ...
    async def list_checkpoints(self, run_id: str) -> list[CheckpointRecord]: ...

    async def receipt_keys(self, run_id: str) -> set[tuple[str, str]]: ...
    async def get_receipt(self, run_id: str, receipt_key: str, hash_: str) -> Receipt | None: ...
    async def start_receipt(
        self,
        run_id: str,
        receipt_key: str,
        hash_: str,
        tool_name: str,
        stage: str | None,
        args: Any,
        *,
        fence: str | None = None,
        texts: Mapping[str, str] | None = None,
        unless_cancelled: bool = False,
    ) -> None: ...
    async def finish_receipt(
        self,
        run_id: str,
        receipt_key: str,
        hash_: str,
        result: Any,
        tokens: int = 0,
        cost_usd: float = 0.0,
        *,
        fence: str | None = None,
    ) -> None: ...
    async def fail_receipt(
        self, run_id: str, receipt_key: str, hash_: str, error: str, *, fence: str | None = None
    ) -> None: ...
    async def get_llm_capability(self, endpoint: str, model: str) -> LLMCapability | None: ...
    async def put_llm_capability(self, capability: LLMCapability) -> None: ...
    async def list_receipts(
        self, run_id: str, receipt_key: str | None = None, status: str | None = None
    ) -> list[Receipt]: ...

    async def copy_receipts(self, from_run: str, to_run: str, tools: Sequence[str]) -> int: ...
    async def count_runs_by_status(self) -> dict[str, int]: ...
    async def receipt_totals(self) -> list[Row]: ...
    async def put_text(self, run_id: str, text: str, *, fence: str | None = None) -> str: ...
    async def get_texts(self, digests: Iterable[str]) -> dict[str, str]: ...
    async def run_text_digests(self, run_id: str) -> list[str]: ...

    async def add_token(self, record: TokenRecord) -> None: ...
    async def find_token(self, token_hash: str) -> TokenRecord | None: ...
    async def list_tokens(self) -> list[TokenRecord]: ...
    async def revoke_tokens(self, token_id_or_name: str) -> list[TokenRecord]: ...
    async def touch_token(self, token_id: str, older_than: str) -> None: ...
    async def add_session(self, session_hash: str, token_id: str, expires_at: str) -> None: ...
    async def find_session(self, session_hash: str) -> TokenRecord | None: ...
    async def revoke_session(self, session_hash: str) -> bool: ...
