"""Which synchronous (blocking) calls our code makes on the event loop during one research run, as
`langgraph dev`'s blockbuster check sees them. Run it with the interpreter of the LangGraph peer venv
(blockbuster comes with langgraph-cli[inmem]; it is never a product dependency):

    /work/.cache/langgraph-peer-venv/bin/python bench/blocking_calls.py

Every blocking call is allowed (the run goes on) and recorded with the first frame of our code that made
it; the scripted peers (bench/peers.py) run on 127.0.0.1 in a process of their own.
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


def _our_frame(allowed: list[tuple[str, Any]]) -> str | None:
    """file:line (function) of the innermost frame of our code on a stack that blockbuster would refuse,
    or None: no frame is ours, or a frame is one blockbuster lets block (e.g. asyncio's own socket I/O)."""
    frame = inspect.currentframe()
    ours = None
    while frame is not None:
        name = frame.f_code.co_filename
        if any(name.replace("\\", "/").endswith(f) and frame.f_code.co_name in fns for f, fns in allowed):
            return None
        tooling = any(f"/{folder}/" in name for folder in ("tests", "bench", "peers"))
        if ours is None and name.startswith(str(ROOT)) and not tooling:
            ours = f"{Path(name).relative_to(ROOT)}:{frame.f_lineno} ({frame.f_code.co_name})"
        frame = frame.f_back
    return ours


async def research(found: Counter[str]) -> str:
    from blockbuster import BlockBuster
    from langgraph.checkpoint.memory import InMemorySaver

    from deepresearch.platform_graph import aclose_stores, make_graph

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
            where = _our_frame(list(_fn.can_block_functions))
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
