"""The research tools, each behind a receipt: web search, web fetch (or corpus read), LLM calls, file writes.

Stages call these methods and nothing else that reaches the outside world. Every call is recorded in the run
store; a call that already succeeded for this run returns its recorded result (see
deepresearch.receipts.runtime). What each tool's receipts and events hold, whether other runs may reuse them
and which budget it spends is its ToolSpec's (deepresearch/receipts/specs.py); a method here makes the call.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from config import Settings
from deepresearch.cpu import CpuPool
from deepresearch.engine.workspace import Workspace, sha256_bytes
from deepresearch.llm.modes import OutputMode, is_mode
from deepresearch.mcpclient import PageFetcher, open_mcp_tools
from deepresearch.options import ResearchOptions
from deepresearch.receipts.results import FetchOutcome, LLMCallResult, StepFallback, WrittenFile
from deepresearch.receipts.runtime import CancelSignal, StageError, ToolCall, ToolRuntime
from deepresearch.receipts.specs import (
    CORPUS_READ,
    LLM_COMPLETE,
    LLM_STRUCTURED,
    WEB_FETCH,
    WEB_SEARCH,
    WORKSPACE_WRITE,
)
from deepresearch.receipts.streaming import DeltaStream
from deepresearch.search import (
    AllProvidersFailed,
    CorpusDocument,
    CorpusError,
    CorpusIndex,
    SearchChain,
    SearchOutcome,
    build_search_chain,
)
from deepresearch.search.corpus import Progress
from deepresearch.search.documents import limited_extractor
from deepresearch.search.erasure import index_path
from deepresearch.search.health import explain_failures
from deepresearch.store import LLMCapability, RunStore, utcnow
from deepresearch.web.fetch import FetchedPage, FetchError, WebFetcher
from llm_client import LLMClient, LLMError, LLMResponse, StructuredOutputError, endpoint_of

logger = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=BaseModel)

# Fetch failures that will not change on a retry are recorded as results (a resume does not re-fetch);
# transient ones (timeouts, connection errors, 5xx) fail the receipt so a resume tries again.
PERMANENT_FETCH_FAILURES = frozenset(
    {"blocked", "http_status", "too_large", "content_type", "too_many_redirects", "empty"}
)
# The receipt keeps what the model said (so a resume neither asks again nor loses the evidence of why a
# step fell back); capped per answer so a runaway answer cannot bloat the database.
ANSWER_RECORD_MAX_CHARS = 4_000
TEXT_CACHE_CHARS = 4_000_000
"""Characters of fetched texts one run execution keeps in memory for its later stages."""


class ResearchTools:
    """Tools of one run execution. Built by :func:`open_research_tools`."""

    def __init__(
        self,
        settings: Settings,
        runtime: ToolRuntime,
        workspace: Workspace,
        search: SearchChain,
        fetcher: PageFetcher,
        corpus: CorpusIndex | None,
        llm: LLMClient | None,
        cpu: CpuPool,
    ) -> None:
        self.settings = settings
        self.runtime = runtime
        self.workspace = workspace
        self.search_chain = search
        self.fetcher = fetcher
        self.corpus = corpus
        self.llm = llm
        self.cpu = cpu
        """Where the stages run their CPU-bound work (ranking, rendering), away from the event loop."""
        # the texts this execution fetched or read back, by hash: the next stages read them from here, not
        # from the database (bounded: the oldest go first past TEXT_CACHE_CHARS)
        self._texts: dict[str, str] = {}
        self._text_chars = 0
        # bounds the parallel search branches of one run (each Send branch is its own task)
        self._search_slots = asyncio.Semaphore(settings.search_concurrency)

    async def web_search(
        self, *, stage: str, receipt_key: str, query: str, max_results: int
    ) -> SearchOutcome:
        async def run() -> SearchOutcome:
            try:
                return await self.search_chain.search(query, max_results)
            except AllProvidersFailed as exc:
                explained = explain_failures(exc.failures, query)
                raise StageError(stage, explained.message, explained.detail) from exc

        args = {"query": query, "max_results": max_results}
        async with self._search_slots:
            outcome = await self.runtime.call(
                WEB_SEARCH, self.runtime.receipt_id(WEB_SEARCH, receipt_key, args), ToolCall(stage, args, run)
            )
        return outcome.value

    async def fetch(self, *, stage: str, receipt_key: str, url: str) -> FetchOutcome:
        is_corpus = url.startswith("corpus://")

        async def run() -> FetchOutcome:
            if is_corpus:
                if self.corpus is None:
                    return FetchOutcome(url, None, "no corpus is configured for this run", "corpus")
                try:
                    return FetchOutcome(url, await self._stored(_corpus_page(await self.corpus.read(url))))
                except CorpusError as exc:
                    return FetchOutcome(url, None, str(exc), "corpus")
            try:
                return FetchOutcome(url, await self._stored(await self.fetcher.fetch(url)))
            except FetchError as exc:
                transient_status = exc.status_code is not None and (
                    exc.status_code >= 500 or exc.status_code == 429
                )
                if exc.reason in PERMANENT_FETCH_FAILURES and not transient_status:
                    return FetchOutcome(url, None, str(exc), exc.reason)
                raise

        spec, args = CORPUS_READ if is_corpus else WEB_FETCH, {"url": url}
        outcome = await self.runtime.call(
            spec, self.runtime.receipt_id(spec, receipt_key, args), ToolCall(stage, args, run)
        )
        value: FetchOutcome = outcome.value
        if value.page is not None and value.page.text_sha256 is None:
            # a receipt from before the text store holds the text itself: store it, so the state refers to it
            await self._stored(value.page)
        return value

    async def _stored(self, page: FetchedPage) -> FetchedPage:
        """Store the page's text once (content-addressed) and note its hash on the page."""
        page.text_sha256 = await self.runtime.store.put_text(
            self.runtime.run_id, page.text, fence=self.runtime.fence
        )
        self._remember(page.text_sha256, page.text)
        return page

    def _remember(self, sha256: str, text: str) -> None:
        if sha256 in self._texts or len(text) > TEXT_CACHE_CHARS:
            return
        self._texts[sha256] = text
        self._text_chars += len(text)
        while self._text_chars > TEXT_CACHE_CHARS:
            self._text_chars -= len(self._texts.pop(next(iter(self._texts))))

    async def source_texts(self, stage: str, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The state's sources with their ``text`` filled in from the text store (sources in a state from
        before the store carry it inline). A text that is not stored fails the stage: the run's database
        lost it, and only re-fetching (a new run) can bring it back."""
        wanted = {s["text_sha256"] for s in sources if "text" not in s and s.get("text_sha256")}
        texts = {sha: self._texts[sha] for sha in wanted if sha in self._texts}
        missing = wanted - texts.keys()
        if missing:
            read = await self.runtime.store.get_texts(missing)
            for sha, text in read.items():
                self._remember(sha, text)
            texts |= read
        filled = []
        for source in sources:
            if "text" not in source:
                text = texts.get(source.get("text_sha256") or "")
                if text is None:
                    raise StageError(
                        stage,
                        f"the stored text of source {source.get('id')} ({source['url']}) is missing from the "
                        "database; start a new run",
                    )
                source = {**source, "text": text}
            filled.append(source)
        return filled

    async def llm_structured(
        self,
        *,
        stage: str,
        receipt_key: str,
        prompt_id: str,
        messages: list[dict[str, str]],
        schema: type[ModelT],
        step: str,
        fallback: Callable[[], ModelT],
        context: object = None,
        label: str | None = None,
    ) -> LLMCallResult:
        """A structured answer checked by shape and meaning (``context``: see schemas.AnswerContext). When
        it stays unusable, ``fallback`` (the step's extractive method) gives the value instead, labelled,
        unless DEEPRESEARCH_LLM_FALLBACK=fail. The receipt records the answers and the fallback."""
        llm = self._require_llm(stage)

        async def ask() -> LLMCallResult:
            result = await llm.structured(messages, schema, context)
            return _call_result(result.value, result.responses, len(result.problems))

        args = {
            "prompt": prompt_id,
            "model": self.settings.openai_model_name,
            "messages": messages,
            "schema": schema.__name__,
        }
        spec = LLM_STRUCTURED.decoding(
            lambda d: LLMCallResult.from_dict(d, schema.model_validate(d["value"]))
        )
        outcome = await self.runtime.call(
            spec,
            self.runtime.receipt_id(spec, receipt_key, args),
            ToolCall(stage, args, lambda: self._or_fallback(stage, step, ask, fallback), label=label),
        )
        return outcome.value

    async def llm_text(
        self,
        *,
        stage: str,
        receipt_key: str,
        prompt_id: str,
        messages: list[dict[str, str]],
        step: str,
        check: Callable[[str], None],
        fallback: Callable[[], str],
        stream: bool = False,
    ) -> LLMCallResult:
        """A free-text answer that ``check`` accepts (it raises ValueError with the reasons), with the same
        re-ask, fallback and receipt as :meth:`llm_structured`. ``stream``: the text is sent to the event
        log as it is written (``report_delta`` events); a cancel mid-stream stops it, fails the receipt
        (so a resume asks again) and nothing half-written is kept."""
        llm = self._require_llm(stage)

        async def ask() -> LLMCallResult:
            streamer = DeltaStream(stage, step, self.runtime.cancel) if stream else None
            result = await llm.checked_text(messages, check, step, streamer.send if streamer else None)
            if streamer is not None:
                await streamer.flush()
            return _call_result(result.value, result.responses, len(result.problems))

        args = {"prompt": prompt_id, "model": self.settings.openai_model_name, "messages": messages}
        outcome = await self.runtime.call(
            LLM_COMPLETE,
            self.runtime.receipt_id(LLM_COMPLETE, receipt_key, args),
            ToolCall(stage, args, lambda: self._or_fallback(stage, step, ask, fallback)),
        )
        return outcome.value

    async def _or_fallback(
        self,
        stage: str,
        step: str,
        ask: Callable[[], Any],
        fallback: Callable[[], Any],
    ) -> LLMCallResult:
        """The model's answer, or - when it stays unusable or the server refuses this request (too long
        for its context window, say) - the step's extractive method, labelled. Configuration problems
        (unreachable server, wrong model, bad key) fail the stage: falling back would hide them."""
        try:
            return await ask()
        except StructuredOutputError as exc:
            problem, responses = exc.problems[-1] if exc.problems else str(exc), exc.responses
            reason = f"{len(responses)} unusable answer(s); last: {problem}"
            error: LLMError = exc
        except LLMError as exc:
            if not exc.request_rejected:
                raise StageError(stage, str(exc)) from exc
            reason, responses, error = f"the server refused the request: {exc}", [], exc
        if self.settings.llm_fallback == "fail":
            raise StageError(stage, f"{error} (DEEPRESEARCH_LLM_FALLBACK=fail)") from error
        logger.warning("step %s falls back to its extractive method: %s", step, reason)
        result = _call_result(fallback(), responses, len(responses))
        result.fallback = StepFallback(step, reason[:500])
        return result

    async def write_artifact(
        self, *, stage: str, receipt_key: str, relative_path: str, content: str
    ) -> WrittenFile:
        data = content.encode("utf-8")

        async def run() -> WrittenFile:
            # the file is outside the database's transactions: the call's started receipt, committed just
            # before this with the lease checked in its transaction, is the fence for it
            return await self.workspace.write_bytes(relative_path, data)

        def still_there(written: WrittenFile) -> bool:
            # a recorded write is reused only while the file is still there, byte for byte
            return self.workspace.file_digest(written.relative_path) == written.sha256

        args = {"path": relative_path, "sha256": sha256_bytes(data), "size": len(data)}
        outcome = await self.runtime.call(
            WORKSPACE_WRITE,
            self.runtime.receipt_id(WORKSPACE_WRITE, receipt_key, args),
            ToolCall(stage, args, run, still_valid=still_there),
        )
        return outcome.value

    def _require_llm(self, stage: str) -> LLMClient:
        if self.llm is None:
            raise StageError(stage, "this stage needs a language model but the run is in extractive mode")
        return self.llm


def _call_result(value: Any, responses: list[LLMResponse], unusable: int) -> LLMCallResult:
    return LLMCallResult(
        value,
        sum(r.usage.total_tokens for r in responses),
        sum(r.usage.cost_usd for r in responses),
        responses[-1].model if responses else "",
        [r.text[:ANSWER_RECORD_MAX_CHARS] for r in responses],
        unusable,
    )


def _corpus_page(doc: CorpusDocument) -> FetchedPage:
    return FetchedPage(
        url=doc.url,
        requested_url=doc.url,
        status_code=200,
        content_type="text/plain",
        title=doc.title,
        text=doc.text,
        canonical_url=None,
        published=doc.modified,
        byte_size=len(doc.text.encode("utf-8")),
        extractor="corpus",
        redirects=[],
        fetched_at=utcnow(),
    )


@dataclass(slots=True)
class ResearchContext:
    """LangGraph runtime context of one run execution (never checkpointed; rebuilt on resume)."""

    run_id: str
    settings: Settings
    tools: ResearchTools
    cancel: CancelSignal


@asynccontextmanager
async def open_research_tools(
    settings: Settings,
    options: ResearchOptions,
    runtime: ToolRuntime,
    cpu: CpuPool | None = None,
    progress: Progress | None = None,
) -> AsyncIterator[ResearchTools]:
    """Build the tools of one run execution and close their clients afterwards. ``cpu`` is the process's
    pool for CPU-bound work (the engine's); without one it runs in threads. ``progress`` is told how far
    indexing the run's document folder is, while it takes long."""
    cpu = cpu or CpuPool(0)
    async with AsyncExitStack() as stack:
        corpus: CorpusIndex | None = None
        if options.corpus_dir:
            corpus_dir = Path(options.corpus_dir)
            if not corpus_dir.is_dir():
                raise StageError("search_web", f"corpus folder {corpus_dir} does not exist")
            settings.home.mkdir(parents=True, exist_ok=True)
            extract = limited_extractor(cpu, settings.document_max_pages, settings.document_parse_seconds)
            corpus = CorpusIndex(index_path(settings.home, corpus_dir), corpus_dir, extract=extract)
            stats = await corpus.reindex(progress, settings.index_progress_seconds)
            logger.info("corpus %s indexed: %s", corpus_dir, stats)
        mcp = open_mcp_tools(settings, runtime)  # MCP servers that search and fetch (docs/mcp.md), if any
        if mcp is not None:
            stack.push_async_callback(mcp.aclose)
        search = build_search_chain(
            settings,
            corpus=corpus,
            corpus_only=options.corpus_only,
            mcp=mcp.search_providers() if mcp else (),
            passthrough=mcp.passthrough if mcp else (),
        )
        stack.push_async_callback(search.aclose)
        fetcher: PageFetcher = WebFetcher(settings, cpu=cpu)
        fetcher = mcp.fetcher(fetcher) if mcp else fetcher
        stack.push_async_callback(fetcher.aclose)
        llm: LLMClient | None = None
        if settings.engine_mode == "llm":
            llm = await open_llm_client(settings, runtime.store, runtime.cancel.raise_if_requested_here)
            stack.push_async_callback(llm.aclose)
        # resolving the workspace folder follows symlinks (stat calls): off the event loop
        workspace = await asyncio.to_thread(Workspace, settings.workspace_dir)
        yield ResearchTools(settings, runtime, workspace, search, fetcher, corpus, llm, cpu)


async def open_llm_client(
    settings: Settings, store: RunStore, wait_check: Callable[[], None] | None = None
) -> LLMClient:
    """The run's LLM client, asking for structured output the way this server was found to take it (or
    finding out - what server it is, then what it accepts - and remembering it in the database).
    ``wait_check`` runs while a request queues for a slot of the endpoint: a cancel leaves the queue."""
    # the SDK's first import is about a second of CPU: in a thread, so the loop keeps serving meanwhile
    await asyncio.to_thread(importlib.import_module, "openai")
    endpoint, model = endpoint_of(settings), settings.openai_model_name.strip()
    known = await store.get_llm_capability(endpoint, model)
    mode: OutputMode | None = None
    if known is not None and is_mode(known.mode):
        mode = known.mode

    async def remember(found: OutputMode, notes: str) -> None:
        detail = notes or "accepted at the first try"
        await store.put_llm_capability(LLMCapability(endpoint, model, found, detail, utcnow()))

    return LLMClient(settings, output_mode=mode, on_negotiated=remember, wait_check=wait_check)


__all__ = [
    "CancelSignal",
    "FetchOutcome",
    "LLMCallResult",
    "ResearchContext",
    "ResearchTools",
    "ToolRuntime",
    "open_research_tools",
]
