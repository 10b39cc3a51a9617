"""docs/security.md, tried as an attacker would, against live servers on loopback: tokens and ownership,
the workbench's session cookie, cross-site writes, foreign Host names, corpus roots and uploads, nosniff.
The operator's side (token commands, retention, limits) is tests/test_security_operator.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from config import Settings
from deepresearch.service.auth import TokenError, check_name
from tests._security_helpers import QUESTION, _create_tokens, _revoke, bearer, served, wait_finished
from tests.conftest import Servers
from tests.sse import iter_sse


def test_off_loopback_two_users_cannot_touch_each_others_runs(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    alice, bob, admin = asyncio.run(_create_tokens(settings, ("alice", False), ("bob", False), ("ops", True)))
    with (
        served(settings, bind_host="0.0.0.0") as base,
        httpx.Client(base_url=base, timeout=30, headers=bearer(alice)) as as_alice,
        httpx.Client(base_url=base, timeout=30, headers=bearer(bob)) as as_bob,
        httpx.Client(base_url=base, timeout=30, headers=bearer(admin)) as as_admin,
        httpx.Client(base_url=base, timeout=30) as anonymous,
    ):
        # no token (or a wrong one) off loopback: 401, with the way to get one
        for response in (
            anonymous.get("/api/runs"),
            anonymous.post("/api/runs", json={"question": QUESTION}),
            anonymous.get("/api/runs", headers=bearer("drt_00000000_" + "x" * 43)),
            anonymous.get("/api/runs", headers=bearer("not a token")),
        ):
            assert response.status_code == 401, response.text
            assert response.headers["www-authenticate"] == "Bearer"
        assert "deepresearch token create" in anonymous.get("/api/runs").json()["detail"]
        assert anonymous.get("/healthz").status_code == 200  # probes need no token

        created = as_alice.post("/api/runs", json={"question": QUESTION})
        assert created.status_code == 201, created.text
        run_id = created.json()["run_id"]
        assert created.json()["owner"] == "alice"
        assert wait_finished(as_alice, run_id)["status"] == "completed"
        checkpoint = as_alice.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"][0]["checkpoint_id"]

        # bob: alice's run does not exist for him, whatever he tries
        for method, path, body in [
            ("GET", f"/api/runs/{run_id}", None),
            ("GET", f"/api/runs/{run_id}/events", None),
            ("GET", f"/api/runs/{run_id}/checkpoints", None),
            ("GET", f"/api/runs/{run_id}/checkpoints/{checkpoint}/preview", None),
            ("GET", f"/api/runs/{run_id}/receipts", None),
            ("GET", f"/api/runs/{run_id}/artifacts", None),
            ("GET", f"/api/runs/{run_id}/artifacts/plan.json", None),
            ("GET", f"/api/runs/{run_id}/report", None),
            ("POST", f"/api/runs/{run_id}/cancel", {}),
            ("POST", f"/api/runs/{run_id}/resume", {"checkpoint_id": checkpoint}),
            ("DELETE", f"/api/runs/{run_id}", None),
        ]:
            response = as_bob.request(method, path, json=body)
            assert response.status_code == 404, (method, path, response.text)
            assert response.json() == {"detail": "Run not found"}
        assert as_bob.get("/api/runs").json()["runs"] == []
        assert as_bob.get("/api/session").json()["user"] == "bob"

        # the owner and an admin see it; the run is untouched by bob's attempts
        assert [r["run_id"] for r in as_alice.get("/api/runs").json()["runs"]] == [run_id]
        assert [r["run_id"] for r in as_admin.get("/api/runs").json()["runs"]] == [run_id]
        assert as_admin.get(f"/api/runs/{run_id}").json()["status"] == "completed"
        assert [e.type for e in iter_sse(as_alice, f"/api/runs/{run_id}/events")][-1] == "end"

        # a revoked token stops working at once
        asyncio.run(_revoke(settings, "bob"))
        assert as_bob.get("/api/runs").status_code == 401
        assert as_alice.delete(f"/api/runs/{run_id}").status_code == 204


def test_workbench_session_cookie_keeps_the_token_out_of_urls(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, require_token=True)
    (alice,) = asyncio.run(_create_tokens(settings, ("alice", False)))
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as browser:
        assert browser.get("/api/session").status_code == 401
        wrong = browser.post("/api/session", json={"token": "drt_nope"})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        login = browser.post("/api/session", json={"token": alice})
        assert login.status_code == 200, login.text
        assert login.json() == {"user": "alice", "admin": False, "token_required": True, "collections": []}
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        assert alice.lower() not in cookie  # a session id, not the token (tests/test_sessions.py)
        # the cookie alone now authenticates, the event stream too (EventSource cannot send headers)
        run_id = browser.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        assert [e.type for e in iter_sse(browser, f"/api/runs/{run_id}/events")][-1] == "end"
        assert browser.delete("/api/session").status_code == 204
        assert browser.get("/api/runs").status_code == 401


def test_loopback_without_tokens_is_the_local_owner(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        session = client.get("/api/session").json()
        assert session == {"user": "local", "admin": False, "token_required": False, "collections": []}
        run = client.post("/api/runs", json={"question": QUESTION}).json()
        assert run["owner"] == "local"
        # a token given on loopback still counts, and a wrong one is refused (never silently ignored)
        assert client.get("/api/runs", headers=bearer("drt_nope")).status_code == 401
        wait_finished(client, run["run_id"])


def test_cross_site_writes_and_foreign_hosts_are_refused(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(
        tmp_path, allowed_hosts=["research.example"], cors_origins=["https://partner.example"]
    )
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_finished(client, run_id)
        port = base.rsplit(":", 1)[1]
        cancel = f"/api/runs/{run_id}/cancel"
        # what a page on another site can send without a preflight: a form POST; a browser names its site
        form = {"content-type": "application/x-www-form-urlencoded"}
        for site in ("cross-site", "same-site", "Cross-Site", "bogus"):
            refused = client.post(cancel, headers=form | {"Sec-Fetch-Site": site})
            assert refused.status_code == 403 and "Sec-Fetch-Site" in refused.json()["detail"], site
        # a browser from before Sec-Fetch-Site: only its Origin tells
        evil = client.post(cancel, headers=form | {"Origin": "http://evil.example"})
        assert evil.status_code == 403 and "cross-origin" in evil.json()["detail"]
        other_port = {"Origin": f"http://127.0.0.1:{int(port) + 1}"}
        assert client.post(cancel, json={}, headers=other_port).status_code == 403
        assert client.delete(f"/api/runs/{run_id}", headers={"Origin": "null"}).status_code == 403
        patch = client.patch(
            f"/api/runs/{run_id}", json={"title": "x"}, headers={"Origin": "http://evil.example"}
        )
        assert patch.status_code == 403
        # every path, not only /api and /mcp (other routers answer unsafe methods too)
        assert client.post("/assistants/search", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
        assert client.put("/research/x", headers={"Origin": "http://evil.example"}).status_code == 403
        # a plain client (curl, httpx: no browser header) needs no body and no extra header
        assert client.post(cancel).status_code == 202
        assert client.post(cancel, headers=form).status_code == 202
        # the server's own page, and what the user does in the address bar
        for headers in (
            {"Sec-Fetch-Site": "same-origin", "Origin": f"http://127.0.0.1:{port}"},
            {"Sec-Fetch-Site": "none"},
            {"Origin": f"http://127.0.0.1:{port}"},
            {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"},
        ):
            assert client.post(cancel, headers=headers).status_code == 202, headers
        # an origin the operator allows (DEEPRESEARCH_CORS_ORIGINS), whatever the browser says
        partner = {"Origin": "https://partner.example", "Sec-Fetch-Site": "cross-site"}
        assert client.post(cancel, headers=partner).status_code == 202
        lookalike = partner | {"Origin": "https://partner.example.evil"}
        assert client.post(cancel, headers=lookalike).status_code == 403
        # DNS rebinding: attacker.test resolving to 127.0.0.1 is answered with 421, even for reads
        for host in ("attacker.test", "attacker.test:80", "127.0.0.1.attacker.test"):
            response = client.get("/api/runs", headers={"Host": host})
            assert response.status_code == 421, host
            assert "DEEPRESEARCH_ALLOWED_HOSTS" in response.json()["detail"]
        assert client.get("/research/", headers={"Host": "attacker.test"}).status_code == 421
        for host in (f"localhost:{port}", f"research.example:{port}", "[::1]", "127.0.0.1"):
            assert client.get("/api/runs", headers={"Host": host}).status_code == 200, host


def test_nosniff_on_every_response(servers: Servers, tmp_path: Path) -> None:
    with served(servers.settings(tmp_path)) as base, httpx.Client(base_url=base, timeout=30) as client:
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        wait_finished(client, run_id)
        for path in (
            "/healthz",
            "/openapi.json",
            "/api/runs",
            "/api/runs/nope",
            f"/api/runs/{run_id}",
            f"/api/runs/{run_id}/report",
            f"/api/runs/{run_id}/report?format=html",
            f"/api/runs/{run_id}/artifacts/plan.json",
            "/research/",
        ):
            assert client.get(path).headers.get("x-content-type-options") == "nosniff", path


def test_api_clients_choose_among_the_operators_collections(servers: Servers, tmp_path: Path) -> None:
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "checkpoints.md").write_text(
        "# Checkpoints\n\nA durable checkpoint records the state of a research run after every stage, so "
        "a resumed run continues from the latest checkpoint instead of starting over.\n",
        encoding="utf-8",
    )
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords.md").write_text("# Passwords\n\nThe checkpoint password is hunter2.\n")
    (manual / "leak.md").symlink_to(secret / "passwords.md")
    settings = servers.settings(tmp_path, corpus_roots={"manual": manual})
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/api/session").json()["collections"] == ["manual"]
        for options, field in [
            ({"corpus_dir": str(secret)}, "corpus_dir"),
            ({"corpus_dir": "/etc"}, "corpus_dir"),
            ({"corpus": "etc"}, "corpus"),
            ({"corpus": "../secret"}, "corpus"),
        ]:
            response = client.post("/api/runs", json={"question": QUESTION, "options": options})
            assert response.status_code == 422, response.text
            assert response.json()["errors"][0]["loc"] == ["body", "options", field]
        refused = client.post("/api/runs", json={"question": QUESTION, "options": {"corpus_dir": "/etc"}})
        assert "manual" in refused.json()["detail"]
        run = client.post(
            "/api/runs", json={"question": QUESTION, "options": {"corpus": "manual", "corpus_only": True}}
        ).json()
        done = wait_finished(client, run["run_id"])
        assert done["status"] == "completed"  # and no server path in what the client sees:
        assert done["options"]["corpus"] == "manual" and done["options"]["corpus_dir"] is None
        sources = client.get(f"/api/runs/{run['run_id']}/artifacts/sources.json").json()["sources"]
        urls = [s["url"] for s in sources]
        assert urls and all(u.startswith("corpus://") for u in urls)
        assert any("checkpoints.md" in u for u in urls) and not any("leak" in u for u in urls)
        report = client.get(f"/api/runs/{run['run_id']}/report").text
        assert "hunter2" not in report
        # resuming cannot switch the run to a server folder either
        checkpoints = client.get(f"/api/runs/{run['run_id']}/checkpoints").json()["checkpoints"]
        resumed = client.post(
            f"/api/runs/{run['run_id']}/resume",
            json={"checkpoint_id": checkpoints[0]["checkpoint_id"], "options": {"corpus_dir": str(secret)}},
        )
        assert resumed.status_code == 422, resumed.text
        assert resumed.json()["errors"][0]["loc"] == ["body", "options", "corpus_dir"]


def test_users_upload_documents_into_their_own_collections(servers: Servers, tmp_path: Path) -> None:
    server_docs = tmp_path / "server-docs"
    server_docs.mkdir()
    (server_docs / "a.md").write_text("# A\n\nServer text.\n")
    settings = servers.settings(
        tmp_path,
        require_token=True,
        corpus_roots={"handbook": server_docs},
        max_upload_bytes=10_000,
        max_documents_per_collection=2,
    )
    alice, bob = asyncio.run(_create_tokens(settings, ("alice", False), ("bob", False)))
    page = (
        "# Checkpoints\n\nA durable checkpoint records the state of a research run after every stage, so a "
        "resumed run continues from the latest checkpoint instead of starting over.\n"
    )
    with (
        served(settings) as base,
        httpx.Client(base_url=base, timeout=30, headers=bearer(alice)) as as_alice,
        httpx.Client(base_url=base, timeout=30, headers=bearer(bob)) as as_bob,
    ):
        docs = "/api/collections/notes/documents"
        markdown = {"content-type": "text/markdown"}
        put = as_alice.put(f"{docs}/checkpoints.md", content=page.encode(), headers=markdown)
        assert put.status_code == 201, put.text
        assert put.json() == {"name": "checkpoints.md", "size": len(page.encode())}
        assert as_alice.get("/api/collections").json()["collections"] == [
            {"name": "handbook", "kind": "server", "documents": None},
            {"name": "notes", "kind": "uploaded", "documents": 1},
        ]
        assert as_alice.get("/api/session").json()["collections"] == ["handbook", "notes"]
        # what is refused, and why
        refusals = [
            (f"{docs}/tool.exe", b"MZ", {"content-type": "application/octet-stream"}, 415),
            (f"{docs}/fake.pdf", b"not a pdf", {"content-type": "application/pdf"}, 415),
            (f"{docs}/page.md", b"# x", {"content-type": "image/png"}, 415),
            (f"{docs}/latin.md", "caf\u00e9".encode("latin-1"), markdown, 415),
            (f"{docs}/..md", b"# x", markdown, 422),
            (f"{docs}/empty.md", b"", markdown, 422),
            (f"{docs}/big.md", b"x" * 20_000, markdown, 413),
            ("/api/collections/handbook/documents/x.md", b"# x", markdown, 422),
            ("/api/collections/no%20spaces/documents/x.md", b"# x", markdown, 422),
        ]
        for path, body, headers, status in refusals:
            response = as_alice.put(path, content=body, headers=headers)
            assert response.status_code == status, (path, response.text)
            assert response.json()["detail"]
        foreign = as_alice.put(
            f"{docs}/x.md", content=b"# x", headers=markdown | {"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        assert (
            as_alice.put(f"{docs}/second.md", content=b"# Two\n\nMore.\n", headers=markdown).status_code
            == 201
        )
        full = as_alice.put(f"{docs}/third.md", content=b"# Three\n", headers=markdown)
        assert (
            full.status_code == 422 and "DEEPRESEARCH_MAX_DOCUMENTS_PER_COLLECTION" in full.json()["detail"]
        )
        # replacing a document is not a new one
        assert (
            as_alice.put(f"{docs}/second.md", content=b"# Two\n\nEdited.\n", headers=markdown).status_code
            == 201
        )

        # bob has no such collection: not to list, not to search, not to delete from
        assert as_bob.get(docs).status_code == 404
        assert as_bob.delete(f"{docs}/checkpoints.md").status_code == 404
        assert as_bob.get("/api/session").json()["collections"] == ["handbook"]
        refused = as_bob.post("/api/runs", json={"question": QUESTION, "options": {"corpus": "notes"}})
        assert refused.status_code == 422 and refused.json()["errors"][0]["loc"] == [
            "body",
            "options",
            "corpus",
        ]

        run = as_alice.post(
            "/api/runs", json={"question": QUESTION, "options": {"corpus": "notes", "corpus_only": True}}
        ).json()
        assert wait_finished(as_alice, run["run_id"])["status"] == "completed"
        sources = as_alice.get(f"/api/runs/{run['run_id']}/artifacts/sources.json").json()["sources"]
        assert any(s["url"].endswith("checkpoints.md") for s in sources), sources

        assert as_alice.delete(f"{docs}/second.md").status_code == 204
        assert [d["name"] for d in as_alice.get(docs).json()["documents"]] == ["checkpoints.md"]
        assert as_alice.delete(f"{docs}/checkpoints.md").status_code == 204
        assert as_alice.get(docs).status_code == 404  # the collection went with its last document
        assert as_alice.delete(f"{docs}/checkpoints.md").status_code == 404


def test_names_are_matched_whole_and_refusals_never_echo_them(servers: Servers, tmp_path: Path) -> None:
    """`$` matches before a final newline: "notes\\n" must not pass for "notes" (a folder, a user, a run's
    corpus option); and no refusal quotes the name it refuses (README: nothing echoes rejected input)."""
    server_docs = tmp_path / "zzserver"
    server_docs.mkdir()
    settings = servers.settings(tmp_path, corpus_roots={"zzserver": server_docs})
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        markdown = {"content-type": "text/markdown"}
        own = "/api/collections/zznotes/documents"
        assert client.put(f"{own}/zzkept.md", content=b"# Kept\n", headers=markdown).status_code == 201
        refusals = [
            ("put", "/api/collections/zzline%0A/documents/zzx.md", 422),
            ("put", f"{own}/zzline.md%0A", 415),  # ".md\n" is no extension the corpus reads
            ("put", f"{own}/zztool.exe", 415),
            ("put", "/api/collections/zzserver/documents/zzx.md", 422),
            ("get", "/api/collections/zzmissing/documents", 404),
            ("get", "/api/collections/zznotes%0A/documents", 404),
            ("delete", f"{own}/zzmissing.md", 404),
            ("delete", f"{own}/zzkept.md%0A", 404),
        ]
        for method, path, status in refusals:
            response = client.request(method, path, content=b"# x\n", headers=markdown)
            assert response.status_code == status, (path, response.text)
            assert "zz" not in response.text, (path, response.text)
        assert not (settings.home / "uploads" / "local" / "zzline\n").exists()
        listed = client.get("/api/collections").json()["collections"]
        assert sorted(c["name"] for c in listed) == ["zznotes", "zzserver"]
        run = client.post("/api/runs", json={"question": QUESTION, "options": {"corpus": "zznotes\n"}})
        assert run.status_code == 422 and run.json()["errors"][0]["loc"] == ["body", "options", "corpus"]
    with pytest.raises(TokenError):
        check_name("alice\n")
    with pytest.raises(ValidationError, match="corpus_roots"):
        Settings(corpus_roots={"notes\n": str(server_docs)})
