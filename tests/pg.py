"""The PostgreSQL fixtures (a pytest plugin of tests/conftest.py) around peers/pg.py's throwaway cluster.

Fixtures: `postgres_cluster` (session: under pytest-xdist, one cluster per worker), `postgres_dsn` (session;
one database for the session) and `fresh_postgres_dsn` (a new empty database per test). Without server
binaries they skip, or fail when DEEPRESEARCH_REQUIRE_POSTGRES=1 (CI, after .ci/install-postgres.sh).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from peers.pg import PostgresCluster, PostgresNotInstalled, start_cluster


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except PostgresNotInstalled as exc:
        if os.environ.get("DEEPRESEARCH_REQUIRE_POSTGRES") == "1":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_dsn(postgres_cluster: PostgresCluster) -> str:
    """DSN of one database shared by the session (trust auth, no password)."""
    return postgres_cluster.dsn(postgres_cluster.create_database("deepresearch_test"))


@pytest.fixture
def fresh_postgres_dsn(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """DSN of a new, empty database, dropped after the test."""
    name = postgres_cluster.create_database()
    try:
        yield postgres_cluster.dsn(name)
    finally:
        postgres_cluster.drop_database(name)
