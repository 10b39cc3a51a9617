"""Per-user limits raced as a client would race them: many requests at once over real HTTP against live
servers (two replicas on one database), on SQLite and PostgreSQL. Exactly the limit passes, never more."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from peers import serve_app
from runner import create_app
from tests.conftest import POLL_SECONDS, Servers

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"
MARKDOWN = {"content-type": "text/markdown"}


async def _at_once(requests: list[tuple[str, str, str, dict[str, object]]]) -> list[httpx.Response]:
    """Send every (base, method, path, kwargs) at the same moment, each on a connection of its own."""
    clients = [httpx.AsyncClient(base_url=base, timeout=60) for base, _, _, _ in requests]
    try:
        # the connections first, so the requests themselves leave together
        await asyncio.gather(*(client.get("/healthz") for client in clients))
        return await asyncio.gather(
            *(
                client.request(method, path, **kwargs)  # type: ignore[arg-type]
                for client, (_, method, path, kwargs) in zip(clients, requests, strict=True)
            )
        )
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))


def _wait_stopped(client: httpx.Client, run_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while client.get(f"/api/runs/{run_id}").json()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"run {run_id} did not stop"
        time.sleep(POLL_SECONDS)


def test_starts_at_once_never_pass_the_active_run_limit(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    settings = servers.settings(
        tmp_path,
        database_url=database_url,
        max_active_runs_per_user=3,
        max_runs_per_minute=1000,
        stage_delay_seconds=3,  # the accepted runs stay active while the others are refused
    )
    with (
        serve_app(create_app(settings), lifespan="on") as one,
        serve_app(create_app(settings), lifespan="on") as two,
        httpx.Client(base_url=one, timeout=30) as client,
    ):
        bases = [one, two] * 4
        answers = asyncio.run(
            _at_once([(b, "POST", "/api/runs", {"json": {"question": QUESTION}}) for b in bases])
        )
        assert Counter(a.status_code for a in answers) == {201: 3, 429: 5}, [a.text for a in answers]
        for refused in (a for a in answers if a.status_code == 429):
            assert "DEEPRESEARCH_MAX_ACTIVE_RUNS_PER_USER" in refused.json()["detail"]
        active = [r for r in client.get("/api/runs").json()["runs"] if r["status"] in ("queued", "running")]
        assert len(active) == 3
        for run in active:
            client.post(f"/api/runs/{run['run_id']}/cancel", json={})
        for run in active:
            _wait_stopped(client, run["run_id"])


def test_uploads_at_once_never_pass_the_documents_limit(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    settings = servers.settings(tmp_path, database_url=database_url, max_documents_per_collection=1000)
    with (
        serve_app(create_app(settings), lifespan="on") as one,
        serve_app(create_app(settings), lifespan="on") as two,
        httpx.Client(base_url=one, timeout=30) as client,
    ):
        docs = "/api/collections/notes/documents"
        assert client.put(f"{docs}/first.md", content=b"# First\n", headers=MARKDOWN).status_code == 201
        # 990 documents held already (written straight into the folder: 989 uploads would be slow)
        folder = next((settings.home / "uploads").glob("*/notes"))
        for i in range(989):
            (folder / f"held-{i}.md").write_text(f"# Held {i}\n")
        kwargs: dict[str, object] = {"content": b"# New\n\nA new document.\n", "headers": MARKDOWN}
        uploads = [(base, "PUT", f"{docs}/new-{i}.md", kwargs) for i, base in enumerate([one, two] * 20)]
        answers = asyncio.run(_at_once(uploads))
        assert Counter(a.status_code for a in answers) == {201: 10, 422: 30}, [a.text for a in answers]
        assert all(
            "DEEPRESEARCH_MAX_DOCUMENTS_PER_COLLECTION" in a.json()["detail"]
            for a in answers
            if a.status_code == 422
        )
        assert len(client.get(docs).json()["documents"]) == 1000


def test_storage_quota_holds_under_uploads_at_once(
    servers: Servers, tmp_path: Path, database_url: str
) -> None:
    settings = servers.settings(
        tmp_path, database_url=database_url, max_storage_bytes_per_user=10_000, max_collections_per_user=2
    )
    with (
        serve_app(create_app(settings), lifespan="on") as one,
        serve_app(create_app(settings), lifespan="on") as two,
        httpx.Client(base_url=one, timeout=30) as client,
    ):
        body = b"# Page\n\n" + b"x" * 992  # 1,000 bytes
        kwargs: dict[str, object] = {"content": body, "headers": MARKDOWN}
        # ten new collections at once: two are made
        made = asyncio.run(
            _at_once(
                [
                    (b, "PUT", f"/api/collections/c{i}/documents/a.md", kwargs)
                    for i, b in enumerate([one, two] * 5)
                ]
            )
        )
        assert Counter(a.status_code for a in made) == {201: 2, 429: 8}, [a.text for a in made]
        assert all(
            "DEEPRESEARCH_MAX_COLLECTIONS_PER_USER" in a.json()["detail"]
            for a in made
            if a.status_code == 429
        )
        name = next(a.request.url.path.split("/")[3] for a in made if a.status_code == 201)
        # twenty 1,000-byte documents at once into 8,000 bytes left: eight are stored
        stored = asyncio.run(
            _at_once(
                [
                    (b, "PUT", f"/api/collections/{name}/documents/d{i}.md", kwargs)
                    for i, b in enumerate([one, two] * 10)
                ]
            )
        )
        assert Counter(a.status_code for a in stored) == {201: 8, 413: 12}, [a.text for a in stored]
        assert all(
            "DEEPRESEARCH_MAX_STORAGE_BYTES_PER_USER" in a.json()["detail"]
            for a in stored
            if a.status_code == 413
        )
        assert client.get("/api/collections").json()["storage"] == {
            "bytes": 10_000,
            "max_bytes": 10_000,
            "collections": 2,
            "max_collections": 2,
        }
        # replacing a document (the first one: the only one surely stored) by one as large fits; larger not
        assert client.put(f"/api/collections/{name}/documents/a.md", **kwargs).status_code == 201  # type: ignore[arg-type]
        bigger = client.put(f"/api/collections/{name}/documents/a.md", content=body + b"y", headers=MARKDOWN)
        assert bigger.status_code == 413
        # deleting gives the room back
        assert client.delete(f"/api/collections/{name}/documents/a.md").status_code == 204
        assert client.get("/api/collections").json()["storage"]["bytes"] == 9_000


@pytest.mark.long
def test_a_resume_counts_against_the_active_run_limit(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(
        tmp_path, max_active_runs_per_user=1, max_runs_per_minute=1000, stage_delay_seconds=2
    )
    with (
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        paused = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        assert client.post(f"/api/runs/{paused}/cancel", json={}).status_code == 202
        _wait_stopped(client, paused)
        busy = client.post("/api/runs", json={"question": QUESTION})
        assert busy.status_code == 201, busy.text
        # the paused run going back to the queue would make two active runs
        refused = client.post(f"/api/runs/{paused}/resume", json={})
        assert refused.status_code == 429, refused.text
        assert "DEEPRESEARCH_MAX_ACTIVE_RUNS_PER_USER" in refused.json()["detail"]
        assert client.get(f"/api/runs/{paused}").json()["status"] == "cancelled"
        client.post(f"/api/runs/{busy.json()['run_id']}/cancel", json={})
        _wait_stopped(client, busy.json()["run_id"])
        assert client.post(f"/api/runs/{paused}/resume", json={}).status_code == 202
        _wait_stopped(client, paused, timeout=120)
        assert client.get(f"/api/runs/{paused}").json()["status"] == "completed"
