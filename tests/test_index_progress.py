"""Indexing a run's documents says how far it is (files indexed of all): as `message` events with
`indexed`/`total` over SSE, in the CLI's output, at most DEEPRESEARCH_INDEX_PROGRESS_SECONDS apart once
indexing has taken that long (0 here: after every file, so nothing depends on the machine's speed)."""

from __future__ import annotations

from pathlib import Path

import httpx

from peers import serve_app
from runner import create_app
from tests.conftest import Servers
from tests.sse import iter_sse
from tests.test_cli import cli, cli_env

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"
FILES = 40


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    for i in range(FILES):
        (folder / f"note-{i:02d}.md").write_text(
            f"# Checkpoint note {i}\n\nA durable checkpoint records the state of run {i} after every "
            "stage, so a resumed run continues from the latest checkpoint instead of starting over.\n"
        )
    return folder


def test_indexing_progress_is_streamed_before_the_first_stage(servers: Servers, tmp_path: Path) -> None:
    folder = _corpus(tmp_path / "handbook")
    settings = servers.settings(tmp_path, corpus_roots={"handbook": folder}, index_progress_seconds=0)
    with (
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        options = {"corpus": "handbook", "corpus_only": True}
        run = client.post("/api/runs", json={"question": QUESTION, "options": options}).json()
        events = list(iter_sse(client, f"/api/runs/{run['run_id']}/events"))
    assert events[-1].type == "end" and events[-1].data["status"] == "completed"
    progress = [e for e in events if e.type == "message" and e.data.get("total") is not None]
    assert [(e.data["indexed"], e.data["total"]) for e in progress] == [
        (i, FILES) for i in range(1, FILES + 1)
    ]
    assert progress[-1].data["text"] == f"Indexing the documents: {FILES} of {FILES} files"
    first_call = next(i for i, e in enumerate(events) if e.type == "tool_call")
    assert events.index(progress[-1]) < first_call  # all of it before the first stage starts


def test_a_short_indexing_says_nothing_and_the_cli_prints_a_long_one(
    servers: Servers, tmp_path: Path
) -> None:
    folder = _corpus(tmp_path / "notes")
    quiet = cli(
        ["run", QUESTION, "--corpus", str(folder), "--corpus-only"], cli_env(servers, tmp_path), tmp_path
    )
    assert quiet.code == 0, quiet
    assert "Indexing the documents" not in quiet.stdout  # 40 files take well under 5 s
    # the index is there now: a re-index reads nothing, but still counts every file it looks at
    env = cli_env(servers, tmp_path, DEEPRESEARCH_INDEX_PROGRESS_SECONDS="0")
    loud = cli(["run", QUESTION, "--corpus", str(folder), "--corpus-only"], env, tmp_path)
    assert loud.code == 0, loud
    assert f"Indexing the documents: {FILES} of {FILES} files" in loud.stdout, loud
