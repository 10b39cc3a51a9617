"""What only the SQLite store has to prove: processes setting up one new file at once, group commit, and
both of aiosqlite's statement paths (the contract both backends share is tests/test_store.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from deepresearch.errors import RunNotFound
from deepresearch.store import open_sqlite_store
from deepresearch.store.sql import MIGRATIONS

REPO = Path(__file__).resolve().parent.parent


_OPEN_SQLITE = """
import asyncio, sys
from deepresearch.store import open_persistence

async def main(url: str) -> None:
    async with open_persistence(url) as persistence:
        await persistence.store.ping()

for line in sys.stdin:  # a new database URL, handed to every process at the same moment
    asyncio.run(main(line.strip()))
    print("opened", flush=True)
"""


async def test_processes_opening_a_new_sqlite_database_at_once(tmp_path: Path) -> None:
    """Several processes set up one new file at the same moment: every one starts, migrations run once.
    The processes start once (an interpreter's start takes seconds of CPU) and are handed each new file
    together, so from the second file on they reach it within milliseconds of each other."""
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    processes = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", _OPEN_SQLITE, cwd=REPO, **pipes)
        for _ in range(6)
    ]
    try:
        for attempt in range(5):
            url = f"sqlite:///{tmp_path / f'race-{attempt}.db'}"
            for process in processes:
                assert process.stdin is not None
                process.stdin.write(f"{url}\n".encode())
            await asyncio.gather(*(p.stdin.drain() for p in processes if p.stdin))
            answers = await asyncio.wait_for(
                asyncio.gather(*(p.stdout.readline() for p in processes if p.stdout)), timeout=60
            )
            if answers != [b"opened\n"] * len(processes):  # a process failed: its traceback says why
                for process in processes:
                    if process.returncode is None:
                        process.kill()
                errors = [(await p.stderr.read()).decode()[-800:] for p in processes if p.stderr]
                raise AssertionError(errors)
            with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
                versions = [row[0] for row in conn.execute("SELECT version FROM deepresearch_migrations")]
            assert sorted(versions) == [version for version, *_ in MIGRATIONS]
    finally:
        for process in processes:
            if process.stdin:
                process.stdin.close()  # the processes' loop ends
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), timeout=30)
            except TimeoutError:
                process.kill()
                await process.wait()


# --- SQLite only: group commit ---------------------------------------------------------------------
async def test_sqlite_group_commit_keeps_each_writers_result_and_failure_its_own(tmp_path: Path) -> None:
    """Writes asked for at once are committed together; each caller gets its own result, in order, and a
    failing write fails only its caller (its group is rolled back and replayed one by one)."""
    async with open_sqlite_store(tmp_path / "group.db") as store:
        runs = [await store.create_run(f"q{i}", {}, "extractive") for i in range(4)]

        async def burst(n: int, with_failure: bool) -> list[Any]:
            writes: list[Any] = [
                store.append_event(runs[i % 4].run_id, "e", None, {"i": i}) for i in range(n)
            ]
            if with_failure:
                writes.insert(n // 2, store.delete_run("no-such-run"))  # raises inside its transaction
            return await asyncio.gather(*writes, return_exceptions=True)

        for round_no in range(5):
            outcomes = await burst(40, with_failure=round_no % 2 == 0)
            failed = [o for o in outcomes if isinstance(o, BaseException)]
            assert [type(f) for f in failed] == ([] if round_no % 2 else [RunNotFound])
            assert all(o.seq > 0 for o in outcomes if not isinstance(o, BaseException))
        for run in runs:
            events = await store.list_events(run.run_id)
            assert [e.seq for e in events] == list(range(1, 51))  # 5 bursts x 10 each, no gap, no repeat
            assert [e.data["i"] % 4 for e in events] == [runs.index(run)] * 50
    with sqlite3.connect(tmp_path / "group.db") as conn:  # all of it committed, on disk
        assert conn.execute("SELECT COUNT(*) FROM run_events").fetchone()[0] == 200


async def test_statements_give_the_same_answers_on_both_aiosqlite_paths(tmp_path: Path) -> None:
    """One trip to aiosqlite's thread per statement (its private `_execute`), or its public cursors when an
    aiosqlite without it is installed: the same rows, row access by name and row counts."""
    from deepresearch.store.sqlite import _Statements, connect_sqlite

    conn = await connect_sqlite(tmp_path / "paths.db")
    try:
        fast = _Statements(conn)
        slow = _Statements(conn)
        slow._run = None
        assert fast._run is not None  # the aiosqlite this project installs has it
        for statements in (fast, slow):
            await statements.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER)")
            await statements.execute("DELETE FROM t")
            count, _ = await statements.execute("INSERT INTO t VALUES (?, ?), (?, ?)", ("a", 1, "b", 2))
            assert count == 2
            count, rows = await statements.execute("SELECT k, v FROM t ORDER BY k")
            assert [(r["k"], r["v"]) for r in rows] == [("a", 1), ("b", 2)]
            count, rows = await statements.execute("UPDATE t SET v = v + 1 WHERE k = ? RETURNING v", ("b",))
            assert rows[0]["v"] == 3
            await conn.commit()
    finally:
        await conn.close()
