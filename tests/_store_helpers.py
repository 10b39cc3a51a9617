"""The store tests' backends (a pytest plugin of tests/conftest.py, for tests/test_store*.py): `backend`
(SQLite, a file per test, and PostgreSQL, a database per test on the throwaway cluster of tests/pg.py),
`store` (the backend, opened) and `checkpoint` (an index row)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from deepresearch.store import CheckpointRecord, RunStore, open_postgres_store, open_sqlite_store


@dataclass
class Backend:
    name: str
    url: str

    def open(self) -> AbstractAsyncContextManager[RunStore]:
        if self.name == "sqlite":
            return open_sqlite_store(Path(self.url.removeprefix("sqlite:///")))
        return open_postgres_store(self.url)

    def migration_versions(self) -> list[int]:
        query = "SELECT version FROM deepresearch_migrations ORDER BY version"
        if self.name == "sqlite":
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as conn:
                return [row[0] for row in conn.execute(query)]
        with psycopg.connect(self.url) as conn:
            return [row[0] for row in conn.execute(query)]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", f"sqlite:///{tmp_path / 'store.db'}")
    else:
        yield Backend("postgres", request.getfixturevalue("fresh_postgres_dsn"))


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[RunStore]:
    async with backend.open() as opened:
        yield opened


def checkpoint(run_id: str, checkpoint_id: str, created_at: str) -> CheckpointRecord:
    return CheckpointRecord(
        run_id=run_id,
        checkpoint_id=checkpoint_id,
        stage="plan",
        title="Plan",
        created_at=created_at,
        next=["search"],
        summary="planned",
        thread_id=f"deepresearch-{run_id}",
        checkpoint_ns="",
        parent_checkpoint_id=None,
    )
