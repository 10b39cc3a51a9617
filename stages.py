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
    short: str
    """One word for tight places (the workbench's graph)."""
    headline: str
    """What a person is told while the stage runs."""
    artifact: str | None = None
    """File the stage writes into the run's workspace (None: it writes the final set)."""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A node of the graph as clients show it: the business stages plus the reflection loop."""

    key: str
    title: str
    short: str
    description: str
    headline: str
    business: bool


REPORT_STAGES: tuple[ReportStage, ...] = (
    ReportStage(
        "plan_research",
        "Plan the research",
        "deepresearch:plan:v1",
        "llm.plan",
        "Break the question into sub-questions and search queries.",
        "Plan",
        "Planning: breaking the question into sub-questions and search queries.",
        "plan.json",
    ),
    ReportStage(
        "search_web",
        "Search the web and the corpus",
        "deepresearch:web_search:v1",
        "web.search",
        "Run every planned query in parallel across the search provider chain.",
        "Search",
        "Searching for sources.",
        "search-results.json",
    ),
    ReportStage(
        "fetch_sources",
        "Fetch sources",
        "deepresearch:web_fetch:v1",
        "web.fetch",
        "Fetch the most promising results and extract their main text.",
        "Fetch",
        "Fetching and reading the most promising sources.",
        "sources-fetched.json",
    ),
    ReportStage(
        "screen_evidence",
        "Screen evidence",
        "deepresearch:evidence_screen:v1",
        "evidence.screen",
        "Rank passages against each sub-question and keep the relevant ones.",
        "Screen",
        "Screening passages against each sub-question.",
        "evidence-table.json",
    ),
    ReportStage(
        "analyze_findings",
        "Analyse findings",
        "deepresearch:analysis:v1",
        "llm.analyze",
        "Independent reviewers read the evidence: facts, implications, risks.",
        "Analyse",
        "Reviewers are analysing the evidence.",
        "analysis.json",
    ),
    ReportStage(
        "critic_review",
        "Critic review",
        "deepresearch:critic:v1",
        "llm.critic",
        "A critic looks for gaps, single-source claims and unsupported statements.",
        "Critic",
        "A critic is checking the findings for gaps and unsupported claims.",
        "critique.json",
    ),
    ReportStage(
        "write_report",
        "Write the cited report",
        "deepresearch:report:v1",
        "workspace.write",
        "Write the report, check every citation against its source, save the artifacts.",
        "Write",
        "Writing the report and checking every citation against its source.",
        None,
    ),
)

REFLECTION = GraphNode(
    "reflection",
    "Reflect on coverage",
    "Reflect",
    "Is the evidence sufficient, or is another search round needed?",
    "Reflecting: is the evidence sufficient, or is another search round needed?",
    business=False,
)


def _node(stage: ReportStage) -> GraphNode:
    return GraphNode(stage.key, stage.title, stage.short, stage.description, stage.headline, business=True)


GRAPH_NODES: tuple[GraphNode, ...] = (
    *(_node(stage) for stage in REPORT_STAGES[:4]),
    REFLECTION,
    *(_node(stage) for stage in REPORT_STAGES[4:]),
)
"""In graph order: search, fetch and screen loop through the reflection back to search."""

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
