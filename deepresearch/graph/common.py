"""Shared by the nodes: the business-stage wrapper (demo delay, fault injection), artifacts, messages."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.runtime import Runtime

from deepresearch.receipts.runtime import StageError, emit
from stages import get_stage
from tools import LLMCallResult, ResearchContext

logger = logging.getLogger(__name__)
Node = Callable[..., Awaitable[dict[str, Any]]]
MAX_SUB_QUESTIONS = 6
CANDIDATES_PER_SUB_QUESTION = 8
EVIDENCE_PER_SUB_QUESTION = 4
EXTRACTIVE_EVIDENCE_PER_SUB_QUESTION = 6  # no model reads them: sentence selection sorts out the extra ones
# ... and further sections of the pages kept: a small corpus's one relevant document explains a mechanism in
# more sections than six (only pages already kept: a new page on a weak rank is what lowers precision)
EXTRACTIVE_MORE_SECTIONS = 4
LLM_RELEVANCE_THRESHOLD = 0.5


class InjectedFailure(StageError):
    """A failure asked for by DEEPRESEARCH_FAIL_STAGE (testing resume after failure)."""


def business_stage(key: str) -> Callable[[Node], Node]:
    """Wrap a stage node: demo delay and fault injection (DEEPRESEARCH_STAGE_DELAY_SECONDS / _FAIL_STAGE)."""

    def decorate(node: Node) -> Node:
        @functools.wraps(node)
        async def wrapper(state: Any, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
            settings = runtime.context.settings
            where = _fail_point(settings.fail_stage, key)
            if where == "start":
                raise InjectedFailure(key, "failure injected at stage start (DEEPRESEARCH_FAIL_STAGE)")
            await _stage_delay(runtime.context, settings.stage_delay_seconds)
            update = await node(state, runtime)
            if where == "end":
                raise InjectedFailure(key, "failure injected at stage end (DEEPRESEARCH_FAIL_STAGE)")
            return update

        return wrapper

    return decorate


def _fail_point(fail_stage: str, key: str) -> str | None:
    if not fail_stage:
        return None
    stage, _, where = fail_stage.partition(":")
    return (where or "start") if stage == key else None


async def _stage_delay(context: ResearchContext, seconds: float) -> None:
    # sleep in slices so a cancel during a demo delay is honoured promptly
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        await context.cancel.raise_if_set()
        await asyncio.sleep(min(0.1, remaining))


async def write_json(runtime: Runtime[ResearchContext], state: Any, stage_key: str, payload: Any) -> str:
    """Write the stage's artifact (stages.py) into the run's folder, as JSON."""
    stage = get_stage(stage_key)
    path = f"{state['artifact_dir']}/{stage.artifact}"
    await runtime.context.tools.write_artifact(
        stage=stage_key,
        receipt_key=stage.receipt_key,
        relative_path=path,
        content=json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
    )
    return path


def message(stage: str, text: str, **fields: Any) -> None:
    emit({"event": "message", "stage": stage, "text": text, **fields})


def answers_note(stage: str, step: str, result: LLMCallResult) -> dict[str, Any]:
    """The state update recording what the model did in one LLM step (and a message if it fell back)."""
    fallback = result.fallback
    if fallback is not None:
        message(
            stage,
            f"{step}: the model's answer was unusable, so this step used its extractive method "
            f"({fallback.reason}).",
            fallback=fallback.to_dict(),
        )
    entry = {
        "stage": stage,
        "answers": len(result.answers),
        "unusable": result.unusable,
        "fallback": fallback.reason if fallback else None,
    }
    return {step: entry}
