"""Fetched texts and prompts stored once, content-addressed (migration 7), on both backends; a run's
state, checkpoints and receipts refer to them by hash; a resumed run repeats no call and cites its pages."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import zlib
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepresearch.engine.core import graph_config, open_engine
from deepresearch.store import RunStore, open_postgres_store, open_sqlite_store
from peers.static_site import ARTICLES
from tests.conftest import Servers, execute_and_pause_after
from tools import FetchOutcome

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunStore]:
    if request.param == "sqlite":
        async with open_sqlite_store(tmp_path / "texts.db") as opened:
            yield opened
    else:
        async with open_postgres_store(request.getfixturevalue("fresh_postgres_dsn")) as opened:
            yield opened


async def test_a_text_is_stored_once_under_its_sha256(store: RunStore) -> None:
    one = await store.create_run("one", {}, "llm")
    two = await store.create_run("two", {}, "llm")
    text = "Write-ahead logging keeps readers and writers apart. " * 400 + "é ✓ 漢字"
    digest = await store.put_text(one.run_id, text)
    assert digest == hashlib.sha256(text.encode()).hexdigest()
    assert await store.put_text(one.run_id, text) == digest  # again: idempotent
    assert await store.put_text(two.run_id, text) == digest  # another run: the same row
    assert await store.get_texts([digest, digest]) == {digest: text}
    assert await store.get_texts(["0" * 64]) == {}
    assert await store.run_text_digests(one.run_id) == [digest]
    assert await store.run_text_digests(two.run_id) == [digest]


async def test_many_texts_are_read_back_in_bounded_batches(store: RunStore) -> None:
    run = await store.create_run("many", {}, "llm")
    texts = [f"passage number {i}: " + "x" * (i % 7) for i in range(450)]
    digests = [await store.put_text(run.run_id, t) for t in texts]
    assert await store.get_texts(digests) == dict(zip(digests, texts, strict=True))


async def test_a_nul_is_stored_the_way_the_database_can_and_the_hash_names_what_is_stored(
    store: RunStore,
) -> None:
    run = await store.create_run("nul", {}, "llm")
    digest = await store.put_text(run.run_id, "before\x00after")
    stored = (await store.get_texts([digest]))[digest]
    assert stored in ("before\x00after", "before\ufffdafter")  # PostgreSQL TEXT holds no NUL
    assert digest == hashlib.sha256(stored.encode()).hexdigest()


async def test_deleting_a_run_removes_the_texts_no_other_run_uses(store: RunStore) -> None:
    keep = await store.create_run("keep", {}, "llm")
    gone = await store.create_run("gone", {}, "llm")
    shared = await store.put_text(keep.run_id, "shared page text")
    assert await store.put_text(gone.run_id, "shared page text") == shared
    own = await store.put_text(gone.run_id, "only the deleted run fetched this")
    await store.delete_run(gone.run_id)
    assert await store.get_texts([shared, own]) == {shared: "shared page text"}
    assert await store.run_text_digests(gone.run_id) == []
    await store.delete_run(keep.run_id)
    assert await store.get_texts([shared]) == {}


async def test_a_text_linked_while_another_run_is_deleted_survives(fresh_postgres_dsn: str) -> None:
    """Two replicas: one deletes the only run that uses a text while the other stores the same text for
    its run. Whatever the interleaving, a text a run links to is never deleted (20 rounds)."""
    async with open_postgres_store(fresh_postgres_dsn) as a, open_postgres_store(fresh_postgres_dsn) as b:
        for round_no in range(20):
            text = f"page fetched by both replicas, round {round_no}"
            doomed = await a.create_run(f"doomed {round_no}", {}, "llm")
            other = await b.create_run(f"other {round_no}", {}, "llm")
            await a.put_text(doomed.run_id, text)
            _, digest = await asyncio.wait_for(
                asyncio.gather(a.delete_run(doomed.run_id), b.put_text(other.run_id, text)), 30
            )
            assert await b.get_texts([digest]) == {digest: text}, round_no
            assert await a.run_text_digests(other.run_id) == [digest]


def test_a_fetch_receipt_from_before_the_store_still_reads() -> None:
    old = {
        "url": "https://a.example/x",
        "page": {
            "url": "https://a.example/x",
            "requested_url": "https://a.example/x",
            "status_code": 200,
            "content_type": "text/html",
            "title": "T",
            "text": "the text, inline as receipts held it before",
            "canonical_url": None,
            "published": None,
            "byte_size": 10,
            "extractor": "trafilatura",
            "redirects": [],
            "fetched_at": "2026-01-01T00:00:00+00:00",
        },
        "error": None,
        "reason": None,
    }
    outcome = FetchOutcome.from_dict(old)
    assert outcome.page is not None and outcome.page.text.startswith("the text, inline")
    assert outcome.page.text_sha256 is None and outcome.page.chars == len(old["page"]["text"])  # type: ignore[index]
    outcome.page.text_sha256 = "ab" * 32
    stored = outcome.to_dict()["page"]
    assert "text" not in stored and stored["chars"] == outcome.page.chars


def _blobs(db: Path) -> list[bytes]:
    """Every checkpoint and write blob LangGraph stored, decompressed."""
    out = []
    with sqlite3.connect(db) as conn:
        rows = [
            *conn.execute("SELECT type, checkpoint FROM checkpoints"),
            *conn.execute("SELECT type, value FROM writes"),
        ]
    for type_, blob in rows:
        if blob is not None:
            out.append(zlib.decompress(blob) if type_ and type_.endswith("+zlib") else bytes(blob))
    return out


async def test_pages_stay_out_of_state_and_receipts_and_a_resumed_run_repeats_nothing(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        first = await execute_and_pause_after(engine, run.run_id, "screen_evidence")
        assert first.status == "cancelled", first.error
        searches, llm_calls = len(servers.search.calls), servers.llm.calls_by_prompt()
        page_hits = Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")})
        assert page_hits and set(page_hits.values()) == {1}

        final = await engine.execute(run.run_id)
        assert final.status == "completed", final.error
        # nothing already done was asked again: same searches, same page hits, no second plan or screening
        assert len(servers.search.calls) == searches
        assert (
            Counter({p: n for p, n in servers.site.hits.items() if p.startswith("/articles/")}) == page_hits
        )
        after = servers.llm.calls_by_prompt()
        for prompt in ("plan/v1", "screen/v1"):
            assert after[prompt] == llm_calls[prompt], prompt
        assert after["report/v1"] == 1

        state = (await engine.graph.aget_state(graph_config(run.thread_id))).values
        sources = state["sources"]
        assert sources and all("text" not in s and len(s["text_sha256"]) == 64 for s in sources)
        texts = await engine.store.get_texts(s["text_sha256"] for s in sources)
        assert len(texts) == len({s["text_sha256"] for s in sources})
        assert all(texts[s["text_sha256"]] and len(texts[s["text_sha256"]]) == s["chars"] for s in sources)
        receipts = await engine.store.list_receipts(run.run_id)
        fetches = [r for r in receipts if r.tool_name == "web.fetch" and r.status == "succeeded"]
        assert fetches and all("text" not in (r.result or {}).get("page", {}) for r in fetches)
        llm = [r for r in receipts if r.tool_name.startswith("llm.")]
        assert llm and all("messages" not in r.args and len(r.args["messages_sha256"]) == 64 for r in llm)
        prompts = await engine.store.get_texts(r.args["messages_sha256"] for r in llm)
        assert all(json.loads(prompts[r.args["messages_sha256"]])[0]["role"] == "system" for r in llm)

        # no page's paragraph is in any checkpoint or write (only their hashes are)
        paragraphs = [
            p.encode()
            for _, ps in ARTICLES.values()
            for p in ps
            if p.encode() in b"".join(t.encode() for t in texts.values())
        ]
        assert paragraphs
        blobs = _blobs(settings.home / "deepresearch.db")
        assert blobs and not any(p in blob for blob in blobs for p in paragraphs)

        # the report still cites the fetched passages, each citation checked against the stored text
        # (the scripted report adds one unsupported claim and one citation of a source never fetched)
        check = state["report"]["citation_check"]
        removed = check["citations_removed"]
        assert {r["reason"] for r in removed} == {"not supported", "no such source"}
        assert check["citations_supported"] == check["citations_checked"] - len(removed) > 0
