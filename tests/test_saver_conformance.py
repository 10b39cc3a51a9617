"""LangGraph's own checkpointer contract (langgraph-checkpoint-conformance) against our savers, as the product
opens them (open_persistence):

- SQLite: `FencedSqliteSaver`, whose checkpoint and task writes are statements copied from AsyncSqliteSaver
  (store/vendored.py) committed in the run store's group commit on the shared aiosqlite connection;
- PostgreSQL: `FencedSaver` over AsyncPostgresSaver on the run store's pool, on the throwaway cluster of
  tests/pg.py.

Each in two modes: unleased (platform_graph's way: no run holds the thread) and leased (an execution's
way: every write carries the check that this process still holds the run's lease). The suite runs one
capability per test through the package's own `validate`; a capability our saver does not implement is
skipped with its reason, and one it newly implements must then be run (NOT_IMPLEMENTED is kept honest).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from langgraph.checkpoint.conformance.test_utils import (
    generate_checkpoint,
    generate_config,
    generate_metadata,
)

from deepresearch.store import CheckpointFences, LeaseLost, Persistence, RunStore, open_persistence

if TYPE_CHECKING:  # the fixtures come from tests.pg via pytest_plugins in tests/conftest.py
    from tests.pg import PostgresCluster

OWNER = "conformance-replica"

_UPSTREAM_LACKS = (
    "not implemented by LangGraph's {saver} either (ours extends it), and nothing of ours calls it"
)
NOT_IMPLEMENTED: dict[str, dict[str, str]] = {
    "sqlite": {
        "delete_for_runs": _UPSTREAM_LACKS.format(saver="AsyncSqliteSaver"),
        "copy_thread": _UPSTREAM_LACKS.format(saver="AsyncSqliteSaver")
        + " (a fork seeds a thread of its own with the checkpoint's values, through update_state)",
        "prune": _UPSTREAM_LACKS.format(saver="AsyncSqliteSaver")
        + " (a completed run's thread is compacted by store.compact_thread instead)",
    },
    "postgres": {
        "delete_for_runs": _UPSTREAM_LACKS.format(saver="AsyncPostgresSaver"),
        "copy_thread": _UPSTREAM_LACKS.format(saver="AsyncPostgresSaver")
        + " (a fork seeds a thread of its own with the checkpoint's values, through update_state)",
    },
}


class OneRunFences(CheckpointFences):
    """The suite makes up a thread id per case: here every thread belongs to one run leased to this
    process, so each checkpoint and task write carries the lease check an execution's writes carry (the
    engine holds its one thread the same way, `fences.hold`)."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        super().__init__(store)
        self.run_id = run_id

    def _lease(self, thread_id: object) -> tuple[str, str] | None:
        return (self.run_id, OWNER)


@dataclass(frozen=True)
class Mode:
    backend: str
    leased: bool

    def __str__(self) -> str:
        return f"{self.backend}-{'leased' if self.leased else 'unleased'}"


MODES = [Mode(backend, leased) for backend in ("sqlite", "postgres") for leased in (False, True)]


@pytest.fixture(scope="module")
def conformance_postgres_dsn(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """One database for the module: the suite's cases each make up their own thread ids."""
    name = postgres_cluster.create_database()
    try:
        yield postgres_cluster.dsn(name)
    finally:
        postgres_cluster.drop_database(name)


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    mode: Mode = request.node.callspec.params["mode"]
    if mode.backend == "sqlite":
        return f"sqlite:///{tmp_path / 'conformance.db'}"
    return str(request.getfixturevalue("conformance_postgres_dsn"))


@asynccontextmanager
async def open_saver(url: str, leased: bool) -> AsyncIterator[tuple[Persistence, str | None]]:
    """The product's checkpointer on `url`; leased: with a run whose lease this process holds, and
    fences that put every thread under it."""
    async with open_persistence(url) as persistence:
        if not leased:
            yield persistence, None
            return
        store = persistence.store
        run = await store.create_run("conformance", {}, "extractive")
        now = datetime.now(UTC)
        claimed = await store.claim_run(
            run.run_id, OWNER, (now + timedelta(hours=1)).isoformat(), now.isoformat()
        )
        assert claimed is not None
        fences = OneRunFences(store, run.run_id)
        persistence.checkpointer.fences = fences  # type: ignore[attr-defined]
        persistence.fences = fences
        yield persistence, run.run_id


@pytest.mark.parametrize("capability", [c.value for c in Capability])
@pytest.mark.parametrize("mode", MODES, ids=str)
async def test_langgraph_checkpointer_contract(mode: Mode, capability: str, database_url: str) -> None:
    async def saver() -> AsyncGenerator[BaseCheckpointSaver, None]:
        async with open_saver(database_url, mode.leased) as (persistence, _):
            yield persistence.checkpointer

    failures: list[str] = []

    def record(_: str, case: str, passed: bool, error: str | None) -> None:
        if not passed:
            failures.append(f"{case}:\n{error}")

    registered = checkpointer_test(name=f"deepresearch-{mode}")(saver)
    report = await validate(
        registered, capabilities={capability}, progress=ProgressCallbacks(on_test_result=record)
    )
    result = report.results[capability]
    missing = NOT_IMPLEMENTED[mode.backend]
    if not result.detected:
        assert capability in missing, f"{mode}: our saver no longer implements {capability}"
        pytest.skip(f"{capability}: {missing[capability]}")
    assert capability not in missing, f"{mode}: {capability} is implemented now: drop it from NOT_IMPLEMENTED"
    assert result.passed, f"{mode} {capability}: {result.tests_failed} failed\n" + "\n".join(failures)
    assert result.tests_passed > 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_the_leased_mode_is_fenced(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """The leased runs above did check a lease: once it is gone, a write is refused and nothing lands."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'fenced.db'}"
    else:
        url = str(request.getfixturevalue("conformance_postgres_dsn"))
    async with open_saver(url, leased=True) as (persistence, run_id):
        saver = persistence.checkpointer
        assert run_id is not None
        config = generate_config()
        checkpoint = generate_checkpoint(channel_values={"k": "v"}, channel_versions={"k": 1})
        stored = await saver.aput(config, checkpoint, generate_metadata(), {"k": 1})
        await persistence.store.release_lease(run_id, OWNER)
        later = generate_checkpoint(channel_values={"k": "w"}, channel_versions={"k": 2})
        with pytest.raises(LeaseLost):
            await saver.aput(stored, later, generate_metadata(step=1), {"k": 2})
        with pytest.raises(LeaseLost):
            await saver.aput_writes(stored, [("k", "x")], "task-1")
        latest = await saver.aget_tuple(config)
        assert latest is not None and latest.checkpoint["id"] == checkpoint["id"]
        assert latest.pending_writes == []
