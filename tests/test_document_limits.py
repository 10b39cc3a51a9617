"""Documents are read in the CPU workers within a page and a time limit (DEEPRESEARCH_DOCUMENT_MAX_PAGES,
DEEPRESEARCH_DOCUMENT_PARSE_SECONDS): a crafted PDF - a few pages sharing one huge compressed content
stream, parsed again for every page - is refused with the limit named, and the server answers meanwhile."""

from __future__ import annotations

import threading
import time
import zlib
from pathlib import Path

import httpx

from peers import serve_app
from peers.static_site import pdf_bytes
from runner import create_app
from tests.conftest import Servers

PDF = {"content-type": "application/pdf"}
QUESTION = "How do durable workflow checkpoints keep long research runs safe?"


def crafted_pdf(pages: int, stream_bytes: int) -> bytes:
    """A valid PDF whose `pages` pages all draw one Flate-compressed content stream of `stream_bytes`
    (text operators: 15 MB of them compress to about 44 KB)."""
    line = b"BT /F1 12 Tf 72 712 Td (deep research) Tj ET\n"
    content = zlib.compress(line * max(1, stream_bytes // len(line)), 9)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 4 0 R >>"
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
        *[page] * pages,
    ]
    return pdf_bytes(objects)


def test_a_crafted_pdf_is_refused_within_the_limits_and_the_server_answers_meanwhile(
    servers: Servers, tmp_path: Path
) -> None:
    settings = servers.settings(tmp_path, document_parse_seconds=1.0, document_max_pages=3)
    slow = crafted_pdf(3, 4_000_000)  # several seconds of parsing without the limit
    assert len(slow) < 20_000
    docs = "/api/collections/notes/documents"
    with (
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=60) as client,
        httpx.Client(base_url=base, timeout=60) as prober,
    ):
        # a small PDF is read and stored (this also starts the CPU workers)
        small = client.put(f"{docs}/small.pdf", content=crafted_pdf(1, 200), headers=PDF)
        assert small.status_code == 201, small.text
        answered: list[float] = []
        result: dict[str, httpx.Response] = {}
        upload = threading.Thread(
            target=lambda: result.setdefault(
                "r", client.put(f"{docs}/crafted.pdf", content=slow, headers=PDF)
            )
        )
        started = time.monotonic()
        upload.start()
        deadline = started + 30
        while upload.is_alive() and time.monotonic() < deadline:  # the server answers while it parses
            asked = time.monotonic()
            assert prober.get("/healthz").status_code == 200
            answered.append(time.monotonic() - asked)
            time.sleep(0.05)
        upload.join(timeout=30)
        refused = result["r"]
        assert refused.status_code == 422, refused.text
        assert "DEEPRESEARCH_DOCUMENT_PARSE_SECONDS" in refused.json()["detail"]
        assert time.monotonic() - started < 10  # the limit, not the whole parse
        assert answered and max(answered) < 2.0, answered  # loose: it answered at all, and soon
        # too many pages
        long = client.put(f"{docs}/long.pdf", content=crafted_pdf(5, 200), headers=PDF)
        assert long.status_code == 422 and "DEEPRESEARCH_DOCUMENT_MAX_PAGES" in long.json()["detail"]
        assert [d["name"] for d in client.get(docs).json()["documents"]] == ["small.pdf"]


def test_indexing_reads_pdfs_within_the_limits(servers: Servers, tmp_path: Path) -> None:
    """A crafted PDF put in a server folder (not uploaded) costs a run's indexing the limit, not its parse:
    the file is recorded as failed, the run goes on with the folder's other documents."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "crafted.pdf").write_bytes(crafted_pdf(3, 4_000_000))
    (folder / "checkpoints.md").write_text(
        "# Checkpoints\n\nA durable checkpoint records the state of a research run after every stage, so a "
        "resumed run continues from the latest checkpoint instead of starting over.\n"
    )
    settings = servers.settings(tmp_path, corpus_roots={"handbook": folder}, document_parse_seconds=1.0)
    with (
        serve_app(create_app(settings), lifespan="on") as base,
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        options = {"corpus": "handbook", "corpus_only": True}
        started = time.monotonic()
        run = client.post("/api/runs", json={"question": QUESTION, "options": options}).json()
        deadline = started + 60
        while (status := client.get(f"/api/runs/{run['run_id']}").json()["status"]) in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert status == "completed"
        urls = [
            s["url"]
            for s in client.get(f"/api/runs/{run['run_id']}/artifacts/sources.json").json()["sources"]
        ]
        assert any(u.endswith("checkpoints.md") for u in urls) and not any(u.endswith(".pdf") for u in urls)
