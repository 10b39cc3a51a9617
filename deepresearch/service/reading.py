"""What the workbench reads beyond the run's files: its evidence passages rendered as HTML (the report's own
rendering rule, report.render_fragment), a source's fetched text as the run read it (from the receipt of its
fetch: nothing is fetched again), and renaming a run. The routes are in reading_routes.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deepresearch.errors import ArtifactNotFound
from deepresearch.receipts.specs import FETCH_TOOLS
from deepresearch.report.render import render_fragment
from deepresearch.service.contracts import RunPublic
from deepresearch.service.runs import RunService
from deepresearch.service.views import download_stem, public_run
from deepresearch.store import RunRecord
from tools import FetchOutcome

MAX_TITLE_CHARS = 200


class PassagePublic(BaseModel):
    n: int = Field(description="The source's number (as cited in the report).")
    sub_question_index: int
    html: str = Field(description="The passage rendered as sanitised HTML (the report's rule).")


class PassagesPublic(BaseModel):
    run_id: str
    passages: list[PassagePublic] = Field(description="In the order of the evidence file's items.")


class SourceTextPublic(BaseModel):
    url: str = Field(description="The URL the run asked for.")
    final_url: str = Field(description="Where the fetch ended (after redirects).")
    redirects: list[str]
    title: str
    published: str | None
    chars: int = Field(description="Characters of the text the run read (cut to the server's limit).")
    html: str = Field(description="The fetched text rendered as sanitised HTML (the report's rule).")


class RunTitleUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    title: str | None = Field(
        max_length=MAX_TITLE_CHARS,
        description="The run's new name; null or blank: named by its question.",
        # _visible's rule, for clients and fuzzers: no control character but the whitespace it folds
        json_schema_extra={"pattern": "^[^\\u0000-\\u0008\\u000e-\\u001b]*$"},
    )

    @field_validator("title")
    @classmethod
    def _visible(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = " ".join(value.split())
        if any(ord(c) < 32 for c in value):
            raise ValueError("a title has no control characters")
        return value or None


async def rendered_passages(service: RunService, run: RunRecord) -> PassagesPublic:
    """The evidence passages (final evidence.json, else the screening's evidence-table.json) as HTML."""
    for name in ("evidence.json", "evidence-table.json"):
        try:
            path = await service.views.artifact_file(run, name)
        except ArtifactNotFound:
            continue
        items = (await asyncio.to_thread(_read_json, path)).get("evidence", [])
        passages = [
            PassagePublic(
                n=int(item.get("n", 0)),
                sub_question_index=int(item.get("sub_question_index") or 0),
                html=render_fragment(str(item.get("passage", "")), set()),
            )
            for item in items
        ]
        return PassagesPublic(run_id=run.run_id, passages=passages)
    return PassagesPublic(run_id=run.run_id, passages=[])


async def source_text(service: RunService, run: RunRecord, url: str) -> SourceTextPublic:
    """The text the run read from `url`, from its fetch's succeeded receipt."""
    for receipt in await service.store.list_receipts(run.run_id, status="succeeded"):
        if receipt.tool_name not in FETCH_TOOLS or (receipt.args or {}).get("url") != url:
            continue
        outcome = FetchOutcome.from_dict(receipt.result)
        if outcome.page is None:
            break
        page = outcome.page
        text = page.text
        if not text and page.text_sha256:  # receipts refer to the text by hash (store/texts.py)
            text = (await service.store.get_texts([page.text_sha256])).get(page.text_sha256, "")
        return SourceTextPublic(
            url=url,
            final_url=page.url,
            redirects=list(page.redirects),
            title=page.title,
            published=page.published,
            chars=len(text),
            html=render_fragment(text, set()),
        )
    raise ArtifactNotFound(f"this run read no text from {url}")


async def rename(service: RunService, run: RunRecord, update: RunTitleUpdate) -> RunPublic:
    return public_run(await service.store.update_run(run.run_id, title=update.title))


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    return data if isinstance(data, dict) else {}


def download_name(run: RunRecord, extension: str, *, inline: bool = True) -> str:
    """A Content-Disposition header naming a download of the run after its topic (its title or question)."""
    name = f"{download_stem(run.title or run.question)}.{extension}"
    return f'{"inline" if inline else "attachment"}; filename="{name}"'
