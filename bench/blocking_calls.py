"""Which synchronous (blocking) calls our code makes on the event loop during one research run, as
`langgraph dev`'s blockbuster check sees them, through LangGraph's server graph (platform_graph.py).
blockbuster is a dev dependency (never a product one; langgraph-cli[inmem] brings it too):

    .venv/bin/python bench/blocking_calls.py

Every blocking call is allowed (the run goes on) and recorded with the first frame of our code that made
it; the scripted peers (bench/peers.py) run on 127.0.0.1 in a process of their own.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# Blocking calls of libraries' own that pass through a frame of ours (an ASGI middleware): FastAPI looks
# up each endpoint's source file once (inspect.getsourcefile, for its error messages).
LIBRARY_CALLS = [("fastapi/routing.py", {"_extract_endpoint_context"})]


def _our_frame(allowed: list[tuple[str, Any]]) -> str | None:
    """Where a blocking call that blockbuster would refuse comes from: the innermost frame of our code
    (file:line (function)), after the library frame that made the call when that is not ours; or None: no
    frame is ours, or a frame is one blockbuster lets block (e.g. asyncio's own socket I/O)."""
    frame = inspect.currentframe()
    ours = caller = None
    while frame is not None:
        name = frame.f_code.co_filename.replace("\\", "/")
        if any(name.endswith(f) and frame.f_code.co_name in fns for f, fns in allowed):
            return None
        where = f"{name}:{frame.f_lineno} ({frame.f_code.co_name})"
        if caller is None and not name.endswith(("blockbuster.py", "bench/blocking_calls.py")):
            caller = where
        tooling = any(f"/{folder}/" in name for folder in ("tests", "bench", "peers"))
        if ours is None and name.startswith(str(ROOT)) and not tooling:
            ours = f"{Path(name).relative_to(ROOT)}:{frame.f_lineno} ({frame.f_code.co_name})"
            if caller != where and caller is not None:
                ours = f"{caller.split('site-packages/')[-1]} ← {ours}"
        frame = frame.f_back
    return ours


@contextmanager
def recording_blocking_calls() -> Iterator[Counter[str]]:
    """While inside, every blocking call blockbuster knows of (file system, sleep, sockets in blocking mode,
    ...) made on a thread running an event loop is let through and counted by the first frame of our code
    that made it ("os.mkdir ← deepresearch/store/sqlite.py:155 (connect_sqlite)"); calls with no frame of
    ours (libraries' own, the scripted peers', the tests') are not. tests/test_blocking_calls.py asserts it
    stays empty for whole research runs."""
    from blockbuster import BlockBuster

    found: Counter[str] = Counter()
    blockbuster = BlockBuster()
    for name, function in blockbuster.functions.items():

        def allow(
            *args: Any,
            _name: str = name,
            _fn: Any = function,
            _own: Any = function.can_block_predicate,
            **kw: Any,
        ) -> bool:
            if _own(*args, **kw):  # blockbuster's own exemption (e.g. a non-blocking socket)
                return True
            where = _our_frame([*_fn.can_block_functions, *LIBRARY_CALLS])
            if where is not None:
                found[f"{_name} ← {where}"] += 1
            return True

        function.can_block_predicate = allow
    blockbuster.activate()
    try:
        yield found
    finally:
        blockbuster.deactivate()


async def research(found: Counter[str]) -> str:
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.platform_graph import aclose_stores, make_graph

    config = {"configurable": {"thread_id": "blocking-calls"}}
    try:
        with recording_blocking_calls() as seen:
            async with make_graph(config) as graph:
                graph = graph.copy(update={"checkpointer": InMemorySaver()})
                question = {"question": "How do durable workflow checkpoints avoid repeating work?"}
                output = await graph.ainvoke(question, config)
    finally:
        found.update(seen)
        await aclose_stores()
    return str(output.get("status"))


def main() -> int:
    import os

    from bench.measure import server_env
    from bench.peers import peers_process

    found: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp, peers_process() as peers:
        os.environ.update(server_env(peers, Path(tmp), f"sqlite:///{tmp}/runs.db"))
        status = asyncio.run(research(found))
    sys.stdout.write(f"run {status}; blocking calls made by our code on the event loop:\n")
    for where, count in found.most_common():
        sys.stdout.write(f"{count:5d}  {where}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
