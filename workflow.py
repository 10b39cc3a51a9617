"""The research graph.

START → plan_research → review_plan → search_web → fetch_sources → screen_evidence → reflection
      → (search_web again with gap-filling queries | analyze_findings)
analyze_findings → (critic_review | write_report) ; critic_review → write_report → finalize_report → END

search_web and analyze_findings are subgraphs that fan out with Send: one LangGraph task per query and per
reviewer, so a cancel or crash mid-fan-out re-runs only the unfinished branches.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from deepresearch.graph import nodes
from deepresearch.graph.state import AnalysisState, QueryTask, ReportState, ReviewerTask, SearchState
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
    return "search_web" if state.get("reflection", {}).get("loop_again") else "analyze_findings"


def route_after_analysis(state: ReportState) -> str:
    return "critic_review" if state["options"].get("requires_critic_review", True) else "write_report"


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


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the research graph with an injected checkpointer (SQLite, Postgres or in-memory)."""
    builder = StateGraph(ReportState, context_schema=ResearchContext)
    builder.add_node("plan_research", nodes.plan_research)
    builder.add_node("review_plan", nodes.review_plan)
    builder.add_node("search_web", build_search_subgraph())
    builder.add_node("fetch_sources", nodes.fetch_sources)
    builder.add_node("screen_evidence", nodes.screen_evidence)
    builder.add_node("reflection", nodes.reflection)
    builder.add_node("analyze_findings", build_analysis_subgraph())
    builder.add_node("critic_review", nodes.critic_review)
    builder.add_node("write_report", nodes.write_report)
    builder.add_node("finalize_report", nodes.finalize_report)

    builder.add_edge(START, "plan_research")
    builder.add_edge("plan_research", "review_plan")
    builder.add_edge("review_plan", "search_web")
    builder.add_edge("search_web", "fetch_sources")
    builder.add_edge("fetch_sources", "screen_evidence")
    builder.add_edge("screen_evidence", "reflection")
    builder.add_conditional_edges("reflection", route_after_reflection, ["search_web", "analyze_findings"])
    builder.add_conditional_edges("analyze_findings", route_after_analysis, ["critic_review", "write_report"])
    builder.add_edge("critic_review", "write_report")
    builder.add_edge("write_report", "finalize_report")
    builder.add_edge("finalize_report", END)
    return builder.compile(checkpointer=checkpointer, name="deepresearch")
