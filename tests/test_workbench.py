"""The research workbench (research-ui/) in a real browser against the real runner: the shell, the form and
what the server configures, and the browser tests' shared fixtures.

Debian's Chromium driven by Playwright's Python package talks to ``create_app(settings)`` served exactly as in
test_runner_api.py, with the scripted LLM, search server and static site behind it (all on 127.0.0.1).
Covered here: the shell served under a strict CSP (no inline script or style), the form's defaults and bounds
and the stages' names taken from config.json (nothing starts without it), document collections (offered,
searched documents-only, none configured, a CLI run's server folder shown as unavailable and never sent;
uploads are in test_workbench_documents.py); never a console error or CSP violation. A run from start to
report, reloads, failures and budgets are in test_workbench_runs.py; signing in in test_workbench_signin.py.
The other test_workbench_*.py files share this module's `browser` fixture, `workbench()` and helpers.

Needs Debian's chromium-headless-shell or chromium (.ci/install-browser.sh) and the ``playwright`` package;
skipped without them.
Screenshots of the main states go to test-artifacts/ (git-ignored).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from config import Settings
from deepresearch.options import option_limits
from deepresearch.service.auth import Tokens
from deepresearch.store import open_persistence
from peers import launch, serve_app
from runner import create_app
from stages import GRAPH_NODES
from tests.conftest import Servers
from tests.live import ROOT, server_env

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the browser tests skip; the HTTP-level test below still runs
    expect = sync_playwright = None

T = TypeVar("T")
# Debian's headless shell (what Playwright itself runs for headless Chromium) where it is installed: the
# browser tests cost ~16 % less CPU than under the full browser's headless mode (docs/profile.md); else the
# full browser
BROWSERS = (Path("/usr/bin/chromium-headless-shell"), Path("/usr/bin/chromium"))
CHROMIUM = next((path for path in BROWSERS if path.exists()), BROWSERS[0])
if not CHROMIUM.exists():
    BROWSER_MISSING: str | None = (
        "neither /usr/bin/chromium-headless-shell nor /usr/bin/chromium is installed"
        " (run .ci/install-browser.sh)"
    )
elif sync_playwright is None:
    BROWSER_MISSING = "the playwright package is not installed (pip install playwright)"
else:
    BROWSER_MISSING = None

UI_DIR = Path(__file__).resolve().parent.parent / "research-ui"
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
WAIT_MS = 20_000  # the longest any single expectation may wait
# Reports every CSP violation as a console error (Chromium logs most of them anyway).
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
"""
# The browser last started a run without plan review (form-memory.js), unless it chose otherwise since.
NO_PLAN_REVIEW = """
if (!localStorage.getItem("deepresearch.last-form"))
  localStorage.setItem("deepresearch.last-form", JSON.stringify({ shape: { review_plan: false } }));
"""
# Stage blocks of the timeline: stage, status and the status of each sub-tool row.
TIMELINE = """
() => [...document.querySelectorAll("#timeline .tl-stage")].map((el) => ({
  stage: el.dataset.stage,
  status: el.dataset.status,
  calls: [...el.querySelectorAll(".call")].map((c) => `${c.dataset.kind}:${c.dataset.status}`),
}))
"""
# What the graph and the timeline call each stage.
STAGE_NAMES = """
() => ({
  graph: [...document.querySelectorAll("#graph .g-node")].map((g) => ({
    key: g.dataset.node,
    short: g.querySelector(".g-label").textContent,
    title: g.querySelector("title").textContent,
  })),
  timeline: [...document.querySelectorAll("#timeline .tl-stage")].map((el) => ({
    key: el.dataset.stage,
    title: el.querySelector(".tl-title").textContent,
  })),
})
"""
# A user's notes: a Markdown document the tests upload into a collection (test_workbench_daily*.py).
NOTES = (
    "# Durable checkpoints\n\nA durable workflow checkpoint records the state of a research run after every "
    "stage, and SQLite write-ahead logging keeps each write safe, so a resumed run continues from the latest "
    "checkpoint instead of starting over.\n\n## Write-ahead logging\n\n- SQLite's **write-ahead log** "
    "appends changes to a separate file\n- checkpoints copy them into the database later, which keeps "
    "long workflow runs safe when a process stops mid-write.\n"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if BROWSER_MISSING:
        if os.environ.get("DEEPRESEARCH_REQUIRE_BROWSER") == "1":  # CI installed it: missing is a failure
            pytest.fail(BROWSER_MISSING)
        pytest.skip(BROWSER_MISSING)
    assert sync_playwright is not None and expect is not None
    # expect()'s own default is 5 s, whatever the context's: WAIT_MS bounds every expectation (a run's first
    # stages take longer than 5 s while parallel test workers share the cores)
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def run_aside(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end in a thread of its own (Playwright's sync API owns this thread's loop)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=30)


async def _create_tokens(
    settings: Settings, names: tuple[str, ...], admins: tuple[str, ...]
) -> dict[str, str]:
    """Tokens on the test's database, as `deepresearch token create NAME [--admin]` makes them."""
    async with open_persistence(settings.resolved_database_url) as persistence:
        tokens = Tokens(persistence.store)
        return {name: (await tokens.create(name, admin=name in admins))[1] for name in names + admins}


@dataclass
class Workbench:
    base_url: str
    page: Any
    api: httpx.Client
    settings: Settings
    tokens: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    tolerated: list[str] = field(default_factory=list)
    """Console messages expected right now (e.g. the aborted requests of a simulated network loss)."""

    def goto(self, fragment: str = "") -> None:
        self.page.goto(f"{self.base_url}/research/{fragment}")

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.evaluate("window.scrollTo(0, 0)")  # sticky bars stay on top of a full-page shot
        self.page.screenshot(path=str(ARTIFACTS / f"workbench-{name}.png"), full_page=True)

    def stage(self, key: str, status: str | None = None) -> Any:
        selector = f'#timeline .tl-stage[data-stage="{key}"]'
        if status:
            selector += f'[data-status="{status}"]'
        return self.page.locator(selector)

    def run_id(self) -> str:
        match = re.search(r"#run=(\w+)", self.page.url)
        assert match, self.page.url
        return match.group(1)

    def assert_clean(self) -> None:
        assert self.problems == [], "\n".join(self.problems)


@contextmanager
def workbench(
    browser: Any,
    servers: Servers,
    tmp_path: Path,
    *,
    dark: bool = False,
    users: tuple[str, ...] = (),
    admins: tuple[str, ...] = (),
    plan_review: bool = False,
    **overrides: Any,
) -> Iterator[Workbench]:
    """The runner and a fresh browser context; `users` and `admins` get API tokens (the test's client uses
    the first user's). The form's "Review the plan first" is on by default in the workbench; without
    `plan_review` this browser starts as if it had last turned it off, so a started run does not wait."""
    settings = servers.settings(tmp_path, llm=True, **{"stage_delay_seconds": 0.4, **overrides})
    tokens = run_aside(_create_tokens(settings, users, admins)) if users or admins else {}
    headers = {"Authorization": f"Bearer {tokens[users[0]]}"} if users else {}
    with (
        serve_app(create_app(settings), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30, headers=headers) as api,
    ):
        context = browser.new_context(
            viewport={"width": 1400, "height": 960}, color_scheme="dark" if dark else "light"
        )
        context.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)  # an assertion's own default is 5 s: too short on a busy machine
        page = context.new_page()
        bench = Workbench(base_url, page, api, settings, tokens)

        def on_console(message: Any) -> None:
            text = message.text
            serious = message.type == "error" or "Content Security Policy" in text
            if serious and not any(expected in text for expected in bench.tolerated):
                bench.problems.append(f"console.{message.type}: {text}")

        page.add_init_script(CSP_LISTENER)
        if not plan_review:
            page.add_init_script(NO_PLAN_REVIEW)
        page.on("console", on_console)
        page.on("pageerror", lambda error: bench.problems.append(f"page error: {error}"))
        try:
            yield bench
        finally:
            context.close()


def test_workbench_is_served_under_a_strict_csp(servers: Servers, tmp_path: Path) -> None:
    """No browser needed: the shell, its modules and its config, and no inline script or style anywhere."""
    with (
        serve_app(create_app(servers.settings(tmp_path, llm=True)), lifespan="on") as base_url,
        httpx.Client(base_url=base_url, timeout=30) as client,
    ):
        assert client.get("/").headers["location"] == "/research/"
        shell = client.get("/research/")
        assert shell.status_code == 200
        csp = shell.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp and "unsafe-inline" not in csp
        assert shell.headers["x-content-type-options"] == "nosniff"
        config = client.get("/research/config.json").json()
        assert config["engine"] == "llm" and config["model"] == "scripted-model"
        assert config["defaults"]["queries_per_round"] == 3 and config["max_question_chars"] > 0
        stages = {stage["key"]: stage["artifacts"] for stage in config["stages"]}
        assert stages["search_web"] == ["search-results.json"] and stages["reflection"] == []
        assert "sources.json" in stages["write_report"]
        modules = sorted(p.relative_to(UI_DIR).as_posix() for p in (UI_DIR / "js").rglob("*.js"))
        assert "js/app.js" in modules and "js/run/run-page.js" in modules
        for name in modules:
            module = client.get(f"/research/{name}")
            assert module.status_code == 200 and "javascript" in module.headers["content-type"], name
        sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', shell.text)
        assert "css/base.css" in sheets, sheets
        for name in sheets:
            sheet = client.get(f"/research/{name}")
            assert sheet.status_code == 200 and "text/css" in sheet.headers["content-type"], name
    for path in UI_DIR.rglob("*"):
        if path.suffix in {".html", ".js"}:
            text = path.read_text("utf-8")
            assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), f"inline script in {path.name}"
            assert not re.search(r"\sstyle\s*=", text), f"inline style attribute in {path.name}"
            assert not re.search(r"\son[a-z]+\s*=\s*[\"']", text), f"inline event handler in {path.name}"
            assert "<style" not in text or path.name == "report.js", f"<style> element in {path.name}"


def test_the_workbench_copies_no_stage_text_and_no_option_bounds() -> None:
    """Stage names, descriptions and headlines and the options' bounds are the server's (config.json)."""
    texts = {text for node in GRAPH_NODES for text in (node.title, node.description, node.headline)}
    for path in UI_DIR.rglob("*"):
        if path.is_file():
            content = path.read_text("utf-8")
            copied = sorted(text for text in texts if text in content)
            assert not copied, f"{path.relative_to(UI_DIR)} copies stage text from stages.py: {copied}"
    bounded = set(option_limits())
    inputs = {}
    for tag in re.findall(r"<input\b[^>]*>", (UI_DIR / "index.html").read_text("utf-8")):
        name = re.search(r'\sname="([^"]+)"', tag)
        if name and name.group(1) in bounded:
            inputs[name.group(1)] = tag
    assert {"max_research_loops", "sources_to_fetch", "max_llm_tokens", "deadline_seconds"} <= set(inputs)
    for name, tag in inputs.items():
        assert not re.search(r'\s(min|max)="[\d.]+"', tag), f"index.html hard-codes the bounds of {name}"


def test_the_form_and_the_graph_show_what_the_server_says(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        config = bench.api.get("/research/config.json").json()
        limits, defaults = config["limits"], config["defaults"]
        bench.goto("#new")
        loops = page.get_by_label("Depth")
        expect(loops).to_have_attribute("max", str(limits["max_research_loops"]["maximum"]))
        expect(loops).to_have_value(str(defaults["max_research_loops"]))
        integers = [name for name, limit in limits.items() if "minimum" in limit]
        assert len(integers) == 7, integers  # the four shape options and three budget counts
        for name in integers:
            field = page.locator(f'input[name="{name}"]')
            expect(field).to_have_attribute("min", str(limits[name]["minimum"]))
            if "maximum" in limits[name]:
                expect(field).to_have_attribute("max", str(limits[name]["maximum"]))
            else:  # a budget has no upper bound
                assert field.get_attribute("max") is None, name
        deadline = page.locator('input[name="deadline_seconds"]')
        expect(deadline).to_have_attribute("min", "1")  # exclusiveMinimum 0, in whole seconds
        titles = {stage["key"]: stage["title"] for stage in config["stages"]}
        expect(page.locator('label[for="opt-critic"]')).to_contain_text(titles["critic_review"])
        expect(page.get_by_role("button", name="Start research")).to_be_enabled()

        run_id = bench.api.post("/api/runs", json={"question": QUESTION}).json()["run_id"]
        bench.goto(f"#run={run_id}")
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        shown = page.evaluate(STAGE_NAMES)
        assert shown["graph"] == [{k: s[k] for k in ("key", "short", "title")} for s in config["stages"]]
        assert shown["timeline"] == [{"key": s["key"], "title": s["title"]} for s in config["stages"]]
        # the reflection has no stage-level tool_result: its graph_checkpoint is what ends it
        assert {s["stage"]: s["status"] for s in page.evaluate(TIMELINE)}["reflection"] == "done"
        bench.assert_clean()


def test_without_the_servers_configuration_nothing_starts(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    with workbench(browser, servers, tmp_path) as bench:
        page = bench.page
        bench.tolerated.append("503")  # the browser logs the failed request itself
        page.route(
            "**/research/config.json",
            lambda route: route.fulfill(status=503, json={"detail": "The runner is starting up."}),
        )
        bench.goto()
        error = page.locator("#form-error")
        expect(error).to_be_visible()
        expect(error).to_have_text(
            "Could not load the server's configuration: The runner is starting up. Reload to try again."
        )
        expect(page.get_by_role("button", name="Start research")).to_be_disabled()
        bench.shot("12-no-config")
        page.get_by_label("Research question").fill(QUESTION)
        page.get_by_label("Research question").press("Control+Enter")
        expect(page.locator("#new-view")).to_be_visible()
        assert bench.api.get("/api/runs").json()["runs"] == []
        bench.assert_clean()


def sign_in(bench: Workbench, token: str) -> None:
    page = bench.page
    page.get_by_label("API token").fill(token)
    page.locator("#signin").get_by_role("button", name="Sign in").click()


def test_a_document_collection_is_offered_and_searched(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "checkpoints.md").write_text(
        "# Durable checkpoints\n\nA durable workflow checkpoint records the state of a research run after "
        "every stage, and SQLite write-ahead logging keeps each write safe, so a resumed run continues "
        "from the latest checkpoint instead of starting over.\n",
        encoding="utf-8",
    )
    searches_before = len(servers.search.calls)
    with workbench(
        browser, servers, tmp_path, stage_delay_seconds=0.0, corpus_roots={"manual": manual}
    ) as bench:
        page = bench.page
        bench.goto("#new")
        expect(page.locator("#account")).to_be_hidden()  # no token needed on loopback: nothing extra
        expect(page.locator("#corpus-none")).to_be_hidden()
        documents = page.get_by_label("Search documents")
        expect(documents).to_be_enabled()
        documents.check()
        expect(page.get_by_label("Collection", exact=True)).to_have_value("manual")
        page.get_by_label("Only my documents").check()
        expect(page.locator("#estimate")).to_contain_text("in your documents")
        page.get_by_label("Research question").fill(QUESTION)
        bench.shot("17-collection")
        page.get_by_role("button", name="Start research").click()

        expect(page).to_have_url(re.compile(r"#run=\w+"))
        run_id = bench.run_id()
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        document = page.locator("#sources .source")
        expect(document).to_have_count(1)
        expect(document).to_contain_text("Durable checkpoints")  # the title of checkpoints.md
        expect(document).to_contain_text("local document")
        expect(document.locator(".tag.is-ok")).to_have_text("read")  # read from the collection
        run = bench.api.get(f"/api/runs/{run_id}").json()
        assert run["options"]["corpus"] == "manual" and run["options"]["corpus_only"] is True
        sources = bench.api.get(f"/api/runs/{run_id}/artifacts/sources.json").json()["sources"]
        urls = [s["url"] for s in sources]
        assert urls and all(u.startswith("corpus://") for u in urls), urls
        assert len(servers.search.calls) == searches_before  # documents only: no web search

        # a new research like this one chooses the same collection again
        page.get_by_role("button", name="New research like this").click()
        expect(page.locator("#new-view")).to_be_visible()
        expect(page.get_by_label("Research question")).to_have_value(QUESTION)
        expect(documents).to_be_checked()
        expect(page.get_by_label("Collection", exact=True)).to_have_value("manual")
        expect(page.get_by_label("Only my documents")).to_be_checked()
        expect(page.locator("#corpus-unavailable")).to_be_hidden()
        bench.assert_clean()


def test_without_collections_the_form_says_so_and_never_sends_a_folder(
    browser: Any, servers: Servers, tmp_path: Path
) -> None:
    """No DEEPRESEARCH_CORPUS_ROOTS: documents cannot be chosen. A run the CLI made with a server folder
    (corpus_dir) shows that folder as unavailable when loaded into the form, and nothing starts with it."""
    folder = tmp_path / "cli-docs"
    folder.mkdir()
    (folder / "wal.md").write_text(
        "# Write-ahead logging\n\nSQLite's write-ahead log keeps durable workflow checkpoints safe.\n",
        encoding="utf-8",
    )
    cli = launch.run(
        [sys.executable, "-m", "agent", "run", "--plain", "--corpus", str(folder), "--corpus-only", QUESTION],
        cwd=ROOT,
        env=server_env(servers, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    with workbench(browser, servers, tmp_path, stage_delay_seconds=0.0) as bench:
        page = bench.page
        (cli_run,) = bench.api.get("/api/runs").json()["runs"]
        assert bench.api.get(f"/api/runs/{cli_run['run_id']}").json()["options"]["corpus"] is None
        bench.goto("#new")
        none = page.locator("#corpus-none")
        expect(none).to_have_text("You have no document collections yet: upload documents to search them.")
        expect(none.get_by_role("link", name="upload documents")).to_have_attribute("href", "#documents")
        expect(page.get_by_label("Search documents")).to_be_disabled()
        expect(page.get_by_label("Only my documents")).to_be_disabled()
        bench.shot("18-no-collections")

        bench.goto(f"#run={cli_run['run_id']}")
        expect(page.locator("#run-status")).to_have_text("Completed")
        page.get_by_role("button", name="New research like this").click()
        unavailable = page.locator("#corpus-unavailable")
        expect(unavailable).to_contain_text(f"a folder on the server ({folder.resolve()})")
        expect(unavailable).to_contain_text("Untick “Search documents”")
        expect(page.get_by_label("Search documents")).to_be_checked()
        bench.shot("19-folder-unavailable")
        page.get_by_role("button", name="Start research").click()
        expect(page.locator("#form-error")).to_have_text(
            "You have no document collections: untick “Search documents”, or upload documents first."
        )
        assert len(bench.api.get("/api/runs").json()["runs"]) == 1  # nothing was sent

        page.get_by_label("Search documents").uncheck()
        expect(unavailable).to_be_hidden()
        expect(page.get_by_label("Search documents")).to_be_disabled()
        page.get_by_role("button", name="Start research").click()
        expect(page).to_have_url(re.compile(r"#run=\w+"))
        expect(page.locator("#run-status")).to_have_text("Completed", timeout=30_000)
        started = bench.api.get(f"/api/runs/{bench.run_id()}").json()["options"]
        assert started["corpus"] is None and started["corpus_dir"] is None and not started["corpus_only"]
        bench.assert_clean()
