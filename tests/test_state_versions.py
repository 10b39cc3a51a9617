"""State versioning: a run paused by an earlier version of deepresearch resumes with this one.

The fixtures under tests/fixtures/ were written by scripts/make_state_fixture.py: a SQLite database with a
run paused after screen_evidence, and its workspace folder. Resuming one with today's graph proves that the
state's changes since were additive (new fields with defaults, old ones still read) — and that the paused
run's completed calls are still answered from its receipts, counted at the scripted servers."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from deepresearch.engine.core import graph_config, open_engine
from deepresearch.store import EventRecord
from tests.conftest import Servers


def _extract(tar: tarfile.TarFile, destination: Path) -> None:
    """The fixture's files and folders, never a path outside `destination` or a link. Python 3.11.0-3.11.3
    (Debian 12's 3.11.2) have no extraction filters, so the members are checked here on every version."""
    for member in tar.getmembers():
        path = PurePosixPath(member.name)
        safe = not path.is_absolute() and ".." not in path.parts and (member.isfile() or member.isdir())
        assert safe, f"unexpected member {member.name!r} in the fixture"
    if hasattr(tarfile, "data_filter"):
        tar.extractall(destination, filter="data")
    else:
        tar.extractall(destination)  # every member was checked above


FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("state-v*"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
async def test_a_run_paused_by_an_older_version_resumes(
    fixture: Path, servers: Servers, tmp_path: Path
) -> None:
    meta = json.loads((fixture / "fixture.json").read_text(encoding="utf-8"))
    unpacked = tmp_path / "unpacked"
    with tarfile.open(fixture / "run.tar.gz") as tar:
        _extract(tar, unpacked)
    (tmp_path / "home").mkdir()
    shutil.copy(unpacked / "deepresearch.db", tmp_path / "home" / "deepresearch.db")
    shutil.copytree(unpacked / "workspace", tmp_path / "workspace")

    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.store.get_run(meta["run_id"])
        assert run.status == "cancelled"
        before = await engine.graph.aget_state(graph_config(run.thread_id))
        assert before.next, "the fixture's run has work left"
        final = await engine.execute(run.run_id, on_event=events.append)
        assert final.status == "completed", final.error
        stages = [e.stage for e in events if e.type == "checkpoint"]
        report = (settings.workspace_dir / run.artifact_dir / "deepresearch-report.md").read_text(
            encoding="utf-8"
        )

    assert meta["paused_after"] not in stages and "write_report" in stages
    # nothing the paused run had done was asked again: no search, no plan, no screening, no fetch
    assert len(servers.search.calls) == 0
    calls = servers.llm.calls_by_prompt()
    assert calls["plan/v1"] == 0 and calls["screen/v1"] == 0 and calls["report/v1"] == 1
    assert not [path for path in servers.site.hits if path.startswith("/articles/")]
    assert "[1]" in report
