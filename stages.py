"""The seven business safety points of a research run.

Each stage ends in a durable LangGraph checkpoint. ``receipt_key`` names the business object, the tool and
its version (``deepresearch:<object>:v<n>``); it is stable so receipts written by one release are reused by
the next. Bump the version only when a stage's result would no longer be valid to reuse.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReportStage:
    key: str
    title: str
    receipt_key: str
    tool_name: str
    description: str
    artifact: str | None = None
    """File the stage writes into the run's workspace (None: it writes the final set)."""


REPORT_STAGES: tuple[ReportStage, ...] = (
    ReportStage(
        "plan_research",
        "Plan the research",
        "deepresearch:plan:v1",
        "llm.plan",
        "Break the question into sub-questions and search queries.",
        "plan.json",
    ),
    ReportStage(
        "search_web",
        "Search the web and the corpus",
        "deepresearch:web_search:v1",
        "web.search",
        "Run every planned query in parallel across the search provider chain.",
        "search-results.json",
    ),
    ReportStage(
        "fetch_sources",
        "Fetch sources",
        "deepresearch:web_fetch:v1",
        "web.fetch",
        "Fetch the most promising results and extract their main text.",
        "sources-fetched.json",
    ),
    ReportStage(
        "screen_evidence",
        "Screen evidence",
        "deepresearch:evidence_screen:v1",
        "evidence.screen",
        "Rank passages against each sub-question and keep the relevant ones.",
        "evidence-table.json",
    ),
    ReportStage(
        "analyze_findings",
        "Analyse findings",
        "deepresearch:analysis:v1",
        "llm.analyze",
        "Independent reviewers read the evidence: facts, implications, risks.",
        "analysis.json",
    ),
    ReportStage(
        "critic_review",
        "Critic review",
        "deepresearch:critic:v1",
        "llm.critic",
        "A critic looks for gaps, single-source claims and unsupported statements.",
        "critique.json",
    ),
    ReportStage(
        "write_report",
        "Write the cited report",
        "deepresearch:report:v1",
        "workspace.write",
        "Write the report, check every citation against its source, save the artifacts.",
        None,
    ),
)

STAGES_BY_KEY: dict[str, ReportStage] = {stage.key: stage for stage in REPORT_STAGES}
STAGE_KEYS: tuple[str, ...] = tuple(stage.key for stage in REPORT_STAGES)

FINAL_ARTIFACTS: tuple[str, ...] = (
    "deepresearch-report.md",
    "deepresearch-report.html",
    "sources.json",
    "evidence.json",
    "research-state.json",
)


def get_stage(key: str) -> ReportStage:
    try:
        return STAGES_BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown stage {key!r}; stages are {', '.join(STAGE_KEYS)}") from None
