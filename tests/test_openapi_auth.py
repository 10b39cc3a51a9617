"""What the OpenAPI document says about authentication and errors is what the server does (issue 22, item
13: schemathesis `--checks all` on a default loopback server and on a token-only one; the full fuzzing run is
bench/api_fuzz.sh, docs/security.md "Fuzzing the API")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from tests._security_helpers import _create_tokens, bearer, served
from tests.conftest import Servers
from tests.sse import iter_sse

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"
NOT_BEARER = ["Basic Zm9vOmJhcg==", "Token abc", "Bearer", "drt_0000_x"]


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def test_a_loopback_server_documents_the_token_as_optional_and_a_token_server_as_required(
    servers: Servers, tmp_path: Path
) -> None:
    for require_token in (False, True):
        settings = servers.settings(tmp_path / str(require_token), require_token=require_token)
        (token,) = asyncio.run(_create_tokens(settings, ("alice", False)))
        with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
            spec = client.get("/openapi.json").json()
            secured = [(m, p, op) for m, p, op in _operations(spec) if op.get("security")]
            assert len(secured) > 20
            for method, path, op in secured:
                # `{}`: no credentials is one of the ways in (OpenAPI's optional security)
                assert ({} in op["security"]) is not require_token, (method, path)
                assert {"HTTPBearer": []} in op["security"], (method, path)
            # and the server behaves as documented, on a route of each kind
            anonymous = client.get("/api/runs")
            assert anonymous.status_code == (401 if require_token else 200)
            assert client.get("/api/runs", headers=bearer(token)).status_code == 200
            assert client.get("/api/runs", headers=bearer("drt_00000000_" + "A" * 43)).status_code == 401
            # signing out needs no credentials (nothing to end without a session): not declared secured
            assert "security" not in spec["paths"]["/api/session"]["delete"]
            assert client.delete("/api/session").status_code == 204


def test_an_authorization_header_that_is_not_a_bearer_token_is_refused(
    servers: Servers, tmp_path: Path
) -> None:
    """Never ignored, also where no token is required: a client that sends credentials the server cannot
    read must learn that, not act as somebody else (here: the local owner)."""
    with served(servers.settings(tmp_path)) as base, httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/api/runs").status_code == 200
        for value in NOT_BEARER:
            refused = client.get("/api/runs", headers={"Authorization": value})
            assert refused.status_code == 401, value
            assert refused.headers["www-authenticate"] == "Bearer"
            assert (
                client.post(
                    "/api/runs", json={"question": QUESTION}, headers={"Authorization": value}
                ).status_code
                == 401
            )
        mcp = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Authorization": "Basic Zm9vOmJhcg==", "Accept": "application/json, text/event-stream"},
        )
        assert mcp.status_code == 401


def test_every_body_documents_that_it_may_not_parse(servers: Servers, tmp_path: Path) -> None:
    with served(servers.settings(tmp_path)) as base, httpx.Client(base_url=base, timeout=30) as client:
        spec = client.get("/openapi.json").json()
        with_body = [(m, p, op) for m, p, op in _operations(spec) if "requestBody" in op]
        assert len(with_body) >= 8
        for method, path, op in with_body:
            assert {"400", "413", "422"} <= set(op["responses"]), (method, path)
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        for path in (f"/api/runs/{run_id}/fork", f"/api/runs/{run_id}/fork/preview", "/api/runs"):
            broken = client.post(path, content=b"}Q\xff9", headers={"Content-Type": "application/json"})
            assert broken.status_code in (400, 422), (path, broken.text)
            documented = spec["paths"][path.replace(run_id, "{run_id}")]["post"]["responses"]
            assert str(broken.status_code) in documented


def test_a_file_the_run_has_not_written_yet_is_409_and_a_missing_one_404(
    servers: Servers, tmp_path: Path
) -> None:
    """ "Created resource not found" (schemathesis ST302) was a report asked for right after POST /api/runs:
    the run has not got that far, which is a state of the run (409, saying what to do), not a missing
    address (404, which stays for the files a completed run never wrote)."""
    settings = servers.settings(tmp_path, stage_delay_seconds=0.5)
    with served(settings) as base, httpx.Client(base_url=base, timeout=30) as client:
        spec = client.get("/openapi.json").json()
        run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        for path in ("/report", "/report?format=html", "/report.docx", "/artifacts/deepresearch-report.md"):
            early = client.get(f"/api/runs/{run_id}{path}")
            assert early.status_code == 409, (path, early.text)
            assert (
                "has not written" in early.json()["detail"] and "wait for its end" in early.json()["detail"]
            )
            route = "/api/runs/{run_id}" + path.split("?")[0].replace("deepresearch-report.md", "{path}")
            assert "409" in spec["paths"][route]["get"]["responses"], route
        assert client.get(f"/api/runs/{run_id}/artifacts/../../etc/passwd").status_code == 404
        assert [e.type for e in iter_sse(client, f"/api/runs/{run_id}/events")][-1] == "end"
        assert client.get(f"/api/runs/{run_id}/report").status_code == 200
        assert client.get(f"/api/runs/{run_id}/artifacts/nope.json").status_code == 404
