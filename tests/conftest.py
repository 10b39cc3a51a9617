"""Shared fixtures: the scripted servers of peers/ on 127.0.0.1 and settings that point the engine at them."""

from __future__ import annotations

import compileall
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepresearch.engine.core import ResearchEngine
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import EventRecord, RunRecord
from peers import launch
from peers.servers import Servers, scripted_servers

# shared fixtures of the API, PostgreSQL, fetch, search and LLM test modules (named in each docstring)
pytest_plugins = [
    "tests.pg",
    "tests.api",
    "tests._fetch_helpers",
    "tests._search_helpers",
    "tests._llm_helpers",
]
ROOT = Path(__file__).resolve().parent.parent
POLL_SECONDS = 0.1
"""How often the tests' wait loops read a run until it reaches a state that stays (finished, a checkpoint
count reached). Each read costs ~6 ms of CPU (client and server); at 0.05 s the waits of the suite spent a
tenth of a core on polling alone."""


def pytest_configure(config: pytest.Config) -> None:
    """Compile our modules once, before any worker starts: the suite starts well over a hundred
    `deepresearch` processes, and where PYTHONDONTWRITEBYTECODE is set (CI) each would compile every module
    it imports again (about a quarter of a second of CPU each). Existing bytecode is still read."""
    config.addinivalue_line("markers", "long: one of the suite's longest tests, run first")
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller did it
        return
    for folder in ("deepresearch", "peers", "bench"):
        compileall.compile_dir(ROOT / folder, quiet=1, workers=1)
    for module in ROOT.glob("*.py"):
        compileall.compile_file(module, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``long`` (the suite's longest, 20-70 s each by --durations) first: pytest-xdist's
    worksteal hands out what is left in small steps, but a test that starts last runs alone at the end while
    the other workers wait (the longest-first rule of scheduling). Every other test keeps its order."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture
def servers() -> Iterator[Servers]:
    """The scripted peers; the engines and processes they configure run CPU work in one worker process,
    not the default two: each engine that fetches starts its own pool, and the second worker's start
    (~0.3 s of CPU) bought the suite nothing but CPU time (tests/test_cpu_pool.py tests the pool itself)."""
    with scripted_servers(cpu_workers=1) as running:
        yield running


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The API and live-server suites run once on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return str(request.getfixturevalue("fresh_postgres_dsn"))


async def execute_and_pause_after(
    engine: ResearchEngine, run_id: str, stage: str, seen: list[EventRecord] | None = None
) -> RunRecord:
    """Execute the run and pause it (a cancel, as Ctrl-C does) once `stage`'s checkpoint is out; `seen`
    collects the execution's events."""
    cancel = CancelSignal(run_id, engine.store)

    def pause(event: EventRecord) -> None:
        if seen is not None:
            seen.append(event)
        if event.type == "checkpoint" and event.stage == stage:
            cancel.request("test pause")

    return await engine.execute(run_id, cancel=cancel, on_event=pause)


def pytest_unconfigure(config: pytest.Config) -> None:
    """End this worker's zygote (peers/launch.py) with the session, not only when the worker exits."""
    launch.stop()
