"""Shared fixtures: real scripted servers on 127.0.0.1 and settings that point the engine at them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from config import Settings
from deepresearch.engine.core import ResearchEngine
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import EventRecord, RunRecord
from tests.scripted import serve_app
from tests.scripted.openai_server import ScriptedOpenAI, make_openai_server
from tests.scripted.research_llm import ResearchResponder
from tests.scripted.search_server import ScriptedSearch, make_search_server
from tests.scripted.static_site import StaticSite, make_static_site

pytest_plugins = ["tests.pg", "tests.api"]


@dataclass
class Servers:
    site: StaticSite
    site_url: str
    search: ScriptedSearch
    search_url: str
    llm: ScriptedOpenAI
    llm_url: str
    responder: ResearchResponder

    def settings(self, tmp_path: Path, *, llm: bool = False, **overrides: Any) -> Settings:
        return Settings(**self._values(tmp_path, llm=llm) | overrides)

    def env(self, tmp_path: Path, *, llm: bool = False) -> dict[str, str]:
        """The same configuration as environment variables, for CLI and server processes."""
        env = {}
        for name, value in self._values(tmp_path, llm=llm).items():
            key = name.upper() if name.startswith("openai_") else f"DEEPRESEARCH_{name.upper()}"
            if isinstance(value, list):
                env[key] = ",".join(value)
            elif isinstance(value, bool):
                env[key] = str(value).lower()
            else:
                env[key] = str(value)
        return env

    def _values(self, tmp_path: Path, *, llm: bool) -> dict[str, Any]:
        site = urlsplit(self.site_url)
        values: dict[str, Any] = {
            "home": tmp_path / "home",
            "workspace_dir": tmp_path / "workspace",
            "engine": "llm" if llm else "extractive",
            "search_providers": ["generic"],
            "web_search_url": f"{self.search_url}/search",
            "duckduckgo_enabled": False,
            "fetch_allow_hosts": [f"{site.hostname}:{site.port}"],
            "max_research_loops": 1,
            "queries_per_round": 3,
            "results_per_query": 3,
            "sources_to_fetch": 3,
            "llm_retry_max_wait_seconds": 0.5,
        }
        if llm:
            values |= {
                "openai_base_url": f"{self.llm_url}/v1",
                "openai_model_name": "scripted-model",
                "openai_api_key": "test-key",
            }
        return values


@contextmanager
def scripted_servers() -> Iterator[Servers]:
    """The scripted web site, search server and model server on 127.0.0.1 (tests, scripts, benchmarks)."""
    site = make_static_site(slow_delay=0.5)
    llm = make_openai_server()
    responder = ResearchResponder()
    llm.responder = responder
    with serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            yield Servers(site, site_url, search, search_url, llm, llm_url, responder)


@pytest.fixture
def servers() -> Iterator[Servers]:
    with scripted_servers() as running:
        yield running


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The API and live-server suites run once on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return str(request.getfixturevalue("fresh_postgres_dsn"))


async def execute_and_pause_after(
    engine: ResearchEngine, run_id: str, stage: str, seen: list[EventRecord] | None = None
) -> RunRecord:
    """Execute the run and pause it (a cancel, as Ctrl-C does) once `stage`'s checkpoint is out; `seen`
    collects the execution's events."""
    cancel = CancelSignal(run_id, engine.store)

    def pause(event: EventRecord) -> None:
        if seen is not None:
            seen.append(event)
        if event.type == "checkpoint" and event.stage == stage:
            cancel.request("test pause")

    return await engine.execute(run_id, cancel=cancel, on_event=pause)
