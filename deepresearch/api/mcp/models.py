"""What deepresearch's MCP tools answer (their structured output, with JSON schemas), read from the run
service's models: the same run, stages, report and sources that /api serves."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel, Field

from deepresearch.errors import ArtifactNotFound
from deepresearch.service.contracts import RunPublic, RunStatus, StageStatus
from deepresearch.service.runs import RunService
from deepresearch.service.views import REPORT_FILE
from deepresearch.store import ACTIVE_STATUSES, RunRecord

SOURCES_FILE = "sources.json"
REPORT_URI = "deepresearch://runs/{run_id}/report"
SOURCES_URI = "deepresearch://runs/{run_id}/sources"


class StageBrief(BaseModel):
    key: str
    title: str
    status: StageStatus


class SourceBrief(BaseModel):
    n: int = Field(description="The number the report cites it by: [n].")
    title: str
    url: str
    cited: bool = Field(description="The report cites it.")


class ResearchRun(BaseModel):
    """A research run: its status and, once completed, its cited report and sources."""

    run_id: str
    status: RunStatus
    question: str
    current_stage: str | None = Field(description="The stage running now (or where the run stopped).")
    stages: list[StageBrief]
    error: str | None = Field(description="Why the run stopped, when it failed or was cancelled.")
    created_at: str
    finished_at: str | None
    next_step: str = Field(description="What to do next, in plain words.")
    report_uri: str = Field(description="The report as an MCP resource (text/markdown), once written.")
    sources_uri: str = Field(description="The sources as an MCP resource (application/json), once written.")
    report_markdown: str | None = Field(None, description="The cited report, when the run is completed.")
    sources: list[SourceBrief] | None = Field(None, description="Its sources, when the run is completed.")


class RunBrief(BaseModel):
    run_id: str
    status: RunStatus
    question: str
    current_stage: str | None
    created_at: str


class ResearchList(BaseModel):
    """Your runs, newest first."""

    runs: list[RunBrief]
    more: bool = Field(description="Older runs exist beyond `limit`.")


class CancelResult(BaseModel):
    run_id: str
    status: RunStatus
    cancel_requested: bool
    next_step: str


class ResumeResult(BaseModel):
    run_id: str
    status: RunStatus
    resumed_from: str = Field(description="The checkpoint id resumed from, or `latest`.")
    next_step: str


def brief(run: RunPublic) -> RunBrief:
    return RunBrief(
        run_id=run.run_id,
        status=run.status,
        question=run.question,
        current_stage=run.current_stage,
        created_at=run.created_at,
    )


async def research_run(service: RunService, run: RunRecord) -> ResearchRun:
    """The run as the MCP tools answer it; the report and sources when it is completed."""
    detail = await service.views.detail(run.run_id)
    report, sources = None, None
    if detail.status == "completed" and detail.report_path:
        report = await read_artifact(service, run, REPORT_FILE)
        sources = [
            SourceBrief(
                n=int(item["n"]),
                title=str(item.get("title") or item["url"]),
                url=str(item.get("final_url") or item["url"]),
                cited=bool(item.get("cited")),
            )
            for item in _sources(await read_artifact(service, run, SOURCES_FILE))
        ]
    return ResearchRun(
        run_id=detail.run_id,
        status=detail.status,
        question=detail.question,
        current_stage=detail.current_stage,
        stages=[StageBrief(key=s.key, title=s.title, status=s.status) for s in detail.stages],
        error=detail.error,
        created_at=detail.created_at,
        finished_at=detail.finished_at,
        next_step=next_step(detail.run_id, detail.status),
        report_uri=REPORT_URI.format(run_id=detail.run_id),
        sources_uri=SOURCES_URI.format(run_id=detail.run_id),
        report_markdown=report,
        sources=sources,
    )


def next_step(run_id: str, status: str) -> str:
    if status in ACTIVE_STATUSES:
        return f"It is {status}: call get_research(run_id={run_id!r}) again in a while."
    if status == "completed":
        return "The report is complete."
    if status == "waiting_for_input":
        return "It waits for a person to review its plan (in the workbench or the API)."
    return (
        f"It stopped ({status}); resume_research(run_id={run_id!r}) continues it from its latest checkpoint."
    )


async def read_artifact(service: RunService, run: RunRecord, name: str) -> str:
    """An artifact's text; ArtifactNotFound when the run has not written it."""
    path = await service.views.artifact_file(run, name)
    return await asyncio.to_thread(path.read_text, "utf-8")


def _sources(text: str) -> list[dict[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ArtifactNotFound(f"{SOURCES_FILE} is not readable JSON") from None
    items = data.get("sources") if isinstance(data, dict) else None
    return [item for item in items or [] if isinstance(item, dict) and "n" in item and "url" in item]
