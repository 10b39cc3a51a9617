"""Gathering nodes: plan_research, the search fan-out, fetch_sources, screen_evidence and reflection."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from langgraph.runtime import Runtime

import prompts
from deepresearch.extractive.asking.planning import keyword_plan, lookup_phrases, question_topic
from deepresearch.extractive.bm25 import term_weights
from deepresearch.extractive.reading.text import keywords
from deepresearch.extractive.screening import rank_sources, search_priors
from deepresearch.graph.common import (
    CANDIDATES_PER_SUB_QUESTION,
    EVIDENCE_PER_SUB_QUESTION,
    EXTRACTIVE_EVIDENCE_PER_SUB_QUESTION,
    EXTRACTIVE_MORE_SECTIONS,
    LLM_RELEVANCE_THRESHOLD,
    MAX_SUB_QUESTIONS,
    answers_note,
    business_stage,
    message,
    write_json,
)
from deepresearch.graph.schemas import (
    AnswerContext,
    Reflection,
    ResearchPlan,
    ScreenedPassage,
    ScreeningResult,
)
from deepresearch.graph.seeding import uncovered_queries
from deepresearch.graph.state import QueryTask, ReportState, SearchState
from deepresearch.receipts.runtime import RunCancelled, StageError
from deepresearch.report.render import samples_as_markdown
from deepresearch.search.corpus import CORPUS_SCHEME
from deepresearch.search.health import nothing_found
from deepresearch.store import DATABASE_UNAVAILABLE, LeaseLost
from stages import get_stage
from tools import ResearchContext

logger = logging.getLogger(__name__)


# --- 1. plan_research ----------------------------------------------------------------------------
@business_stage("plan_research")
async def plan_research(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools, options = runtime.context.tools, state["options"]
    question = state["question"]
    answers: dict[str, Any] = {}
    # how rare each phrase of the question is in the corpus: the planner's topic is the most specific one
    rarity = await tools.corpus.document_shares(lookup_phrases(question)) if tools.corpus else None
    topic = ""
    if state["engine"] == "llm":

        def fallback_plan() -> ResearchPlan:
            plan = keyword_plan(question, options["queries_per_round"], MAX_SUB_QUESTIONS, rarity)
            rationale = f"Keyword plan: the model's plan was unusable. {plan.rationale}"
            return ResearchPlan(sub_questions=plan.sub_questions, queries=plan.queries, rationale=rationale)

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
            step="plan",
            fallback=fallback_plan,
            context=AnswerContext(topic=question),
        )
        plan: ResearchPlan = result.value
        sub_questions, queries, rationale = plan.sub_questions, plan.queries, plan.rationale
        answers = answers_note("plan_research", "plan", result)
    else:
        keyword = keyword_plan(question, options["queries_per_round"], MAX_SUB_QUESTIONS, rarity)
        sub_questions, queries, rationale = keyword.sub_questions, keyword.queries, keyword.rationale
        topic = keyword.topic
    queries = queries[: options["queries_per_round"]]
    pending = queries
    if state.get("sources"):  # a follow-up: search only for what the sources it starts with miss
        seeded = await runtime.context.tools.source_texts("plan_research", state["sources"])
        pending = uncovered_queries(queries, seeded, state.get("queries_done", []))
        if len(pending) < len(queries):
            message(
                "plan_research",
                f"{len(queries) - len(pending)} of {len(queries)} queries are covered by the "
                f"{len(state['sources'])} sources this run starts with; searching {len(pending)}.",
            )
    plan_out = {
        "sub_questions": sub_questions[:MAX_SUB_QUESTIONS],
        "queries": queries,
        "rationale": rationale,
        # what screening and the reviewers take the question to be about (the keyword plan's topic), and how
        # common each of its words is in the corpus (a word on every page matches nothing in particular)
        "topic": topic or question_topic(question, rarity),
        "rarity": {word: round(share, 4) for word, share in (rarity or {}).items()},
    }
    await write_json(runtime, state, "plan_research", {"question": question, **plan_out})
    asked = _counted(len(plan_out["sub_questions"]), "sub-question")
    searched = _counted(len(queries), "query", "queries")
    message("plan_research", f"Planned {asked} and {searched}.")
    return {
        "plan": plan_out,
        "pending_queries": pending,
        "round": 0,
        "stage_notes": {"plan_research": f"{asked}, {searched}"},
        "model_answers": answers,
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
        corpus = bool(state["options"].get("corpus_dir"))
        raise StageError("search_web", nothing_found(failures, corpus=corpus))
    await write_json(
        runtime,
        state,
        "search_web",
        {
            "rounds": round_no,
            "queries": state.get("queries_done", []),
            "results": state.get("search_results", []),
            "failures": state.get("search_failures", []),
        },
    )
    note = f"round {round_no}: {len(this_round)} new results, {len(state.get('search_results', []))} in total"
    message("search_web", f"Search {note}.", round=round_no)
    return {"round": round_no, "pending_queries": [], "stage_notes": {"search_web": note}}


def _counted(count: int, noun: str, plural: str = "") -> str:
    """ "1 sub-question", "2 sub-questions", "1 query"."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


# --- 3. fetch_sources ----------------------------------------------------------------------------
LOCAL_READS = 2
"""A corpus document is on this machine: reading it costs no fetch (no fetch limit counts it: CORPUS_READ in
deepresearch/receipts/specs.py), so a round also reads the corpus results past the best `sources_to_fetch`,
up to LOCAL_READS times that many sources in all (the page that answers was often found by one query only,
and left unread behind pages that several queries found in passing: bench/quality/JOURNAL.md, session 17)."""


def _fetch_priority(result: dict[str, Any]) -> tuple[int, int, int]:
    return (-len(result.get("queries", [])), result.get("rank", 99), result.get("round", 0))


def _to_fetch(candidates: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    local = [r for r in candidates[limit:] if r["url"].startswith(CORPUS_SCHEME)]
    return candidates[:limit] + local[: (LOCAL_READS - 1) * limit]


@business_stage("fetch_sources")
async def fetch_sources(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools = runtime.context.tools
    done = {s["url"] for s in state.get("sources", [])} | {f["url"] for f in state.get("fetch_failures", [])}
    candidates = sorted(
        (r for r in state.get("search_results", []) if r["url"] not in done), key=_fetch_priority
    )
    chosen = _to_fetch(candidates, state["options"]["sources_to_fetch"])
    receipt_key = get_stage("fetch_sources").receipt_key
    # Parallel; WebFetcher bounds concurrency per run and per host.
    outcomes = await asyncio.gather(
        *(tools.fetch(stage="fetch_sources", receipt_key=receipt_key, url=r["url"]) for r in chosen),
        return_exceptions=True,
    )
    for outcome in outcomes:  # a cancel or a stage error stops the stage; a failed URL does not
        if isinstance(outcome, BaseException) and not isinstance(outcome, Exception):
            raise outcome
        # a budget reached, the run's lease lost to another process, the database gone: the run stops
        if isinstance(outcome, (StageError, RunCancelled, LeaseLost, *DATABASE_UNAVAILABLE)):
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
                # a corpus URL's first path segment is not a publisher
                "domain": "local"
                if page.url.startswith("corpus://")
                else urlsplit(page.url).hostname or "local",
                "published": page.published or result.get("published"),
                "provider": result.get("provider"),
                "snippet": result.get("snippet", ""),
                # the text is stored once by hash (tools.fetch); the state carries only the reference, so
                # the checkpoints that follow do not re-serialise every page
                "text_sha256": page.text_sha256,
                "chars": page.chars,
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
    await write_json(
        runtime,
        state,
        "fetch_sources",
        {
            "sources": [
                {k: v for k, v in s.items() if k != "text"} | {"chars": _chars(s)} for s in all_sources
            ],
            "failures": [*state.get("fetch_failures", []), *failures],
        },
    )
    note = f"{len(sources)} fetched, {len(failures)} failed ({len(all_sources)} sources in total)"
    message("fetch_sources", f"Fetched sources: {note}.")
    return {"sources": sources, "fetch_failures": failures, "stage_notes": {"fetch_sources": note}}


def _chars(source: dict[str, Any]) -> int:
    chars = source.get("chars")
    return chars if isinstance(chars, int) else len(source.get("text", ""))  # states from before the store


# --- 4. screen_evidence --------------------------------------------------------------------------
@business_stage("screen_evidence")
async def screen_evidence(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    tools, question, topic = runtime.context.tools, state["question"], state["plan"].get("topic", "")
    sub_questions = state["plan"]["sub_questions"]
    sources = await tools.source_texts("screen_evidence", state.get("sources", []))
    # cutting every page into passages and BM25 over them are the stage's CPU work: in the engine's
    # worker processes, off the loop (the extractive method - the extractive mode, or a screening that fell
    # back to it - also reads a wider pool)
    limits = [CANDIDATES_PER_SUB_QUESTION, CANDIDATES_PER_SUB_QUESTION + EXTRACTIVE_MORE_SECTIONS]
    found = search_priors(state.get("search_results", []), sources)  # how well the search ranked each
    weights = term_weights(state["plan"].get("rarity"))
    ranked = await tools.cpu.run(
        rank_sources, question, sub_questions, sources, limits, topic, found, weights, trusted=True
    )
    candidates_per_sq, wider_per_sq = ranked[0], ranked[-1]

    answers: dict[str, Any] = {}

    async def screen(index: int) -> list[dict[str, Any]]:
        candidates = candidates_per_sq[index]

        def extractive_pick() -> list[dict[str, Any]]:
            return _extractive_evidence(index, sub_questions[index], candidates, wider_per_sq[index])

        if state["engine"] != "llm" or not candidates:
            return extractive_pick()

        def bm25_screening() -> ScreeningResult:
            # the extractive method's choice, recorded in the receipt; relevance = BM25 score / best score
            top = candidates[0][0] or 1.0
            return ScreeningResult(
                relevant=[
                    ScreenedPassage(
                        passage_id=p["passage_id"], relevance=round(score / top, 3), reason="BM25 rank"
                    )
                    for score, p in candidates[:EVIDENCE_PER_SUB_QUESTION]
                ]
            )

        # a sample's lines as Markdown, not apart by the corpus text's mark (compose.readable)
        listing = "\n\n".join(f"[{p['passage_id']}] {samples_as_markdown(p['text'])}" for _, p in candidates)
        step = f"screen: sub-question {index + 1}"
        result = await tools.llm_structured(
            stage="screen_evidence",
            receipt_key=get_stage("screen_evidence").receipt_key,
            prompt_id=prompts.SCREEN.id,
            schema=ScreeningResult,
            messages=prompts.SCREEN.messages(
                question=question, sub_question=sub_questions[index], passages=listing
            ),
            step=step,
            fallback=bm25_screening,
            context=AnswerContext(passage_ids=frozenset(p["passage_id"] for _, p in candidates)),
        )
        answers.update(answers_note("screen_evidence", step, result))
        if result.fallback is not None:  # as wide as the extractive mode's: its reviewers read this too
            return extractive_pick()
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
    await write_json(
        runtime,
        state,
        "screen_evidence",
        {"sub_questions": sub_questions, "evidence": evidence},
    )
    covered = sum(1 for group in per_sq if group)
    note = f"{len(evidence)} passages kept; {covered}/{len(sub_questions)} sub-questions with evidence"
    message("screen_evidence", f"Screened evidence: {note}.")
    return {"evidence": evidence, "stage_notes": {"screen_evidence": note}, "model_answers": answers}


def _extractive_evidence(
    index: int, sub_question: str, candidates: list[tuple[float, Any]], wider: list[tuple[float, Any]]
) -> list[dict[str, Any]]:
    """The extractive evidence on a sub-question: its best passages, further sections of the pages they
    come from, and (on the question itself) the openings of the best page's sections."""
    ranked = [(s, p) for s, p in candidates if not p.get("lead")]
    kept = ranked[:EXTRACTIVE_EVIDENCE_PER_SUB_QUESTION]
    ids, pages = {p["passage_id"] for _, p in kept}, {p["n"] for _, p in kept}
    more = [(s, p) for s, p in wider if p["n"] in pages and p["passage_id"] not in ids and not p.get("lead")]
    kept += more[:EXTRACTIVE_MORE_SECTIONS]
    kept += [(s, p) for s, p in candidates if p.get("lead")]
    seen: set[str] = set()  # the first of two copies wins
    unique = [(s, p) for s, p in kept if not (p["passage_id"] in seen or seen.add(p["passage_id"]))]
    return [_evidence(index, sub_question, p, score, None, "BM25 rank") for score, p in unique]


def _evidence(
    index: int, sub_question: str, passage: dict[str, Any], score: float, relevance: float | None, reason: str
) -> dict[str, Any]:
    return {
        "sub_question_index": index,
        "sub_question": sub_question,
        "passage_id": passage["passage_id"],
        "source_id": passage["source_id"],
        "n": passage["n"],
        "title": passage["title"],
        "passage": passage["text"],
        "headings": passage["headings"],
        "bm25": round(score, 3),
        "relevance": relevance,
        "reason": (
            "answering section"
            if passage.get("answer")
            else "section opening of the best page"
            if passage.get("lead")
            else reason
        ),
        "lead": bool(passage.get("lead")),
        "page": passage.get("page"),
        "answer": passage.get("answer"),
    } | ({"term": passage["term"]} if passage.get("term") else {})


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

    def coverage_rule() -> Reflection:
        # built, not validated: "thin but nothing new to ask" is a fine verdict for the rule
        return Reflection.model_construct(
            sufficient=not thin,
            knowledge_gaps=[f"Fewer than two independent sources answer \u201c{sq}\u201d" for sq in thin],
            follow_up_queries=[" ".join(keywords(sq, 6)) for sq in thin],
        )

    answers: dict[str, Any] = {}
    verdict = coverage_rule()
    if state["engine"] == "llm" and not at_cap:
        step = f"reflection: round {round_no}"
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
            step=step,
            fallback=coverage_rule,
            context=AnswerContext(topic="\n".join([state["question"], *state["plan"]["sub_questions"]])),
        )
        verdict = result.value
        answers = answers_note("reflection", step, result)
    sufficient, gaps, follow_ups = verdict.sufficient, verdict.knowledge_gaps, verdict.follow_up_queries
    follow_ups = [q for q in dict.fromkeys(follow_ups) if q and q not in done_queries]
    follow_ups = follow_ups[: options["queries_per_round"]]
    loop_again = not sufficient and not at_cap and bool(follow_ups)
    if at_cap:
        reason = f"loop cap reached ({round_no}/{options['max_research_loops']})"
        reason += (
            "; coverage looks sufficient"
            if sufficient
            else f"; {_counted(len(thin), 'sub-question')} thin (fewer than two sources)"
        )
    elif sufficient:
        reason = "evidence sufficient"
    else:
        queries = _counted(len(follow_ups), "gap-filling query", "gap-filling queries")
        reason = queries if follow_ups else "no new queries to run"
    message(
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
        "model_answers": answers,
    }
