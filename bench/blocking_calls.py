"""Which synchronous (blocking) calls our code makes on the event loop during one research run, as
`langgraph dev`'s blockbuster check sees them. Run it with the interpreter of the LangGraph peer venv
(blockbuster comes with langgraph-cli[inmem]; it is never a product dependency):

    /work/.cache/langgraph-peer-venv/bin/python bench/blocking_calls.py

Every blocking call is allowed (the run goes on) and recorded with the first frame of our code that made
it; the scripted servers run on 127.0.0.1 in this process and their own calls are not counted.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _our_frame() -> str | None:
    """file:line (function) of the innermost frame in our code, or None when none is ours."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(str(ROOT)) and "/tests/" not in name and "/bench/" not in name:
            return f"{Path(name).relative_to(ROOT)}:{frame.f_lineno} ({frame.f_code.co_name})"
        frame = frame.f_back
    return None


async def research(servers: Any, tmp: Path, found: Counter[str]) -> str:
    from blockbuster import BlockBuster
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.platform_graph import aclose_stores, make_graph

    blockbuster = BlockBuster()
    for name, function in blockbuster.functions.items():

        def allow(*_args: Any, _name: str = name, **_kwargs: Any) -> bool:
            where = _our_frame()
            if where is not None:
                found[f"{_name} ← {where}"] += 1
            return True

        function.can_block_predicate = allow
    config = {"configurable": {"thread_id": "blocking-calls"}}
    blockbuster.activate()
    try:
        async with make_graph(config) as graph:
            graph = graph.copy(update={"checkpointer": InMemorySaver()})
            question = {"question": "How do durable workflow checkpoints avoid repeating work?"}
            output = await graph.ainvoke(question, config)
    finally:
        blockbuster.deactivate()
        await aclose_stores()
    return str(output.get("status"))


def main() -> int:
    import os

    from tests.conftest import Servers
    from tests.scripted import serve_app
    from tests.scripted.openai_server import make_openai_server
    from tests.scripted.research_llm import ResearchResponder
    from tests.scripted.search_server import make_search_server
    from tests.scripted.static_site import make_static_site

    site, llm, responder = make_static_site(), make_openai_server(), ResearchResponder()
    llm.responder = responder
    found: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp, serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            servers = Servers(site, site_url, search, search_url, llm, llm_url, responder)
            os.environ.update(servers.env(Path(tmp), llm=True))
            os.environ["DEEPRESEARCH_DATABASE_URL"] = f"sqlite:///{tmp}/runs.db"
            status = asyncio.run(research(servers, Path(tmp), found))
    sys.stdout.write(f"run {status}; blocking calls made by our code on the event loop:\n")
    for where, count in found.most_common():
        sys.stdout.write(f"{count:5d}  {where}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
