"""A deleted document leaves no copy: after deleting it and the run that read it (and a prune), not one
file under the server's folders holds its text, on SQLite and PostgreSQL (docs/security.md)."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import httpx

from peers import launch, serve_app
from runner import create_app
from tests.conftest import POLL_SECONDS, Servers
from tests.live import ROOT, server_env

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"
MARKDOWN = {"content-type": "text/markdown"}


def _holding(root: Path, marker: bytes) -> list[str]:
    """Every file under `root` whose bytes hold `marker`."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and marker in p.read_bytes()
    )


def _wait_stopped(client: httpx.Client, run_id: str, timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while (run := client.get(f"/api/runs/{run_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"run {run_id} did not stop"
        time.sleep(POLL_SECONDS)
    return run


def test_a_deleted_document_leaves_no_copy_in_any_file(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    marker = f"Zyxmarker{uuid.uuid4().hex}"
    secret = (
        "# Checkpoints\n\nA durable checkpoint records the state of a research run after every stage, so a "
        f"resumed run continues from the latest checkpoint instead of starting over. {marker} keeps them "
        "safe.\n\n## Workflow checkpoints\n\nLong research runs stay safe because each workflow checkpoint "
        f"is durable. The codename {marker} names this durable checkpoint design.\n"
    )
    other = "# Leases\n\nA lease names the process that executes a run; it is renewed while the run runs.\n"
    settings = servers.settings(tmp_path, database_url=database_url)
    docs = "/api/collections/notes/documents"
    with (
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        for name, text in (("secret.md", secret), ("other.md", other)):
            assert client.put(f"{docs}/{name}", content=text.encode(), headers=MARKDOWN).status_code == 201
        options = {"corpus": "notes", "corpus_only": True}
        run = client.post("/api/runs", json={"question": QUESTION, "options": options}).json()
        assert _wait_stopped(client, run["run_id"])["status"] == "completed"
        sources = client.get(f"/api/runs/{run['run_id']}/artifacts/sources.json").json()["sources"]
        assert any(s["url"].endswith("secret.md") for s in sources), sources
        # the scan sees copies where they are: the upload, the index, the run's files
        before = _holding(tmp_path, marker.encode())
        assert any(p.startswith("home/corpus-") for p in before), before
        assert any(p.startswith("workspace/") for p in before), before

        assert client.delete(f"{docs}/secret.md").status_code == 204
        assert client.delete(f"/api/runs/{run['run_id']}").status_code == 204
        assert _holding(tmp_path, marker.encode()) == []  # at once, not only after the WAL moves on
        env = server_env(servers, tmp_path, DEEPRESEARCH_DATABASE_URL=database_url)
        pruned = launch.run(
            [sys.executable, "-m", "agent", "prune", "--older-than", "1m"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert pruned.returncode == 0, pruned.stderr
        # the collection is still searched (its other document), and the deleted one is not found
        assert [d["name"] for d in client.get(docs).json()["documents"]] == ["other.md"]
        assert _holding(tmp_path, marker.encode()) == []
        again = client.post("/api/runs", json={"question": QUESTION, "options": options}).json()
        assert _wait_stopped(client, again["run_id"])["status"] == "completed"
        urls = [
            s["url"]
            for s in client.get(f"/api/runs/{again['run_id']}/artifacts/sources.json").json()["sources"]
        ]
        assert not any(u.endswith("secret.md") for u in urls), urls
        # the last document goes: its collection's index goes with it
        assert client.delete(f"{docs}/other.md").status_code == 204
        assert list((tmp_path / "home").glob("corpus-*")) == []
