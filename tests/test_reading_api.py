"""The reading and keeping routes over real HTTP (deepresearch/api/reading.py), on SQLite and PostgreSQL:
rename (PATCH, migration 8's column), search in the run list, resume/fork counts, the passages rendered by the
report's rule, a source's fetched text from its receipt (no new fetch at the site), downloads named after the
topic, the report as a Word document that python-docx opens with the report's headings, and none of it for
another user's run (404, as for every run route)."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import docx
import httpx

from tests._security_helpers import _create_tokens, bearer, served
from tests.api import wait_status
from tests.conftest import Servers
from tests.sse import iter_sse
from tests.test_runner_api import QUESTION


def completed_run(api: httpx.Client, question: str = QUESTION) -> str:
    run_id = api.post("/api/runs", json={"question": question}).json()["run_id"]
    list(iter_sse(api, f"/api/runs/{run_id}/events"))
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "completed"
    return str(run_id)


def test_rename_search_and_resume_counts(api: httpx.Client) -> None:
    run_id = completed_run(api)
    other = api.post("/api/runs", json={"question": "What limits the throughput of SQLite WAL?"}).json()
    wait_status(api, other["run_id"], {"completed", "failed"})
    assert api.get(f"/api/runs/{run_id}").json()["title"] is None

    renamed = api.patch(f"/api/runs/{run_id}", json={"title": "  Checkpoints   week 48 "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["title"] == "Checkpoints week 48" and renamed.json()["run_id"] == run_id
    assert api.get(f"/api/runs/{run_id}").json()["title"] == "Checkpoints week 48"

    def found(q: str) -> list[str]:
        return [r["run_id"] for r in api.get("/api/runs", params={"q": q}).json()["runs"]]

    assert found("WEEK 48") == [run_id]  # the title, any case
    assert found("write-ahead") == [run_id]  # the question
    assert found("throughput") == [other["run_id"]]
    assert found("100%") == [] and found("_") == []  # LIKE's wildcards are plain characters
    assert len(found("")) == 2

    for bad in ({"title": "x" * 201}, {"title": 5}, {"name": "x"}, {"title": "a\x00b"}):
        response = api.patch(f"/api/runs/{run_id}", json=bad)
        assert response.status_code == 422, (bad, response.text)
    assert api.patch("/api/runs/" + "0" * 32, json={"title": "x"}).status_code == 404
    assert api.patch(f"/api/runs/{run_id}", json={"title": " "}).json()["title"] is None

    # a fork from an older checkpoint counts as a resume and a fork
    cps = api.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
    screen = next(c for c in cps if c["stage"] == "screen_evidence")
    assert api.post(f"/api/runs/{run_id}/resume", json={"checkpoint_id": screen["checkpoint_id"]}).is_success
    run = wait_status(api, run_id, {"completed", "failed"})
    assert (run["resumes"], run["forks"]) == (1, 1)
    assert api.get(f"/api/runs/{other['run_id']}").json()["resumes"] == 0


def test_passages_source_text_and_downloads(api: httpx.Client, servers: Servers) -> None:
    run_id = completed_run(api)
    evidence = api.get(f"/api/runs/{run_id}/artifacts/evidence.json").json()["evidence"]
    passages = api.get(f"/api/runs/{run_id}/passages").json()["passages"]
    assert len(passages) == len(evidence) > 0
    for item, shown in zip(evidence, passages, strict=True):
        assert shown["n"] == item["n"]
        assert shown["html"].startswith("<") and "<script" not in shown["html"]
        words = re.findall(r"[A-Za-z]{6,}", item["passage"])[:3]
        assert all(word in shown["html"] for word in words)

    sources = api.get(f"/api/runs/{run_id}/artifacts/sources.json").json()["sources"]
    hits = sum(servers.site.hits.values())
    for source in sources:
        text = api.get(f"/api/runs/{run_id}/source-text", params={"url": source["url"]})
        assert text.status_code == 200, text.text
        body = text.json()
        assert body["final_url"] == source["final_url"] and body["chars"] > 0
        assert body["html"].startswith("<") and body["title"] == source["title"]
    assert sum(servers.site.hits.values()) == hits  # read from the receipts, not fetched again
    missing = api.get(f"/api/runs/{run_id}/source-text", params={"url": "https://nowhere.example/"})
    assert missing.status_code == 404 and "read no text" in missing.json()["detail"]

    stem = "how-do-durable-workflow-checkpoints-and-sqlite-write"  # its first eight words
    markdown = api.get(f"/api/runs/{run_id}/report")
    assert f'filename="{stem}.md"' in markdown.headers["content-disposition"]
    api.patch(f"/api/runs/{run_id}", json={"title": "WAL notes"})
    word = api.get(f"/api/runs/{run_id}/report.docx")
    assert word.status_code == 200
    assert word.headers["content-disposition"] == 'attachment; filename="wal-notes.docx"'
    document = docx.Document(io.BytesIO(word.content))
    headings = [p.text for p in document.paragraphs if p.style.name.startswith("Heading")]
    expected = [
        re.sub(r"^#+\s*", "", line).strip() for line in markdown.text.splitlines() if line.startswith("#")
    ]
    assert headings == [re.sub(r"[*_`]", "", h) for h in expected] and "Sources" in headings
    assert document.core_properties.title == "WAL notes"
    # each source's URL once (an autolink's text is its URL: it was printed again after it)
    urls = re.findall(r"<(https?://[^>]+)>", markdown.text)
    listed = [p.text for p in document.paragraphs if any(url in p.text for url in urls)]
    assert len(listed) == len(urls) >= 1, listed
    assert all(p.count(url) == 1 for p in listed for url in urls if url in p), listed


def test_another_users_run_cannot_be_read_renamed_or_exported(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True)
    alice, bob = asyncio.run(_create_tokens(settings, ("alice", False), ("bob", False)))
    with (
        served(settings) as base_url,
        httpx.Client(base_url=base_url, timeout=30, headers=bearer(alice)) as mine,
        httpx.Client(base_url=base_url, timeout=30, headers=bearer(bob)) as theirs,
    ):
        run_id = completed_run(mine)
        url = mine.get(f"/api/runs/{run_id}/artifacts/sources.json").json()["sources"][0]["url"]
        write = {"X-Requested-With": "deepresearch-workbench"}
        assert (
            theirs.patch(f"/api/runs/{run_id}", json={"title": "mine now"}, headers=write).status_code == 404
        )
        assert theirs.get(f"/api/runs/{run_id}/passages").status_code == 404
        assert theirs.get(f"/api/runs/{run_id}/source-text", params={"url": url}).status_code == 404
        assert theirs.get(f"/api/runs/{run_id}/report.docx").status_code == 404
        assert theirs.get("/api/runs", params={"q": "durable"}).json()["runs"] == []
        assert mine.get(f"/api/runs/{run_id}").json()["title"] is None
        assert mine.get(f"/api/runs/{run_id}/report.docx").status_code == 200
