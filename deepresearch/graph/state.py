"""Graph state: the run's TypedDicts with explicit reducers, and the per-branch states used with Send."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, NotRequired, TypedDict


def merge_by(
    key: str,
) -> Callable[[list[dict[str, Any]] | None, list[dict[str, Any]] | None], list[dict[str, Any]]]:
    """Reducer: items with the same ``key`` are merged (right wins), first-seen order is kept.

    Idempotent, so a subgraph that hands back the whole list it was given cannot duplicate entries.
    """

    def reducer(
        left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]]:
        merged: dict[Any, dict[str, Any]] = {item[key]: item for item in left or []}
        for item in right or []:
            merged[item[key]] = {**merged.get(item[key], {}), **item}
        return list(merged.values())

    reducer.__name__ = f"merge_by_{key}"
    return reducer


def merge_search_results(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Like merge_by("url"), but keeps every query that found a result (used to rank what to fetch)."""
    merged: dict[str, dict[str, Any]] = {item["url"]: item for item in left or []}
    for item in right or []:
        existing = merged.get(item["url"])
        if existing is None:
            merged[item["url"]] = item
            continue
        queries = list(dict.fromkeys([*existing.get("queries", []), *item.get("queries", [])]))
        merged[item["url"]] = {
            **existing,
            "queries": queries,
            "rank": min(existing.get("rank", 99), item.get("rank", 99)),
        }
    return list(merged.values())


merge_by_url = merge_by("url")
merge_by_query = merge_by("query")


def union(left: list[str] | None, right: list[str] | None) -> list[str]:
    return list(dict.fromkeys([*(left or []), *(right or [])]))


def merge_dict(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    return {**(left or {}), **(right or {})}


class ReportState(TypedDict, total=False):
    # identity and shape of the run (set once by the input)
    run_id: str
    question: str
    options: dict[str, Any]
    engine: str
    artifact_dir: str
    # plan_research
    plan: dict[str, Any]
    # search_web (one round per pass through the loop)
    round: int
    pending_queries: list[str]
    queries_done: Annotated[list[str], union]
    search_results: Annotated[list[dict[str, Any]], merge_search_results]
    search_failures: Annotated[list[dict[str, Any]], merge_by_query]
    # fetch_sources
    sources: Annotated[list[dict[str, Any]], merge_by_url]
    fetch_failures: Annotated[list[dict[str, Any]], merge_by_url]
    # screen_evidence and reflection
    evidence: list[dict[str, Any]]
    reflection: dict[str, Any]
    # analyze_findings, critic_review, write_report, finalize_report
    findings: Annotated[dict[str, Any], merge_dict]
    critique: dict[str, Any]
    report: dict[str, Any]
    stage_notes: Annotated[dict[str, str], merge_dict]
    # per LLM step (plan, each screening, each reflection, each reviewer, critic, report): how many
    # answers the model gave, how many were unusable, and whether the step fell back to its extractive method
    model_answers: Annotated[dict[str, Any], merge_dict]


class SearchState(TypedDict, total=False):
    """State of the web_search subgraph (a subset of ReportState's keys)."""

    question: str
    options: dict[str, Any]
    artifact_dir: str
    round: int
    pending_queries: list[str]
    queries_done: Annotated[list[str], union]
    search_results: Annotated[list[dict[str, Any]], merge_search_results]
    search_failures: Annotated[list[dict[str, Any]], merge_by_query]
    stage_notes: Annotated[dict[str, str], merge_dict]


class QueryTask(TypedDict):
    """One branch of the search fan-out."""

    query: str
    round: int
    max_results: int


class AnalysisState(TypedDict, total=False):
    """State of the analysis subgraph."""

    question: str
    options: dict[str, Any]
    engine: str
    artifact_dir: str
    plan: dict[str, Any]
    evidence: list[dict[str, Any]]
    findings: Annotated[dict[str, Any], merge_dict]
    stage_notes: Annotated[dict[str, str], merge_dict]
    model_answers: Annotated[dict[str, Any], merge_dict]


class ReviewerTask(TypedDict):
    """One branch of the analysis fan-out: a reviewer reading the evidence table."""

    reviewer: str
    question: str
    engine: str
    sub_questions: list[str]
    evidence: list[dict[str, Any]]
    topic: NotRequired[str]  # the plan's topic (extractive plans name one)
    rarity: NotRequired[dict[str, float]]  # share of the corpus's documents (passages) holding each
