"""deepresearch as an MCP server (docs/mcp.md): research tools and the reports as resources, for MCP hosts.

One server definition, two transports: stdio (``deepresearch mcp``, deepresearch/api/mcp/stdio.py) and
streamable HTTP at ``/mcp`` on ``deepresearch serve`` (deepresearch/api/mcp/http.py). Every tool is a thin
translation to the run service, as the HTTP routes are: the same lifecycle, the same ownership rule (a run
another user owns does not exist), the same checks and messages. ``research`` follows the run's event log
(not its task), so a host that goes away leaves the run going; get_research picks it up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError

from config import describe_validation_error
from deepresearch.api.mcp.models import (
    REPORT_URI,
    SOURCES_FILE,
    SOURCES_URI,
    CancelResult,
    ResearchList,
    ResearchRun,
    ResumeResult,
    brief,
    next_step,
    read_artifact,
    research_run,
)
from deepresearch.errors import (
    ArtifactNotFound,
    CheckpointNotFound,
    InvalidInput,
    RunConflict,
    RunNotFound,
    TooManyRequests,
)
from deepresearch.options import OptionsPatch
from deepresearch.service.auth import Principal
from deepresearch.service.runs import RunService
from deepresearch.service.views import REPORT_FILE
from deepresearch.store import ACTIVE_STATUSES, EventRecord, RunRecord

__all__ = ["McpFrontEnd", "build_mcp_server"]

INSTRUCTIONS = (
    "Deep research with cited reports. `research` researches a question and answers when the report is "
    "written (minutes; progress is reported as it goes). `start_research` starts a run and answers at once; "
    "poll it with `get_research`. A run goes on if you disconnect: `list_research` finds it again."
)
RunId = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$", description="A run id (32 hex digits).")]
Question = Annotated[str, Field(min_length=1, description="The question to research, in plain words.")]
Options = Annotated[
    OptionsPatch | None,  # type: ignore[valid-type]
    Field(description="Per-run options (depth, breadth, budget...); omitted: the server's defaults."),
]
Limit = Annotated[int, Field(ge=1, le=200, description="How many runs, newest first.")]
_WAIT_SECONDS = 1.0
_PAGE = 500


class _Server(MCPServer):
    """MCPServer whose argument errors read like the API's: each bad field and what is wrong with it."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                problem = describe_validation_error(exc.__cause__, "arguments")
                raise ToolError(f"{name}: invalid arguments: {problem}") from exc.__cause__
            raise


class McpFrontEnd:
    """The tools and resources, over a run service and a rule for who is asking."""

    def __init__(
        self,
        service: Callable[[], RunService],
        principal: Callable[[Context], Principal],
        research_timeout: float,
    ) -> None:
        self._service = service
        self._principal = principal
        self.research_timeout = research_timeout

    async def start_research(self, question: Question, ctx: Context, options: Options = None) -> ResearchRun:
        """Start researching a question; answers at once with the run id (poll it with get_research)."""
        service, principal = self._service(), self._principal(ctx)
        with _answers():
            run = await service.start(question, options, principal)
            return await research_run(service, run)

    async def get_research(self, run_id: RunId, ctx: Context) -> ResearchRun:
        """A run's status and current stage; when completed, its cited report (Markdown) and sources."""
        service = self._service()
        with _answers(run_id):
            run = await service.visible_run(run_id, self._principal(ctx))
            return await research_run(service, run)

    async def list_research(self, ctx: Context, limit: Limit = 20) -> ResearchList:
        """Your research runs, newest first."""
        runs, more = await self._service().list_runs(None, limit, 0, self._principal(ctx))
        return ResearchList(runs=[brief(run) for run in runs], more=more)

    async def cancel_research(self, run_id: RunId, ctx: Context) -> CancelResult:
        """Stop a run at its next checkpoint; it stays resumable (resume_research)."""
        service = self._service()
        with _answers(run_id):
            await service.visible_run(run_id, self._principal(ctx))
            run = await service.cancel(run_id)
        return CancelResult(
            run_id=run.run_id,
            status=run.status,  # type: ignore[arg-type]
            cancel_requested=run.cancel_requested,
            next_step=next_step(run.run_id, run.status),
        )

    async def resume_research(
        self,
        run_id: RunId,
        ctx: Context,
        checkpoint_id: Annotated[
            str | None, Field(max_length=64, description="Fork from this checkpoint; omitted: the latest.")
        ] = None,
    ) -> ResumeResult:
        """Continue a stopped run from its latest checkpoint (or fork one from an older checkpoint); calls
        that already succeeded are not made again."""
        service = self._service()
        with _answers(run_id):
            run = await service.resume(run_id, checkpoint_id, None, principal=self._principal(ctx))
        return ResumeResult(
            run_id=run.run_id,
            status=run.status,  # type: ignore[arg-type]
            resumed_from=checkpoint_id or "latest",
            next_step=next_step(run.run_id, run.status),
        )

    async def research(self, question: Question, ctx: Context, options: Options = None) -> ResearchRun:
        """Research a question and answer with the cited report once it is written (this takes minutes);
        progress is reported for each stage and tool call. If you disconnect, the run goes on."""
        service, principal = self._service(), self._principal(ctx)
        with _answers():
            run = await service.start(question, options, principal)
        final = await self._follow(service, run.run_id, ctx)
        if final.status == "completed":
            with _answers(run.run_id):
                return await research_run(service, final)
        if final.status in ACTIVE_STATUSES:
            raise ToolError(
                f"run {run.run_id} is still {final.status} after {self.research_timeout:g}s "
                "(DEEPRESEARCH_MCP_RESEARCH_TIMEOUT_SECONDS); it goes on: "
                f"get_research(run_id={run.run_id!r}) finds its report when it is done"
            )
        reason = f": {final.error}" if final.error else ""
        raise ToolError(f"run {run.run_id} {final.status}{reason}. {next_step(run.run_id, final.status)}")

    async def report(self, run_id: str, ctx: Context) -> str:
        """The cited report of a completed run (Markdown)."""
        return await self._artifact(run_id, ctx, REPORT_FILE)

    async def sources(self, run_id: str, ctx: Context) -> str:
        """The sources of a completed run (JSON: n, url, title, cited...)."""
        return await self._artifact(run_id, ctx, SOURCES_FILE)

    async def _artifact(self, run_id: str, ctx: Context, name: str) -> str:
        service = self._service()
        try:
            run = await service.visible_run(run_id, self._principal(ctx))
            if run.status != "completed":
                raise ResourceNotFoundError(
                    f"run {run_id} is {run.status}: its {name} comes when it completes"
                )
            return await read_artifact(service, run, name)
        except (RunNotFound, ArtifactNotFound):
            raise ResourceNotFoundError(
                f"no {name} of run {run_id} (unknown, deleted, or not yours)"
            ) from None

    async def _follow(self, service: RunService, run_id: str, ctx: Context) -> RunRecord:
        """Read the run's events as they come, reporting progress, until it stops (or the wait's bound)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.research_timeout
        last, sent = 0, 0
        with service.notifier.subscribe(run_id) as subscription:
            while True:
                subscription.wake.clear()  # before reading: an event appended meanwhile sets it again
                events = await service.views.events(run_id, last, _PAGE)
                for event in events:
                    last = event.seq
                    if (text := progress_text(event)) is not None:
                        sent += 1
                        try:
                            await ctx.report_progress(sent, None, text)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return await service.views.record(run_id)  # the host went away; the run goes on
                if len(events) == _PAGE:
                    continue
                run = await service.views.record(run_id)
                if run.status not in ACTIVE_STATUSES and not service.is_active_here(run_id):
                    if not await service.views.events(run_id, last, 1):
                        return run
                    continue
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return run
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(subscription.wake.wait(), timeout=min(_WAIT_SECONDS, remaining))


def progress_text(event: EventRecord) -> str | None:
    """What a host shows for an event: a stage that starts, a tool call, the end."""
    data = event.data
    if event.type == "tool_call":
        if not data.get("parent_call_id") and data.get("title"):
            return str(data["title"])
        label = str(data.get("label") or data.get("tool_name") or "tool call")
        return f"{label} (from its receipt)" if data.get("reused") else label
    if event.type == "end":
        return f"Run {data.get('status', 'ended')}"
    return None


@contextlib.contextmanager
def _answers(run_id: str | None = None) -> Iterator[None]:
    """The service's refusals, as tool errors a model can read and act on."""
    try:
        yield
    except RunNotFound:
        raise ToolError(
            f"no run {run_id} (unknown, deleted, or not yours); list_research lists yours"
        ) from None
    except (InvalidInput, RunConflict, TooManyRequests, CheckpointNotFound, ArtifactNotFound) as exc:
        raise ToolError(str(exc)) from None


def build_mcp_server(front: McpFrontEnd, version: str) -> MCPServer:
    """The MCP server: six tools with JSON schemas and structured results, two resource templates."""
    server = _Server("deepresearch", title="deepresearch", version=version, instructions=INSTRUCTIONS)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    starts = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
    server.add_tool(front.research, title="Research a question (waits for the report)", annotations=starts)
    server.add_tool(front.start_research, title="Start researching a question", annotations=starts)
    server.add_tool(front.get_research, title="A research run and its report", annotations=reads)
    server.add_tool(front.list_research, title="Your research runs", annotations=reads)
    changes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
    server.add_tool(front.cancel_research, title="Pause a research run", annotations=changes)
    server.add_tool(front.resume_research, title="Resume a research run", annotations=starts)
    server.resource(REPORT_URI, name="report", title="Research report", mime_type="text/markdown")(
        front.report
    )
    server.resource(SOURCES_URI, name="sources", title="Research sources", mime_type="application/json")(
        front.sources
    )
    return server
