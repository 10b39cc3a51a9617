"""Follow-up questions: a new run on a finished one, seeded with its fetched sources (and what its
searches found for them) through update_state(as_node="__input__"). It plans the new question, searches
only for what those sources do not cover (deepresearch/seeding.py) and answers repeated calls from copies
of the original's receipts; the original is not touched (docs/steering.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from config import OptionsPatch

from .auth import CLI, Principal
from .engine import graph_config
from .rules import Patch, RunConflict, check_question
from .service import RunService
from .store import RunRecord

SEEDED_KEYS = ("sources", "fetch_failures", "queries_done")


class FollowUpRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=100_000, description="The follow-up question.")
    options: OptionsPatch | None = Field(  # type: ignore[valid-type]
        None, description="Options to change; the rest are the original run's (review_plan included)."
    )


async def follow_up(
    service: RunService, run_id: str, question: str, patch: Patch | None = None, principal: Principal = CLI
) -> RunRecord:
    original = await service.visible_run(run_id, principal)
    if original.status != "completed":
        raise RunConflict(f"run {run_id} is {original.status}; ask a follow-up once it has completed")
    question = check_question(question, service.settings.max_question_chars)
    values = (await service.engine.graph.aget_state(graph_config(original.thread_id))).values
    options = service.options(original.options, patch, principal)
    run = await service.create_with(question, options, principal)
    run = await service.store.update_run(run.run_id, follow_up_of=run_id)
    await service.store.copy_receipts(run_id, run.run_id)
    read = {s["url"] for s in values.get("sources", [])} | {
        f["url"] for f in values.get("fetch_failures", [])
    }
    seed = {
        "run_id": run.run_id,
        "question": question,
        "options": options.model_dump(),
        "engine": run.engine,
        "artifact_dir": run.artifact_dir,
        # only what the original read (or could not): other results it left unread are not carried over
        "search_results": [r for r in values.get("search_results", []) if r["url"] in read],
        **{key: values.get(key, []) for key in SEEDED_KEYS},
    }
    await service.engine.graph.aupdate_state(graph_config(run.thread_id), seed, as_node="__input__")
    text = (
        f"A follow-up of run {run_id}: starts with its {len(seed['sources'])} sources and searches only "
        "for what they do not cover."
    )
    await service.store.append_event(run.run_id, "message", None, {"text": text, "follow_up_of": run_id})
    service.launch(run.run_id)
    return run
