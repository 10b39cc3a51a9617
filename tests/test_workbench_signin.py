"""Signing in to the workbench on a server that requires a token, in a real browser against the real runner
(fixtures: test_workbench.py): the sign-in dialog (wrong token, revocation keeping the draft, sign out), the
token never in a URL or the page's storage; never a console error or CSP violation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from config import Settings
from deepresearch.service.auth import Tokens
from deepresearch.store import open_persistence
from tests.conftest import Servers
from tests.test_workbench import QUESTION, Workbench, browser, expect, run_aside, sign_in, workbench

__all__ = ["browser"]  # the shared module-scoped browser fixture

WRONG_TOKEN = "drt_00000000_" + "x" * 43
STORED = "() => JSON.stringify([{...localStorage}, {...sessionStorage}])"
REFUSED = "status of 401"  # the browser logs every refused request itself


async def _revoke_token(settings: Settings, name: str) -> None:
    async with open_persistence(settings.resolved_database_url) as persistence:
        await Tokens(persistence.store).revoke(name)


def assert_token_kept_out(bench: Workbench, *tokens: str) -> None:
    """Never in the address bar, the page's storage or any cookie, HttpOnly ones included (the session cookie
    holds a session id)."""
    page = bench.page
    stored = page.evaluate(STORED)
    cookies = page.evaluate("document.cookie")
    jar = " ".join(c["value"] for c in page.context.cookies())
    for token in tokens:
        assert token not in page.url and token not in stored and token not in cookies and token not in jar


def test_a_server_that_requires_a_token_signs_in_streams_and_signs_out(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(
        browser, servers, tmp_path, users=("alice", "bob"), require_token=True, stage_delay_seconds=0.1
    ) as bench:
        page = bench.page
        alice, bob = bench.tokens["alice"], bench.tokens["bob"]
        dialog = page.get_by_role("dialog", name="Sign in to this research server")
        error = page.locator("#signin-error")
        bench.tolerated.append(REFUSED)
        bench.goto("#new")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("deepresearch token create NAME")
        expect(page.get_by_label("API token")).to_be_focused()
        expect(page.locator("#account")).to_be_hidden()
        page.keyboard.press("Escape")  # the workbench is of no use without a session
        expect(dialog).to_be_visible()
        bench.shot("13-sign-in")

        page.locator("#signin").get_by_role("button", name="Sign in").click()
        expect(error).to_have_text("Paste the token first.")
        sign_in(bench, WRONG_TOKEN)
        expect(error).to_have_text(
            "The server did not accept this token: the API token is unknown or revoked."
        )
        expect(dialog).to_be_visible()
        bench.shot("14-sign-in-refused")
        sign_in(bench, alice)
        expect(dialog).to_be_hidden()
        expect(page.locator("#account-user")).to_have_text("alice")
        expect(page.locator("#account-admin")).to_be_hidden()
        expect(page.get_by_role("button", name="Sign out")).to_be_visible()
        assert_token_kept_out(bench, alice)

        # signed in: a run starts and streams to completion (EventSource carries the cookie)
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_role("button", name="Start research").click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        run_id = bench.run_id()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(bench.stage("write_report", "done")).to_have_count(1)
        expect(page.locator(f'#history-list a[data-run="{run_id}"]')).to_contain_text("Completed")
        assert bench.api.get(f"/api/runs/{run_id}").json()["owner"] == "alice"
        bench.shot("15-signed-in-run")

        # the token is revoked while the user types: the next call's 401 brings the dialog back, and
        # what was typed stays
        page.get_by_role("link", name="New research", exact=True).click()
        draft = "What changed in SQLite's write-ahead log between versions?"
        page.get_by_label("Research question").fill(draft)
        page.get_by_label("Depth").fill("2")
        run_aside(_revoke_token(bench.settings, "alice"))
        expect(dialog).to_be_visible()  # the history's next poll is refused
        expect(page.locator("#signin-reason")).to_contain_text("no longer accepts your token")
        sign_in(bench, bob)
        expect(dialog).to_be_hidden()
        expect(page.locator("#account-user")).to_have_text("bob")
        expect(page.get_by_label("Research question")).to_have_value(draft)
        expect(page.get_by_label("Depth")).to_have_value("2")
        expect(page.locator("#history-empty")).to_be_visible()  # alice's run is not bob's
        assert_token_kept_out(bench, alice, bob)
        page.set_viewport_size({"width": 390, "height": 860})  # a phone: the user still fits the top bar
        expect(page.locator("#account-user")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways at 390px ({width}px wide)"
        bench.shot("16-signed-in-phone")
        page.set_viewport_size({"width": 1400, "height": 960})

        # sign out: the dialog again, nothing of bob's left on the page
        page.get_by_role("button", name="Sign out").click()
        expect(dialog).to_be_visible()
        expect(page.locator("#account")).to_be_hidden()
        expect(page.get_by_label("Research question")).to_have_value("")
        expect(page.locator("#history-list li")).to_have_count(0)
        with httpx.Client(base_url=bench.base_url, timeout=30) as anonymous:
            assert anonymous.get("/api/session").status_code == 401
        page.reload()  # the cookie is gone: still signed out
        expect(dialog).to_be_visible()
        assert_token_kept_out(bench, alice, bob)
        bench.assert_clean()


def test_a_token_revoked_mid_run_asks_again_and_the_run_view_goes_on(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """The stream's and the polls' 401s bring the dialog back; signed in again (an admin may see the run),
    the run reopens and streams to its end; another user is told it does not exist."""
    with workbench(
        browser, servers, tmp_path, users=("alice", "bob"), admins=("ops",), require_token=True
    ) as bench:
        page = bench.page
        dialog = page.get_by_role("dialog", name="Sign in to this research server")
        bench.tolerated.append(REFUSED)
        bench.goto()
        sign_in(bench, bench.tokens["alice"])
        expect(page.locator("#account-user")).to_have_text("alice")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_role("button", name="Start research").click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        run_id = bench.run_id()
        expect(bench.stage("plan_research", "done")).to_have_count(1)
        run_aside(_revoke_token(bench.settings, "alice"))
        expect(dialog).to_be_visible()
        expect(page.locator("#conn-banner")).to_be_hidden()
        bench.shot("20-token-revoked")

        bench.tolerated.append("status of 404")  # bob asks for alice's run
        sign_in(bench, bench.tokens["bob"])
        expect(page.locator("#missing-view")).to_be_visible()  # alice's run is not bob's
        expect(page.locator("#missing-title")).to_have_text("This run does not exist (any more)")
        bench.tolerated.remove("status of 404")
        page.get_by_role("button", name="Sign out").click()
        expect(dialog).to_be_visible()
        page.goto(f"{bench.base_url}/research/#run={run_id}")
        expect(dialog).to_be_visible()
        sign_in(bench, bench.tokens["ops"])
        expect(page.locator("#account-admin")).to_be_visible()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        expect(bench.stage("write_report", "done")).to_have_count(1)
        expect(page.locator(f'#history-list a[data-run="{run_id}"]')).to_be_visible()
        bench.assert_clean()
