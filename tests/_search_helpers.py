"""The scripted search server (peers/search_server.py) on 127.0.0.1 for the search test modules
(test_search_*.py), and the settings that point every provider at it.

A pytest plugin of tests/conftest.py, so its fixture `backend` (the server, its script reset, and its URL)
is found by name in every test module; the module-scoped server under it is `search_served`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from config import Settings
from peers import serve_app
from peers.search_server import ScriptedSearch, make_search_server

SITE = "http://site.test"
TIMEOUT = 5.0


# --- fixtures --------------------------------------------------------------------------------------
@dataclass
class Backend:
    server: ScriptedSearch
    base: str


@pytest.fixture(scope="module")
def search_served() -> Iterator[Backend]:
    server = make_search_server(SITE)
    with serve_app(server.app) as base:
        yield Backend(server, base)


@pytest.fixture
def backend(search_served: Backend) -> Backend:
    search_served.server.reset()
    return search_served


def web_settings(backend: Backend, **overrides: Any) -> Settings:
    """Settings with every provider explicitly set, so the environment cannot leak in."""
    values: dict[str, Any] = {
        "search_providers": ["searxng", "generic"],
        "searxng_url": f"{backend.base}/searxng",
        "tavily_api_key": "",
        "brave_api_key": "",
        "web_search_url": f"{backend.base}/search",
        "duckduckgo_enabled": False,
        "search_timeout_seconds": TIMEOUT,
    }
    values.update(overrides)
    return Settings(**values)


def corpus_settings(tmp_path: Path, corpus: Path, **extra: Any) -> Settings:
    """An extractive engine that searches only the corpus folder (no web, no model)."""
    return Settings(
        home=tmp_path / "home",
        workspace_dir=tmp_path / "workspace",
        corpus_dir=corpus,
        corpus_only=True,
        duckduckgo_enabled=False,
        search_providers=["generic"],
        engine="extractive",
        **extra,
    )
