"""Routes for reading and keeping a run (the workbench's reading surface and history): its passages rendered,
a source's fetched text, a new title, the report as a Word document. Each answers only for a run the client
may see (RunDep); the rules are in reading.py and docx_export.py."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from deepresearch.api.access import RunDep, ServiceDep, ViewsDep, request_principal
from deepresearch.api.errors import error_responses
from deepresearch.report.docx import report_docx
from deepresearch.service.contracts import RunPublic
from deepresearch.service.reading import (
    PassagesPublic,
    RunTitleUpdate,
    SourceTextPublic,
    download_name,
    rename,
    rendered_passages,
    source_text,
)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

reading = APIRouter(
    prefix="/api/runs",
    tags=["runs"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)
_NOT_FOUND = error_responses(404, 422)
_NOT_WRITTEN = error_responses(404, 409, 422)  # a file the run has not written (yet)


@reading.patch("/{run_id}", response_model=RunPublic, responses=error_responses(403, 404, 422))
async def rename_run(run: RunDep, body: RunTitleUpdate, service: ServiceDep) -> RunPublic:
    """Name the run (as the history shows it); a null or blank title names it by its question again."""
    return await rename(service, run, body)


@reading.get("/{run_id}/passages", response_model=PassagesPublic, responses=_NOT_WRITTEN)
async def get_passages(run: RunDep, service: ServiceDep) -> PassagesPublic:
    """The run's evidence passages rendered as sanitised HTML, in the evidence file's order."""
    return await rendered_passages(service, run)


@reading.get("/{run_id}/source-text", response_model=SourceTextPublic, responses=_NOT_FOUND)
async def get_source_text(
    run: RunDep, service: ServiceDep, url: Annotated[str, Query(min_length=1, max_length=4000)]
) -> SourceTextPublic:
    """The text the run read from a source (from its fetch's receipt: nothing is fetched again)."""
    return await source_text(service, run, url)


@reading.get(
    "/{run_id}/report.docx",
    response_class=Response,
    responses={200: {"description": "The report as a Word document.", "content": {DOCX: {}}}, **_NOT_WRITTEN},
)
async def get_report_docx(run: RunDep, views: ViewsDep) -> Response:
    source = await views.artifact_file(run, "deepresearch-report.md")
    markdown = await asyncio.to_thread(source.read_text, "utf-8")
    body = await asyncio.to_thread(report_docx, markdown, run.title or run.question)
    return Response(
        body,
        media_type=DOCX,
        headers={
            "Content-Disposition": download_name(run, "docx", inline=False),
            "X-Content-Type-Options": "nosniff",
        },
    )
