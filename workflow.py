"""The research graph.

START → plan_research → review_plan → search_web → fetch_sources → screen_evidence → reflection
      → (search_web again with gap-filling queries | analyze_findings)
analyze_findings → (critic_review | write_report) ; critic_review → write_report → finalize_report → END

The order and which stages the run's options skip are stages.py's (GRAPH_ORDER, ``skipped_when``); this
module gives each node its code and wires them in that order. search_web and analyze_findings are subgraphs
that fan out with Send: one LangGraph task per query and per reviewer, so a cancel or crash mid-fan-out
re-runs only the unfinished branches.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from deepresearch.graph import nodes
from deepresearch.graph.state import AnalysisState, QueryTask, ReportState, ReviewerTask, SearchState
from stages import GRAPH_ORDER, REFLECTION, STAGES_BY_KEY, ReportStage, node_after
from tools import ResearchContext

__all__ = ["AnalysisState", "QueryTask", "ReportState", "ReviewerTask", "SearchState", "build_graph"]


def fan_out_queries(state: SearchState) -> list[Send]:
    options = state["options"]
    round_no = state.get("round", 0) + 1
    queries = state.get("pending_queries") or []
    if not queries:
        return [Send("reduce_queries", state)]
    return [
        Send("query_agent", QueryTask(query=q, round=round_no, max_results=options["results_per_query"]))
        for q in queries
    ]


def fan_out_reviewers(state: AnalysisState) -> list[Send]:
    sub_questions = state["plan"]["sub_questions"]
    return [
        Send(
            "analysis_reviewer",
            ReviewerTask(
                reviewer=name,
                question=state["question"],
                engine=state["engine"],
                sub_questions=sub_questions,
                evidence=state.get("evidence", []),
                topic=state["plan"].get("topic", ""),
                rarity=state["plan"].get("rarity", {}),
            ),
        )
        for name in state["options"]["reviewers"]
    ]


def route_after_reflection(state: ReportState) -> str:
    """Another search round when the reflection found gaps to search for, else on (to analyze_findings)."""
    return "search_web" if state.get("reflection", {}).get("loop_again") else _AFTER_REFLECTION


_AFTER_REFLECTION = node_after(REFLECTION.key) or END


def route_to(stage: ReportStage, past: str) -> Callable[[ReportState], str]:
    """The edge into an optional stage: to it, or - when the run's options skip it - past it."""

    def route(state: ReportState) -> str:
        return stage.key if stage.runs_with(state["options"]) else past

    route.__name__ = f"route_to_{stage.key}"
    return route


def build_search_subgraph() -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(SearchState, context_schema=ResearchContext)
    builder.add_node("query_agent", nodes.query_agent)
    builder.add_node("reduce_queries", nodes.reduce_queries)
    builder.add_conditional_edges(START, fan_out_queries, ["query_agent", "reduce_queries"])
    builder.add_edge("query_agent", "reduce_queries")
    builder.add_edge("reduce_queries", END)
    return builder.compile(name="web_search")


def build_analysis_subgraph() -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(AnalysisState, context_schema=ResearchContext)
    builder.add_node("analysis_reviewer", nodes.analysis_reviewer)
    builder.add_node("reduce_analysis", nodes.reduce_analysis)
    builder.add_conditional_edges(START, fan_out_reviewers, ["analysis_reviewer"])
    builder.add_edge("analysis_reviewer", "reduce_analysis")
    builder.add_edge("reduce_analysis", END)
    return builder.compile(name="analysis")


def graph_nodes() -> dict[str, Any]:
    """The code of every node of stages.GRAPH_ORDER (a new stage's node goes here)."""
    return {
        "plan_research": nodes.plan_research,
        "review_plan": nodes.review_plan,
        "search_web": build_search_subgraph(),
        "fetch_sources": nodes.fetch_sources,
        "screen_evidence": nodes.screen_evidence,
        "reflection": nodes.reflection,
        "analyze_findings": build_analysis_subgraph(),
        "critic_review": nodes.critic_review,
        "write_report": nodes.write_report,
        "finalize_report": nodes.finalize_report,
    }


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the research graph with an injected checkpointer (SQLite, Postgres or in-memory)."""
    builder = StateGraph(ReportState, context_schema=ResearchContext)
    code = graph_nodes()
    for key in GRAPH_ORDER:
        builder.add_node(key, code[key])

    builder.add_edge(START, GRAPH_ORDER[0])
    for before, key in pairwise(GRAPH_ORDER):
        stage = STAGES_BY_KEY.get(key)
        if before == REFLECTION.key:  # another search round, or on
            builder.add_conditional_edges(before, route_after_reflection, ["search_web", key])
        elif stage is not None and stage.optional and (past := node_after(key)) is not None:
            builder.add_conditional_edges(before, route_to(stage, past), [key, past])
        else:
            builder.add_edge(before, key)
    builder.add_edge(GRAPH_ORDER[-1], END)
    return builder.compile(checkpointer=checkpointer, name="deepresearch")
