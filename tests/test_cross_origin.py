"""A real browser against a loopback server that requires no token: a page of another origin cannot drive it
(docs/security.md, "Cross-site writes"), while the server's own page and a plain HTTP client can.

Needs Debian's Chromium (as tests/test_workbench.py) and the ``playwright`` package; skipped without them
(failed in CI, like tests/test_workbench.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from peers import serve_app
from runner import create_app
from tests.conftest import POLL_SECONDS, Servers
from tests.test_workbench import CHROMIUM, CHROMIUM_ARGS, browser  # noqa: F401 (the fixture)

QUESTION = "How do durable workflow checkpoints keep long research runs safe?"
# What a hostile page can send without a CORS preflight: a form POST and a no-cors fetch.
ATTACK = """
async ([url]) => {
  await fetch(url, { method: "POST", mode: "no-cors" }).catch(() => null);
  await fetch(url, { method: "POST", mode: "no-cors", body: "{}",
                     headers: { "Content-Type": "text/plain" } }).catch(() => null);
  const form = document.createElement("form");
  form.method = "POST";
  form.action = url;
  document.body.append(form);
  form.submit();
}
"""


def _evil_site() -> Starlette:
    async def page(request: Request) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>elsewhere</title><body></body>")

    return Starlette(routes=[Route("/", page)])


@pytest.fixture()
def target(servers: Servers, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A token-less loopback server with one finished run: (base URL, the run's cancel URL)."""
    settings = servers.settings(tmp_path)
    with serve_app(create_app(settings, bind_host="127.0.0.1"), lifespan="on") as base:
        with httpx.Client(base_url=base, timeout=30) as client:
            run_id = client.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
            deadline = time.monotonic() + 60
            while client.get(f"/api/runs/{run_id}").json()["status"] in ("queued", "running"):
                assert time.monotonic() < deadline, "the run did not finish"
                time.sleep(POLL_SECONDS)
        yield base, f"{base}/api/runs/{run_id}/cancel"


def _cancel_statuses(page: Any, url: str, run: str) -> list[int]:
    """The statuses the server answered to the page's three attempts (Playwright sees opaque responses)."""
    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if r.url == url else None)
    page.evaluate(run, [url])
    deadline = time.monotonic() + 15
    while len(statuses) < 3 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    return statuses


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])  # cross-site; same-site (another port)
def test_a_page_of_another_origin_cannot_write_to_a_tokenless_loopback_server(
    browser: Any,  # noqa: F811
    target: tuple[str, str],
    host: str,
) -> None:
    base, cancel = target
    with serve_app(_evil_site(), host="127.0.0.1") as evil:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(evil.replace("127.0.0.1", host) + "/")
            statuses = _cancel_statuses(page, cancel, ATTACK)
        finally:
            context.close()
    assert statuses == [403, 403, 403], statuses
    # the server's own page (the workbench's origin) may, and so may a plain client without any header
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{base}/healthz")
        own = page.evaluate("async ([u]) => (await fetch(u, { method: 'POST' })).status", [cancel])
    finally:
        context.close()
    assert own == 202
    answer = httpx.post(cancel, timeout=30)
    assert answer.status_code == 202, answer.text
    assert json.loads(answer.text)["status"] == "completed"
