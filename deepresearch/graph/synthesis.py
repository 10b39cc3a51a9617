"""Synthesis nodes: the reviewer fan-out, critic_review, write_report and finalize_report."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langgraph.runtime import Runtime
from pydantic import ValidationError

import prompts
from deepresearch.graph.common import answers_note, business_stage, message, write_json
from deepresearch.graph.schemas import AnswerContext, Critique, ReportDraft, ReviewerFindings
from deepresearch.graph.state import ReportState, ReviewerTask
from deepresearch.llm.jsonparse import describe_validation_error
from deepresearch.receipts.runtime import StageError
from deepresearch.report import compose
from stages import get_stage
from tools import ResearchContext

logger = logging.getLogger(__name__)


def _plan_terms(task: ReviewerTask) -> tuple[str, dict[str, float] | None]:
    """The plan's topic and the corpus shares of the question's words (extractive plans carry them)."""
    return task.get("topic", ""), task.get("rarity")


# --- 5. analyze_findings (subgraph: fan-out of analysis_reviewer, then reduce_analysis) -----------
def _extractive_review(task: ReviewerTask) -> dict[str, Any]:
    """The reviewer's findings by the extractive method: its whole review without a model, or a model's
    unusable answer replaced."""
    return compose.extractive_review(
        task["reviewer"],
        task["sub_questions"],
        task["evidence"],
        task["question"],
        task.get("topic", ""),
        task.get("rarity"),
    )


async def analysis_reviewer(task: ReviewerTask, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    reviewer = task["reviewer"]
    if task["engine"] != "llm":
        return {"findings": {reviewer: _extractive_review(task)}}
    valid = {item["n"] for item in task["evidence"]}

    def extractive_review() -> ReviewerFindings:
        review = _extractive_review(task)
        return ReviewerFindings.model_validate({k: v for k, v in review.items() if k != "engine"})

    step = f"review: {reviewer}"
    result = await runtime.context.tools.llm_structured(
        stage="analyze_findings",
        receipt_key=get_stage("analyze_findings").receipt_key,
        prompt_id=prompts.REVIEW.id,
        schema=ReviewerFindings,
        step=step,
        fallback=extractive_review,
        context=AnswerContext(citations=frozenset(valid)),
        label=f"review: {reviewer.replace('_', ' ')}",
        messages=prompts.REVIEW.messages(
            role=prompts.REVIEWER_ROLES[reviewer],
            question=task["question"],
            sub_questions="\n".join(f"- {sq}" for sq in task["sub_questions"]),
            evidence=compose.evidence_listing(task["evidence"]),
        ),
    )
    findings: ReviewerFindings = result.value
    cleaned = [
        f.model_copy(update={"citations": [c for c in f.citations if c in valid]}) for f in findings.findings
    ]
    return {
        "findings": {
            reviewer: {
                **findings.model_dump(),
                "findings": [f.model_dump() for f in cleaned],
                "engine": "extractive (fallback)" if result.fallback else "llm",
            }
        },
        "model_answers": answers_note("analyze_findings", step, result),
    }


@business_stage("analyze_findings")
async def reduce_analysis(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    findings = state.get("findings", {})
    await write_json(runtime, state, "analyze_findings", findings)
    total = sum(len(f.get("findings", [])) for f in findings.values())
    note = f"{len(findings)} reviewers, {total} findings"
    message("analyze_findings", f"Analysis: {note}.")
    return {"stage_notes": {"analyze_findings": note}}


# --- 6. critic_review ----------------------------------------------------------------------------
@business_stage("critic_review")
async def critic_review(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    if state["engine"] == "llm":

        def extractive_critic() -> Critique:
            critique = compose.extractive_critique(state)
            return Critique.model_validate({k: v for k, v in critique.items() if k != "engine"})

        result = await runtime.context.tools.llm_structured(
            stage="critic_review",
            receipt_key=get_stage("critic_review").receipt_key,
            prompt_id=prompts.CRITIC.id,
            schema=Critique,
            messages=prompts.CRITIC.messages(
                question=state["question"],
                findings=compose.findings_listing(state.get("findings", {})),
                evidence=compose.evidence_listing(state.get("evidence", [])),
            ),
            step="critic",
            fallback=extractive_critic,
            context=AnswerContext(),
        )
        engine = "extractive (fallback)" if result.fallback else "llm"
        critique = {**result.value.model_dump(), "engine": engine}
        answers = answers_note("critic_review", "critic", result)
    else:
        critique = compose.extractive_critique(state)
    await write_json(runtime, state, "critic_review", critique)
    note = f"{len(critique['issues'])} issues, {len(critique['suggestions'])} suggestions"
    message("critic_review", f"Critic review: {note}.")
    return {"critique": critique, "stage_notes": {"critic_review": note}, "model_answers": answers}


# --- 7. write_report, then finalize_report -------------------------------------------------------
@business_stage("write_report")
async def write_report(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools = runtime.context.tools
    stage = get_stage("write_report")
    answers: dict[str, Any] = {}
    if state["engine"] == "llm":
        cited = AnswerContext(citations=frozenset(item["n"] for item in state.get("evidence", [])))

        def check(text: str) -> None:
            try:
                ReportDraft.model_validate({"markdown": text}, context=cited)
            except ValidationError as exc:
                raise ValueError(describe_validation_error(exc)) from None

        result = await tools.llm_text(
            stage="write_report",
            receipt_key=stage.receipt_key,
            prompt_id=prompts.REPORT.id,
            messages=prompts.REPORT.messages(
                question=state["question"],
                sub_questions="\n".join(f"- {sq}" for sq in state["plan"]["sub_questions"]),
                findings=compose.findings_listing(state.get("findings", {})),
                critique=prompts.as_json(state.get("critique", {})),
                evidence=compose.evidence_listing(
                    state.get("evidence", []), with_titles=state.get("sources")
                ),
            ),
            step="report",
            check=check,
            stream=True,
            fallback=lambda: compose.extractive_report_body(state),
        )
        body = result.value
        answers = answers_note("write_report", "report", result)
    else:
        body = compose.extractive_report_body(state)
    # the header tells what the model did in every step, this one included
    # the citation check reads the sources' texts, stored once by hash (not in the state)
    sources = await tools.source_texts("write_report", state.get("sources", []))
    # citation check and HTML rendering: CPU work, in the engine's worker processes
    bundle = await tools.cpu.run(
        compose.build_report_bundle,
        {**state, "sources": sources, "model_answers": {**state.get("model_answers", {}), **answers}},
        body,
        trusted=True,
    )
    # the five files at once: their receipts commit together (one fsync, not one per file)
    written = await asyncio.gather(
        *(
            tools.write_artifact(
                stage="write_report",
                receipt_key=stage.receipt_key,
                relative_path=f"{state['artifact_dir']}/{name}",
                content=content,
            )
            for name, content in bundle.files.items()
        )
    )
    files = {
        name: {"path": w.relative_path, "sha256": w.sha256, "size": w.size}
        for name, w in zip(bundle.files, written, strict=True)
    }
    check = bundle.citation_check
    note = (
        f"report written; {check['citations_supported']}/{check['citations_checked']} citations supported, "
        f"{len(check['citations_removed'])} removed"
    )
    message("write_report", f"Report: {note}.")
    return {
        "report": {
            "files": files,
            "citation_check": check,
            "sources_cited": bundle.cited,
            "report_path": files[stage.artifact]["path"],
        },
        "stage_notes": {"write_report": note},
        "model_answers": answers,
    }


async def finalize_report(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    """Verify the final artifacts on disk against the digests recorded when they were written."""
    workspace = runtime.context.tools.workspace
    report = state.get("report", {})
    bad = [
        name
        for name, info in report.get("files", {}).items()
        if await asyncio.to_thread(workspace.file_digest, info["path"]) != info["sha256"]
    ]
    if bad:
        raise StageError(
            "finalize_report",
            f"artifacts changed or missing on disk: {', '.join(bad)}; "
            "resume from the checkpoint before write_report to write them again",
        )
    checked = len(report.get("files", {}))
    message("finalize_report", f"Done: the {checked} final files match the digests recorded when written.")
    return {"report": {**report, "verified": True}}
