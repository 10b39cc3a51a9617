"""The terminal progress view (deepresearch/service/cli_view.py) fed the events of real runs: the engine
against the scripted search server on 127.0.0.1 and a real corpus folder."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from deepresearch.engine.core import open_engine
from deepresearch.service.cli_view import ProgressView
from deepresearch.store import EventRecord
from tests.conftest import Servers

QUESTION = "How does the keeper keep the lamp lit through the night?"


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "lamp.md").write_text(
        "# The lamp\n\nThe keeper lights the lamp at dusk and trims its wick at midnight, so the lamp "
        "stays lit through the night.\n\nThe keeper refills the oil before dawn.\n",
        encoding="utf-8",
    )
    return folder


async def _shown(servers: Servers, tmp_path: Path) -> list[str]:
    """A run on the corpus (and the scripted web provider) to the end, as the plain progress view prints it,
    with its closing totals."""
    settings = servers.settings(tmp_path, corpus_dir=_corpus(tmp_path))
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    out = io.StringIO()
    view = ProgressView(final, live=False, console=Console(file=out, width=300, soft_wrap=True))
    for event in events:
        view.on_event(event)
    view.summary(final)
    return out.getvalue().splitlines()


async def test_a_web_provider_that_failed_beside_the_corpus_is_named_on_its_search_line(
    servers: Servers, tmp_path: Path
) -> None:
    """The corpus answered and the web provider did not: the search call is no failure (the run goes on
    with the corpus's results), but "ok, 1 results" alone hid that the web was never searched."""
    servers.search.fail_next(503, times=1000)  # every request of this run
    lines = await _shown(servers, tmp_path)
    assert servers.search.calls_for("generic"), "the web provider was asked"
    searches = [line for line in lines if line.strip().startswith("search:")]
    assert searches and all("— ok, 1 result; generic failed: " in line for line in searches), searches
    assert all("503" in line for line in searches), searches


async def test_a_search_line_names_no_failure_when_every_source_answered(
    servers: Servers, tmp_path: Path
) -> None:
    lines = await _shown(servers, tmp_path)
    searches = [line for line in lines if line.strip().startswith("search:")]
    assert searches and not any("failed" in line for line in searches), searches
    # the corpus page is shorter than a KB: its size, not "0 KB" (read as an empty page)
    (fetched,) = [line for line in lines if "fetch: corpus://lamp.md" in line]
    said = re.search(r"— ok, (\d+) bytes$", fetched)
    assert said and 100 < int(said[1]) <= len((tmp_path / "notes" / "lamp.md").read_bytes()), fetched
    # no model was called: the totals name no tokens ("0 tokens (saved by receipts: 0)")
    (status,) = [line for line in lines if line.startswith("Status: completed")]
    assert "whole run:" in status and "token" not in status, status
