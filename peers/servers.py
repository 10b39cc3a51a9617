"""The scripted peers together, as tests, scripts and benchmarks run them: `scripted_servers()` starts the
web site, search server and model server on 127.0.0.1; `Servers` points deepresearch's settings (or a
server process's environment, `server_env`) at them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from config import Settings
from peers import serve_app
from peers.openai_server import ScriptedOpenAI, make_openai_server
from peers.research_llm import ResearchResponder
from peers.search_server import ScriptedSearch, make_search_server
from peers.static_site import StaticSite, make_static_site


@dataclass
class Servers:
    site: StaticSite
    site_url: str
    search: ScriptedSearch
    search_url: str
    llm: ScriptedOpenAI
    llm_url: str
    responder: ResearchResponder
    cpu_workers: int | None = None
    """DEEPRESEARCH_CPU_WORKERS of the engines and processes these servers configure (None: the default)."""

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
        if self.cpu_workers is not None:
            values["cpu_workers"] = self.cpu_workers
        if llm:
            values |= {
                "openai_base_url": f"{self.llm_url}/v1",
                "openai_model_name": "scripted-model",
                "openai_api_key": "test-key",
            }
        return values


@contextmanager
def scripted_servers(cpu_workers: int | None = None) -> Iterator[Servers]:
    """The scripted web site, search server and model server on 127.0.0.1 (tests, scripts, benchmarks)."""
    site = make_static_site(slow_delay=0.5)
    llm = make_openai_server()
    responder = ResearchResponder()
    llm.responder = responder
    with serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            yield Servers(site, site_url, search, search_url, llm, llm_url, responder, cpu_workers)


def server_env(servers: Servers, tmp_path: Path, **extra: Any) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DEEPRESEARCH_", "OPENAI_", "LONG_TASK_", "PEERS_"))
    }
    env |= servers.env(tmp_path, llm=True) | {"DEEPRESEARCH_LOG_LEVEL": "WARNING"}
    env |= {key: str(value) for key, value in extra.items()}
    return env
