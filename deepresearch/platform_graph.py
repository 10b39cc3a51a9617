"""The research graph for LangGraph's own server: `langgraph.json` points here (`langgraph dev`, LangGraph
Platform, LangGraph Studio).

That server owns the checkpointer and the thread; our tools cannot travel in a run's JSON `context`, so the
graph factory builds them from settings (environment variables, as for `deepresearch serve`) for each run
and hands them to the same research graph (workflow.build_graph) as its runtime context. Receipts go to the
run store of ``DEEPRESEARCH_DATABASE_URL``, keyed by a run id derived from the server's thread id, so a
retried or resumed thread reuses every completed external call, as our own runner does.

Input: ``{"question": "...", "options": {...}}`` (options as in POST /api/runs, optional). Output: the
report (`report`) and what was fetched (`sources`). Nothing happens at import time.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RunnableConfig

from config import Settings, load_settings
from deepresearch.engine.workspace import run_artifact_dir
from deepresearch.errors import RunNotFound
from deepresearch.options import STORED, ResearchOptions
from deepresearch.receipts.runtime import CancelSignal, ToolRuntime
from deepresearch.store import Persistence, RunRecord, RunStore, open_persistence
from tools import ResearchContext, open_research_tools
from workflow import build_graph

GRAPH_ID = "deepresearch"
PLACEHOLDER_QUESTION = "LangGraph server run"


class PlatformInput(TypedDict, total=False):
    question: str
    options: dict[str, Any]


class PlatformState(TypedDict, total=False):
    question: str
    options: dict[str, Any]
    run_id: str
    status: str
    report: dict[str, Any]
    sources: list[dict[str, Any]]


class _Shared:
    """One run store per server process and event loop, opened by the first run (never at import)."""

    def __init__(self) -> None:
        self._stacks: dict[tuple[str, int], tuple[AsyncExitStack, Persistence]] = {}
        self._lock = asyncio.Lock()

    async def store(self, database_url: str) -> RunStore:
        key = (database_url, id(asyncio.get_running_loop()))
        async with self._lock:
            if key not in self._stacks:
                stack = AsyncExitStack()
                persistence = await stack.enter_async_context(open_persistence(database_url))
                self._stacks[key] = (stack, persistence)
            return self._stacks[key][1].store

    async def aclose(self) -> None:
        """Close the stores opened on the running loop (a server's shutdown, the end of a test)."""
        loop_id = id(asyncio.get_running_loop())
        async with self._lock:
            for key in [k for k in self._stacks if k[1] == loop_id]:
                stack, _ = self._stacks.pop(key)
                await stack.aclose()


_SHARED = _Shared()


async def aclose_stores() -> None:
    await _SHARED.aclose()


def run_id_for(thread_id: str) -> str:
    """Our run id for a thread of the LangGraph server: stable (a retry of the thread keeps its receipts) and
    shaped like ours, 32 hex digits whose first 8 name the artifact folder (thread ids are time-ordered
    UUIDs: their first digits are the same for threads made together)."""
    return hashlib.sha256(f"langgraph-thread:{thread_id}".encode()).hexdigest()[:32]


async def _run_record(store: RunStore, run_id: str, thread_id: str, settings: Settings) -> RunRecord:
    """The row that holds the thread's receipts. Its status is never queued/running/interrupted: a
    `deepresearch serve` on the same database must not take over a run whose checkpoints it does not have."""
    try:
        return await store.get_run(run_id)
    except RunNotFound:
        options = settings.default_options().model_dump()
        await store.create_run(PLACEHOLDER_QUESTION, options, settings.engine_mode, run_id=run_id)
        return await store.update_run(
            run_id,
            status="cancelled",
            error=f"executed by a LangGraph server (thread {thread_id}); this run holds its receipts",
            artifact_dir=run_artifact_dir("langgraph", run_id),
        )


def research_graph(
    context: ResearchContext | None, settings: Settings | None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """An outer graph of one node that runs the research graph with ``context`` (our tools, our receipts).

    The research graph runs as a subgraph: its checkpoints are the server's, under the node's namespace,
    so a resumed thread continues inside it where it stopped."""
    inner = build_graph()

    async def research(state: PlatformState, config: RunnableConfig) -> dict[str, Any]:
        if context is None or settings is None:
            raise RuntimeError("the research graph runs only inside a run of the LangGraph server")
        options = settings.default_options().model_dump() | dict(state.get("options") or {})
        options = ResearchOptions.model_validate(options).model_dump()
        graph_input = {
            "run_id": context.run_id,
            "question": state["question"],
            "options": options,
            "engine": settings.engine_mode,
            "artifact_dir": run_artifact_dir(state["question"], context.run_id),
        }
        final = await inner.ainvoke(graph_input, config, context=context, durability="sync")
        return {
            "run_id": context.run_id,
            "status": "completed",
            "report": final.get("report") or {},
            "sources": [
                {k: s.get(k) for k in ("url", "title")}
                for s in final.get("sources", [])
                if isinstance(s, dict)
            ],
        }

    builder = StateGraph(PlatformState, input_schema=PlatformInput)
    builder.add_node("research", research)
    builder.add_edge(START, "research")
    builder.add_edge("research", END)
    return builder.compile(name=GRAPH_ID)


@asynccontextmanager
async def make_graph(config: RunnableConfig) -> AsyncIterator[CompiledStateGraph[Any, Any, Any, Any]]:
    """The graph factory of langgraph.json: the server enters it around each run (and to draw the graph)."""
    configurable = config.get("configurable") or {}
    thread_id = configurable.get("thread_id")
    # The server also enters the factory to draw the graph, list its schemas or read a thread's state
    # (it says so in its config): no run then, so no tools and no database.
    if not thread_id or configurable.get("__is_for_execution__") is False:
        yield research_graph(None, None)
        return
    settings = load_settings()
    store = await _SHARED.store(settings.resolved_database_url)
    run = await _run_record(store, run_id_for(str(thread_id)), str(thread_id), settings)
    options = ResearchOptions.model_validate(run.options, context=STORED)
    cancel = CancelSignal(run.run_id, store)
    runtime = ToolRuntime(run.run_id, store, cancel, options.budget, run.started_at)
    async with open_research_tools(settings, options, runtime) as tools:
        context = ResearchContext(run_id=run.run_id, settings=settings, tools=tools, cancel=cancel)
        try:
            yield research_graph(context, settings)
        finally:
            await runtime.wait_inflight()
