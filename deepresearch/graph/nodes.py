"""The graph's nodes. Each business stage reads state, calls tools (behind receipts), writes its artifact
and returns a state update. The extractive engine and the LLM engine share every step but the model calls."""

from deepresearch.graph.common import InjectedFailure, business_stage
from deepresearch.graph.gather import (
    coverage,
    fetch_sources,
    plan_research,
    query_agent,
    reduce_queries,
    reflection,
    screen_evidence,
)
from deepresearch.graph.review import review_plan
from deepresearch.graph.synthesis import (
    analysis_reviewer,
    critic_review,
    finalize_report,
    reduce_analysis,
    write_report,
)

__all__ = [
    "InjectedFailure",
    "analysis_reviewer",
    "business_stage",
    "coverage",
    "critic_review",
    "fetch_sources",
    "finalize_report",
    "plan_research",
    "query_agent",
    "reduce_analysis",
    "reduce_queries",
    "reflection",
    "review_plan",
    "screen_evidence",
    "write_report",
]
