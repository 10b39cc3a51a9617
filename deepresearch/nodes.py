"""The graph's nodes. Each business stage reads state, calls tools (behind receipts), writes its artifact
and returns a state update. The extractive engine and the LLM engine share every step but the model calls."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from langgraph.runtime import Runtime

import prompts
from deepresearch import compose
from deepresearch.extractive import BM25, chunk_passages, decompose_question, keywords
from deepresearch.schemas import Critique, Reflection, ResearchPlan, ReviewerFindings, ScreeningResult
from deepresearch.state import QueryTask, ReportState, ReviewerTask, SearchState
from deepresearch.toolrun import RunCancelled, StageError, emit
from stages import get_stage
from tools import ResearchContext

logger = logging.getLogger(__name__)

Node = Callable[..., Awaitable[dict[str, Any]]]
MAX_SUB_QUESTIONS = 6
CANDIDATES_PER_SUB_QUESTION = 8
EVIDENCE_PER_SUB_QUESTION = 4
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


async def _write_json(
    runtime: Runtime[ResearchContext], state: Any, stage_key: str, name: str, payload: Any
) -> str:
    path = f"{state['artifact_dir']}/{name}"
    await runtime.context.tools.write_artifact(
        stage=stage_key,
        receipt_key=get_stage(stage_key).receipt_key,
        relative_path=path,
        content=json.dumps(payload, ensure_ascii=False, indent=2) + "\n",
    )
    return path


def _message(stage: str, text: str, **fields: Any) -> None:
    emit({"event": "message", "stage": stage, "text": text, **fields})


# --- 1. plan_research ----------------------------------------------------------------------------
@business_stage("plan_research")
async def plan_research(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools, options = runtime.context.tools, state["options"]
    question = state["question"]
    if state["engine"] == "llm":
        result = await tools.llm_structured(
            stage="plan_research",
            receipt_key=get_stage("plan_research").receipt_key,
            prompt_id=prompts.PLAN.id,
            schema=ResearchPlan,
            messages=prompts.PLAN.messages(
                question=question,
                max_sub_questions=MAX_SUB_QUESTIONS,
                queries_per_round=options["queries_per_round"],
            ),
        )
        plan: ResearchPlan = result.value
        sub_questions, queries, rationale = plan.sub_questions, plan.queries, plan.rationale
    else:
        sub_questions, queries = decompose_question(question, options["queries_per_round"])
        rationale = "Extractive mode: sub-questions and queries derived from the question's keywords."
    queries = queries[: options["queries_per_round"]]
    plan_out = {
        "sub_questions": sub_questions[:MAX_SUB_QUESTIONS],
        "queries": queries,
        "rationale": rationale,
    }
    await _write_json(runtime, state, "plan_research", "plan.json", {"question": question, **plan_out})
    _message(
        "plan_research", f"Planned {len(plan_out['sub_questions'])} sub-questions and {len(queries)} queries."
    )
    return {
        "plan": plan_out,
        "pending_queries": queries,
        "round": 0,
        "stage_notes": {
            "plan_research": f"{len(plan_out['sub_questions'])} sub-questions, {len(queries)} queries"
        },
    }


# --- 2. search_web (subgraph: fan-out of query_agent, then reduce_queries) ------------------------
async def query_agent(task: QueryTask, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    outcome = await runtime.context.tools.web_search(
        stage="search_web",
        receipt_key=get_stage("search_web").receipt_key,
        query=task["query"],
        max_results=task["max_results"],
    )
    results = [
        {**result.model_dump(), "queries": [task["query"]], "rank": rank, "round": task["round"]}
        for rank, result in enumerate(outcome.results, start=1)
    ]
    failures = (
        [{"query": task["query"], "round": task["round"], "failures": outcome.failures}]
        if outcome.failures
        else []
    )
    return {"search_results": results, "queries_done": [task["query"]], "search_failures": failures}


@business_stage("search_web")
async def reduce_queries(state: SearchState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    round_no = state.get("round", 0) + 1
    this_round = [r for r in state.get("search_results", []) if r.get("round") == round_no]
    if not state.get("search_results"):
        failures = [f for f in state.get("search_failures", []) if f.get("round") == round_no]
        detail = (
            "; ".join(f"{f['query']!r}: {f['failures']}" for f in failures) or "every query returned nothing"
        )
        raise StageError(
            "search_web",
            f"no search results at all ({detail}). Configure a search provider "
            "or a corpus (see README) and resume the run.",
        )
    await _write_json(
        runtime,
        state,
        "search_web",
        "search-results.json",
        {
            "rounds": round_no,
            "queries": state.get("queries_done", []),
            "results": state.get("search_results", []),
            "failures": state.get("search_failures", []),
        },
    )
    note = f"round {round_no}: {len(this_round)} new results, {len(state.get('search_results', []))} in total"
    _message("search_web", f"Search {note}.", round=round_no)
    return {"round": round_no, "pending_queries": [], "stage_notes": {"search_web": note}}


# --- 3. fetch_sources ----------------------------------------------------------------------------
def _fetch_priority(result: dict[str, Any]) -> tuple[int, int, int]:
    return (-len(result.get("queries", [])), result.get("rank", 99), result.get("round", 0))


@business_stage("fetch_sources")
async def fetch_sources(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools = runtime.context.tools
    done = {s["url"] for s in state.get("sources", [])} | {f["url"] for f in state.get("fetch_failures", [])}
    candidates = sorted(
        (r for r in state.get("search_results", []) if r["url"] not in done), key=_fetch_priority
    )
    chosen = candidates[: state["options"]["sources_to_fetch"]]
    receipt_key = get_stage("fetch_sources").receipt_key
    # Parallel; WebFetcher bounds concurrency per run and per host.
    outcomes = await asyncio.gather(
        *(tools.fetch(stage="fetch_sources", receipt_key=receipt_key, url=r["url"]) for r in chosen),
        return_exceptions=True,
    )
    for outcome in outcomes:  # a cancel or a stage error stops the stage; a failed URL does not
        if isinstance(outcome, BaseException) and not isinstance(outcome, Exception):
            raise outcome
        if isinstance(outcome, StageError | RunCancelled):  # incl. a budget reached: the run stops
            raise outcome
    next_n = len(state.get("sources", [])) + 1
    sources, failures = [], []
    for result, outcome in zip(chosen, outcomes, strict=True):
        if isinstance(outcome, Exception):
            failures.append(
                {
                    "url": result["url"],
                    "title": result.get("title"),
                    "error": f"{type(outcome).__name__}: {outcome}",
                }
            )
            continue
        if outcome.page is None:
            failures.append(
                {
                    "url": result["url"],
                    "title": result.get("title"),
                    "error": outcome.error,
                    "reason": outcome.reason,
                }
            )
            continue
        page = outcome.page
        sources.append(
            {
                "n": next_n,
                "id": f"S{next_n}",
                "url": result["url"],
                "final_url": page.url,
                "title": page.title or result.get("title") or result["url"],
                "domain": urlsplit(page.url).hostname or "local",
                "published": page.published or result.get("published"),
                "provider": result.get("provider"),
                "snippet": result.get("snippet", ""),
                "text": page.text,
                "extractor": page.extractor,
                "bytes": page.byte_size,
                "fetched_at": page.fetched_at,
                "round": state.get("round", 1),
            }
        )
        next_n += 1
    if not sources and not state.get("sources"):
        detail = "; ".join(f"{f['url']}: {f['error']}" for f in failures) or "no search results to fetch"
        raise StageError("fetch_sources", f"no source could be fetched ({detail})")
    all_sources = [*state.get("sources", []), *sources]
    await _write_json(
        runtime,
        state,
        "fetch_sources",
        "sources-fetched.json",
        {
            "sources": [
                {k: v for k, v in s.items() if k != "text"} | {"chars": len(s["text"])} for s in all_sources
            ],
            "failures": [*state.get("fetch_failures", []), *failures],
        },
    )
    note = f"{len(sources)} fetched, {len(failures)} failed ({len(all_sources)} sources in total)"
    _message("fetch_sources", f"Fetched sources: {note}.")
    return {"sources": sources, "fetch_failures": failures, "stage_notes": {"fetch_sources": note}}


# --- 4. screen_evidence --------------------------------------------------------------------------
def passages_of(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"passage_id": f"{s['id']}.{i}", "source_id": s["id"], "n": s["n"], "text": text}
        for s in sources
        for i, text in enumerate(chunk_passages(s["text"]), start=1)
    ]


@business_stage("screen_evidence")
async def screen_evidence(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools, question = runtime.context.tools, state["question"]
    sub_questions = state["plan"]["sub_questions"]
    passages = passages_of(state.get("sources", []))
    bm25 = BM25.from_texts(p["text"] for p in passages)
    focus = " ".join(keywords(question, 6))
    candidates_per_sq: list[list[tuple[float, dict[str, Any]]]] = []
    for sub_question in sub_questions:
        scores = bm25.scores(f"{sub_question} {focus}")
        ranked = sorted(zip(scores, passages, strict=True), key=lambda x: -x[0])
        candidates_per_sq.append(
            [(score, p) for score, p in ranked[:CANDIDATES_PER_SUB_QUESTION] if score > 0]
        )

    async def screen(index: int) -> list[dict[str, Any]]:
        candidates = candidates_per_sq[index]
        if state["engine"] != "llm" or not candidates:
            return [
                _evidence(index, sub_questions[index], p, score, None, "BM25 rank")
                for score, p in candidates[:EVIDENCE_PER_SUB_QUESTION]
            ]
        listing = "\n\n".join(f"[{p['passage_id']}] {p['text']}" for _, p in candidates)
        result = await tools.llm_structured(
            stage="screen_evidence",
            receipt_key=get_stage("screen_evidence").receipt_key,
            prompt_id=prompts.SCREEN.id,
            schema=ScreeningResult,
            messages=prompts.SCREEN.messages(
                question=question, sub_question=sub_questions[index], passages=listing
            ),
        )
        by_id = {p["passage_id"]: (score, p) for score, p in candidates}
        kept = sorted(
            (
                r
                for r in result.value.relevant
                if r.passage_id in by_id and r.relevance >= LLM_RELEVANCE_THRESHOLD
            ),
            key=lambda r: -r.relevance,
        )
        return [
            _evidence(
                index,
                sub_questions[index],
                by_id[r.passage_id][1],
                by_id[r.passage_id][0],
                r.relevance,
                r.reason,
            )
            for r in kept[:EVIDENCE_PER_SUB_QUESTION]
        ]

    semaphore = asyncio.Semaphore(runtime.context.settings.llm_concurrency)

    async def bounded(index: int) -> list[dict[str, Any]]:
        async with semaphore:
            return await screen(index)

    per_sq = await asyncio.gather(*(bounded(i) for i in range(len(sub_questions))))
    evidence = [item for group in per_sq for item in group]
    for number, item in enumerate(evidence, start=1):
        item["id"] = f"E{number}"
    await _write_json(
        runtime,
        state,
        "screen_evidence",
        "evidence-table.json",
        {"sub_questions": sub_questions, "evidence": evidence},
    )
    covered = sum(1 for group in per_sq if group)
    note = f"{len(evidence)} passages kept; {covered}/{len(sub_questions)} sub-questions covered"
    _message("screen_evidence", f"Screened evidence: {note}.")
    return {"evidence": evidence, "stage_notes": {"screen_evidence": note}}


def _evidence(
    index: int, sub_question: str, passage: dict[str, Any], score: float, relevance: float | None, reason: str
) -> dict[str, Any]:
    return {
        "sub_question_index": index,
        "sub_question": sub_question,
        "passage_id": passage["passage_id"],
        "source_id": passage["source_id"],
        "n": passage["n"],
        "passage": passage["text"],
        "bm25": round(score, 3),
        "relevance": relevance,
        "reason": reason,
    }


# --- reflection (not a business stage: decides whether to loop) -----------------------------------
def coverage(state: ReportState) -> list[tuple[str, int]]:
    sub_questions = state["plan"]["sub_questions"]
    distinct: list[set[str]] = [set() for _ in sub_questions]
    for item in state.get("evidence", []):
        distinct[item["sub_question_index"]].add(item["source_id"])
    return [(sq, len(ids)) for sq, ids in zip(sub_questions, distinct, strict=True)]


async def reflection(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    options, round_no = state["options"], state.get("round", 1)
    cov = coverage(state)
    thin = [sq for sq, count in cov if count < 2]
    at_cap = round_no >= options["max_research_loops"]
    done_queries = set(state.get("queries_done", []))
    if state["engine"] == "llm" and not at_cap:
        result = await runtime.context.tools.llm_structured(
            stage="reflection",
            receipt_key="deepresearch:reflection:v1",
            prompt_id=prompts.REFLECT.id,
            schema=Reflection,
            messages=prompts.REFLECT.messages(
                question=state["question"],
                max_queries=options["queries_per_round"],
                sub_questions="\n".join(f"- {sq}" for sq in state["plan"]["sub_questions"]),
                coverage="\n".join(f"- {sq}: {count}" for sq, count in cov),
                queries_done="\n".join(f"- {q}" for q in state.get("queries_done", [])),
            ),
        )
        verdict: Reflection = result.value
        sufficient, gaps, follow_ups = verdict.sufficient, verdict.knowledge_gaps, verdict.follow_up_queries
    else:
        sufficient = not thin
        gaps = [f"fewer than two independent sources for: {sq}" for sq in thin]
        follow_ups = [" ".join(keywords(sq, 6)) for sq in thin]
    follow_ups = [q for q in dict.fromkeys(follow_ups) if q and q not in done_queries]
    follow_ups = follow_ups[: options["queries_per_round"]]
    loop_again = not sufficient and not at_cap and bool(follow_ups)
    if at_cap:
        reason = f"loop cap reached ({round_no}/{options['max_research_loops']})"
        reason += "; coverage looks sufficient" if sufficient else f"; {len(thin)} sub-questions thin"
    elif sufficient:
        reason = "evidence sufficient"
    else:
        reason = f"{len(follow_ups)} gap-filling queries" if follow_ups else "no new queries to run"
    _message(
        "reflection", f"Reflection after round {round_no}: {reason}.", round=round_no, loop_again=loop_again
    )
    return {
        "reflection": {
            "round": round_no,
            "sufficient": sufficient,
            "knowledge_gaps": gaps,
            "follow_up_queries": follow_ups if loop_again else [],
            "loop_again": loop_again,
            "reason": reason,
        },
        "pending_queries": follow_ups if loop_again else [],
    }


# --- 5. analyze_findings (subgraph: fan-out of analysis_reviewer, then reduce_analysis) -----------
async def analysis_reviewer(task: ReviewerTask, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    reviewer = task["reviewer"]
    if task["engine"] != "llm":
        return {
            "findings": {
                reviewer: compose.extractive_review(reviewer, task["sub_questions"], task["evidence"])
            }
        }
    result = await runtime.context.tools.llm_structured(
        stage="analyze_findings",
        receipt_key=get_stage("analyze_findings").receipt_key,
        prompt_id=prompts.REVIEW.id,
        schema=ReviewerFindings,
        label=f"review: {reviewer.replace('_', ' ')}",
        messages=prompts.REVIEW.messages(
            role=prompts.REVIEWER_ROLES[reviewer],
            question=task["question"],
            sub_questions="\n".join(f"- {sq}" for sq in task["sub_questions"]),
            evidence=compose.evidence_listing(task["evidence"]),
        ),
    )
    findings: ReviewerFindings = result.value
    valid = {item["n"] for item in task["evidence"]}
    cleaned = [
        f.model_copy(update={"citations": [c for c in f.citations if c in valid]}) for f in findings.findings
    ]
    return {
        "findings": {
            reviewer: {
                **findings.model_dump(),
                "findings": [f.model_dump() for f in cleaned],
                "engine": "llm",
            }
        }
    }


@business_stage("analyze_findings")
async def reduce_analysis(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    findings = state.get("findings", {})
    await _write_json(runtime, state, "analyze_findings", "analysis.json", findings)
    total = sum(len(f.get("findings", [])) for f in findings.values())
    note = f"{len(findings)} reviewers, {total} findings"
    _message("analyze_findings", f"Analysis: {note}.")
    return {"stage_notes": {"analyze_findings": note}}


# --- 6. critic_review ----------------------------------------------------------------------------
@business_stage("critic_review")
async def critic_review(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    if state["engine"] == "llm":
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
        )
        critique = {**result.value.model_dump(), "engine": "llm"}
    else:
        critique = compose.extractive_critique(state)
    await _write_json(runtime, state, "critic_review", "critique.json", critique)
    note = f"{len(critique['issues'])} issues, {len(critique['suggestions'])} suggestions"
    _message("critic_review", f"Critic review: {note}.")
    return {"critique": critique, "stage_notes": {"critic_review": note}}


# --- 7. write_report, then finalize_report -------------------------------------------------------
@business_stage("write_report")
async def write_report(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools = runtime.context.tools
    stage = get_stage("write_report")
    if state["engine"] == "llm":
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
        )
        body = result.value
    else:
        body = compose.extractive_report_body(state)
    bundle = compose.build_report_bundle(state, body)
    files = {}
    for name, content in bundle.files.items():
        written = await tools.write_artifact(
            stage="write_report",
            receipt_key=stage.receipt_key,
            relative_path=f"{state['artifact_dir']}/{name}",
            content=content,
        )
        files[name] = {"path": written.relative_path, "sha256": written.sha256, "size": written.size}
    check = bundle.citation_check
    note = (
        f"report written; {check['citations_supported']}/{check['citations_checked']} citations supported, "
        f"{len(check['citations_removed'])} removed"
    )
    _message("write_report", f"Report: {note}.")
    return {
        "report": {
            "files": files,
            "citation_check": check,
            "sources_cited": bundle.cited,
            "report_path": files["deepresearch-report.md"]["path"],
        },
        "stage_notes": {"write_report": note},
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
    _message("finalize_report", f"Done. Report: {report.get('report_path')}")
    return {"report": {**report, "verified": True}}
