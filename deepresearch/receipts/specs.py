"""The research tools, one ToolSpec each: everything about a tool that is not the call itself.

A spec says how the tool's result is kept in its receipt (encode / decode), what the call's events show of
its arguments and result, whether a fork or a follow-up may answer it from its origin's receipts, and which
budget counter it spends. ``ReceiptId`` is which receipt one call is. The tool's name is part of every
receipt key (``args_hash`` hashes it with the arguments) and of every stored receipt: renaming a tool, or
changing what it hashes, makes the receipts already in users' databases unreachable. Adding a tool: a spec
here, in ``TOOL_SPECS``, and a method on ResearchTools (tools.py) that calls ``ToolRuntime.call`` with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, Literal, TypeVar

from deepresearch.receipts.results import FetchOutcome, LLMCallResult, WrittenFile
from deepresearch.search import SearchOutcome, SearchResult
from deepresearch.store import args_hash

T = TypeVar("T")
Args = dict[str, Any]


@dataclass(frozen=True, slots=True)
class BudgetCounter:
    """A per-run limit of options.budget (config.RunBudget) that a tool's calls spend."""

    option: str
    """The RunBudget field, e.g. ``max_fetches``."""
    label: str
    """What the limit counts, as the budget's message says it."""
    per: Literal["call", "token"]
    """Every call spends one, or the tokens its receipt records."""


SEARCH_CALLS = BudgetCounter("max_search_calls", "search calls", "call")
FETCHES = BudgetCounter("max_fetches", "fetches", "call")
LLM_TOKENS = BudgetCounter("max_llm_tokens", "LLM token", "token")


def _nothing(_: object) -> dict[str, Any]:
    return {}


def _no_usage(_: object) -> tuple[int, float]:
    return 0, 0.0


def _as_is(args: Args) -> Args:
    return args


def _all_kept(args: Args) -> tuple[Args, dict[str, str]]:
    return args, {}


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[T]):
    """One tool, as its receipts and events know it (the call itself is ToolRuntime.call's)."""

    name: str
    """The receipts' ``tool_name``; hashed into every receipt key, so never renamed."""
    encode: Callable[[T], Any]
    """The result as the receipt keeps it (JSON)."""
    decode: Callable[[Any], T]
    """A recorded result read back from its receipt."""
    label: Callable[[Args], str]
    """The call's label in its events, from its arguments."""
    summarize: Callable[[T], dict[str, Any]]
    """The ``output`` of the call's ``tool_result`` event."""
    reusable: bool
    """A fork or a follow-up may answer this call from its origin's receipts (file writes may not: they
    belong to one run's folder)."""
    budget: BudgetCounter | None = None
    """The per-run limit its calls spend (None: no limit counts them)."""
    usage: Callable[[T], tuple[int, float]] = _no_usage
    """Tokens and cost the result spent, recorded in its receipt."""
    annotate: Callable[[T], dict[str, Any]] = _nothing
    """Top-level fields added to the call's ``tool_result`` event, fresh or reused alike."""
    shown: Callable[[Args], Args] = _as_is
    """What the call's events show of its arguments (events stay small; the receipt keeps them all)."""
    recorded: Callable[[Args], tuple[Args, dict[str, str]]] = _all_kept
    """What the receipt keeps of the arguments, and texts to store once by hash with it (field of the
    kept arguments -> text); the receipt's key is always the hash of all the arguments."""

    def decoding(self, decode: Callable[[Any], T]) -> ToolSpec[T]:
        """The same tool, reading its recorded results with ``decode`` (a structured answer's schema)."""
        return replace(self, decode=decode)


@dataclass(frozen=True, slots=True)
class ReceiptId:
    """Which receipt one call is: the store's key (run, receipt key, hash of the arguments) and its tool."""

    run_id: str
    key: str
    """The stage's receipt key (stages.py), e.g. ``deepresearch:web_fetch:v1``."""
    tool: str
    args_hash: str

    @classmethod
    def of(cls, run_id: str, key: str, spec: ToolSpec[Any], args: Args) -> ReceiptId:
        """The receipt of calling ``spec`` with ``args`` in this run: the same call, the same receipt."""
        return cls(run_id, key, spec.name, args_hash({"tool": spec.name, "args": args}))

    @property
    def row(self) -> tuple[str, str, str]:
        """The receipt's primary key in the store (RunStore.get_receipt, finish_receipt, fail_receipt)."""
        return self.run_id, self.key, self.args_hash


# --- web.search ------------------------------------------------------------------------------------
def _encode_search(outcome: SearchOutcome) -> dict[str, Any]:
    return {
        "query": outcome.query,
        "results": [r.model_dump() for r in outcome.results],
        "providers_used": outcome.providers_used,
        "failures": outcome.failures,
    }


def _decode_search(data: dict[str, Any]) -> SearchOutcome:
    return SearchOutcome(
        query=data["query"],
        results=[SearchResult.model_validate(r) for r in data["results"]],
        providers_used=list(data["providers_used"]),
        failures=dict(data["failures"]),
    )


def _summarize_search(outcome: SearchOutcome) -> dict[str, Any]:
    return {
        "results": len(outcome.results),
        "providers": outcome.providers_used,
        "failures": outcome.failures,
    }


WEB_SEARCH: ToolSpec[SearchOutcome] = ToolSpec(
    "web.search",
    encode=_encode_search,
    decode=_decode_search,
    label=lambda args: f"search: {args['query']}",
    summarize=_summarize_search,
    reusable=True,
    budget=SEARCH_CALLS,
)


# --- web.fetch and corpus.read ---------------------------------------------------------------------
def _summarize_fetch(outcome: FetchOutcome) -> dict[str, Any]:
    if outcome.page is None:
        return {"ok": False, "error": outcome.error, "reason": outcome.reason}
    return {
        "ok": True,
        "title": outcome.page.title,
        "bytes": outcome.page.byte_size,
        "chars": outcome.page.chars,
        "status_code": outcome.page.status_code,
    }


WEB_FETCH: ToolSpec[FetchOutcome] = ToolSpec(
    "web.fetch",
    encode=FetchOutcome.to_dict,
    decode=FetchOutcome.from_dict,
    label=lambda args: f"fetch: {args['url']}",
    summarize=_summarize_fetch,
    reusable=True,
    budget=FETCHES,
)
CORPUS_READ: ToolSpec[FetchOutcome] = replace(WEB_FETCH, name="corpus.read", budget=None)
"""A document of the run's corpus folder (``corpus://`` URLs): a fetch that no fetch limit counts."""


# --- llm.structured and llm.complete --------------------------------------------------------------
def _llm_shown(args: Args) -> Args:
    """An LLM call's events show the prompt's id and size, not the whole prompt (the receipt has it)."""
    return {"prompt": args["prompt"], "model": args["model"], "prompt_chars": _prompt_chars(args)}


def _llm_recorded(args: Args) -> tuple[Args, dict[str, str]]:
    """An LLM receipt keeps the prompt's messages (which quote whole passages) stored once by hash
    (``messages_sha256``; ``RunStore.get_texts`` reads them back), the rest as is."""
    kept = {key: value for key, value in args.items() if key != "messages"}
    kept["prompt_chars"] = _prompt_chars(args)
    return kept, {"messages_sha256": json.dumps(args["messages"], ensure_ascii=False)}


def _prompt_chars(args: Args) -> int:
    return sum(len(m["content"]) for m in args["messages"])


def _llm_event_fields(result: LLMCallResult) -> dict[str, Any]:
    """What an LLM call's tool_result event says: the answers, and ``status: fell_back`` when the value is
    the step's extractive method's, so no progress view shows such a call as a plain "ok"."""
    return {**result.event_fields(), "status": "fell_back" if result.fallback else "ok"}


def _llm_usage(result: LLMCallResult) -> tuple[int, float]:
    return result.tokens, result.cost_usd


LLM_STRUCTURED: ToolSpec[LLMCallResult] = ToolSpec(
    "llm.structured",
    # the value is the schema's model; a call reads it back with its schema (ToolSpec.decoding)
    encode=lambda r: r.to_dict(r.value.model_dump(mode="json")),
    decode=lambda d: LLMCallResult.from_dict(d, d["value"]),
    label=lambda args: f"llm: {args['prompt']}",
    summarize=LLMCallResult.summary,
    reusable=True,
    budget=LLM_TOKENS,
    usage=_llm_usage,
    annotate=_llm_event_fields,
    shown=_llm_shown,
    recorded=_llm_recorded,
)
LLM_COMPLETE: ToolSpec[LLMCallResult] = replace(
    LLM_STRUCTURED,
    name="llm.complete",
    encode=lambda r: r.to_dict(r.value),
    decode=lambda d: LLMCallResult.from_dict(d, d["value"]),
    summarize=lambda r: {**r.summary(), "chars": len(r.value)},
)


# --- workspace.write -------------------------------------------------------------------------------
WORKSPACE_WRITE: ToolSpec[WrittenFile] = ToolSpec(
    "workspace.write",
    encode=WrittenFile.to_dict,
    decode=WrittenFile.from_dict,
    label=lambda args: f"write: {args['path'].rsplit('/', 1)[-1]}",
    summarize=WrittenFile.to_dict,
    reusable=False,
)


# --- mcp.search, mcp.fetch: calls of an operator's MCP servers (deepresearch/mcpclient) ---------------
# Sub-calls of the web.search or web.fetch call that asked for them: that call spends the budget.
MCP_SEARCH: ToolSpec[list[SearchResult]] = ToolSpec(
    "mcp.search",
    encode=lambda results: [r.model_dump() for r in results],
    decode=lambda data: [SearchResult.model_validate(r) for r in data],
    label=lambda args: f"mcp:{args['server']} search",
    summarize=lambda results: {"results": len(results)},
    reusable=True,
)
MCP_FETCH: ToolSpec[Any] = ToolSpec(
    "mcp.fetch",
    # the page's text is stored once by hash; the receipt keeps title, hash and size (mcpclient.roles)
    encode=lambda fetched: fetched.to_dict(),
    decode=lambda data: data,
    label=lambda args: f"mcp:{args['server']} fetch",
    summarize=lambda fetched: {"chars": fetched.chars},
    reusable=True,
)


TOOL_SPECS: dict[str, ToolSpec[Any]] = {
    spec.name: spec
    for spec in (
        WEB_SEARCH,
        WEB_FETCH,
        CORPUS_READ,
        LLM_STRUCTURED,
        LLM_COMPLETE,
        WORKSPACE_WRITE,
        MCP_SEARCH,
        MCP_FETCH,
    )
}
REUSABLE_TOOLS: tuple[str, ...] = tuple(name for name, spec in TOOL_SPECS.items() if spec.reusable)
"""External calls a new run may answer from another run's receipts (RunStore.copy_receipts)."""
FETCH_TOOLS: tuple[str, ...] = (WEB_FETCH.name, CORPUS_READ.name)
"""The tools whose receipts hold a source's text as the run read it."""
