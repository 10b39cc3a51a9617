"""The seven business safety points of a research run, and the graph's order.

Each stage ends in a durable LangGraph checkpoint. ``receipt_key`` names the business object, the tool and
its version (``deepresearch:<object>:v<n>``); it is stable so receipts written by one release are reused by
the next. Bump the version only when a stage's result would no longer be valid to reuse.

Every fact about a stage is written here once: its place in the graph (GRAPH_ORDER), the state keys its
result replaces, the files it writes and when the run's options skip it. The graph (workflow.py), forks
(deepresearch/engine/state_patch.py), the run's views (deepresearch/service/views.py) and the workbench
(/research/config.json) read them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Options = Mapping[str, Any]
"""A run's options as the graph's state holds them (ResearchOptions.model_dump())."""


@dataclass(frozen=True, slots=True)
class ReportStage:
    """A business stage: a node of the graph that ends in a checkpoint a run can be resumed or forked from."""

    key: str
    title: str
    receipt_key: str
    tool_name: str
    """The name of the stage's own ``tool_call``/``tool_result`` events (its calls have their tools')."""
    description: str
    short: str
    """One word for tight places (the workbench's graph)."""
    headline: str
    """What a person is told while the stage runs."""
    artifacts: tuple[str, ...]
    """Files the stage writes into the run's folder; the first is the one its ``tool_result`` names."""
    outputs: tuple[str, ...] = ()
    """State keys the stage's result replaces: a fork that runs the stage again drops them first, so
    nothing stale reaches the report. (Keys it merges into - search results, sources - are kept: running
    the stage again adds to them.)"""
    skipped_when: Callable[[Options], bool] | None = None
    """When this holds for the run's options the graph passes the stage by (None: it always runs)."""
    reruns_on: tuple[str, ...] = ()
    """Options a fork may change that make it run this stage (and every one after it) again."""

    @property
    def artifact(self) -> str:
        """The file the stage's ``tool_result`` event points at."""
        return self.artifacts[0]

    @property
    def optional(self) -> bool:
        return self.skipped_when is not None

    def runs_with(self, options: Options) -> bool:
        return self.skipped_when is None or not self.skipped_when(options)


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A node of the graph as clients show it: the business stages plus the reflection loop."""

    key: str
    title: str
    short: str
    description: str
    headline: str
    business: bool
    artifacts: tuple[str, ...] = ()
    """Files it writes into the run's folder (the business stage's ``artifacts``)."""


def _without_critic(options: Options) -> bool:
    return not options.get("requires_critic_review", True)


FINAL_ARTIFACTS: tuple[str, ...] = (
    "deepresearch-report.md",
    "deepresearch-report.html",
    "sources.json",
    "evidence.json",
    "research-state.json",
)
"""write_report's files (report/compose.py writes them), the report first."""

REPORT_STAGES: tuple[ReportStage, ...] = (
    ReportStage(
        "plan_research",
        "Plan the research",
        "deepresearch:plan:v1",
        "llm.plan",
        "Break the question into sub-questions and search queries.",
        "Plan",
        "Planning: breaking the question into sub-questions and search queries.",
        ("plan.json",),
    ),
    ReportStage(
        "search_web",
        "Search for sources",
        "deepresearch:web_search:v1",
        "web.search",
        "Run every planned query in parallel across the search provider chain.",
        "Search",
        "Searching for sources.",
        ("search-results.json",),
    ),
    ReportStage(
        "fetch_sources",
        "Fetch sources",
        "deepresearch:web_fetch:v1",
        "web.fetch",
        "Fetch the most promising results and extract their main text.",
        "Fetch",
        "Fetching and reading the most promising sources.",
        ("sources-fetched.json",),
    ),
    ReportStage(
        "screen_evidence",
        "Screen evidence",
        "deepresearch:evidence_screen:v1",
        "evidence.screen",
        "Rank passages against each sub-question and keep the relevant ones.",
        "Screen",
        "Screening passages against each sub-question.",
        ("evidence-table.json",),
        # the reflection after it decides again on the new evidence
        outputs=("evidence", "reflection"),
    ),
    ReportStage(
        "analyze_findings",
        "Analyse findings",
        "deepresearch:analysis:v1",
        "llm.analyze",
        "Independent reviewers read the evidence: facts, implications, risks.",
        "Analyse",
        "Reviewers are analysing the evidence.",
        ("analysis.json",),
        outputs=("findings",),
        reruns_on=("reviewers",),
    ),
    ReportStage(
        "critic_review",
        "Critic review",
        "deepresearch:critic:v1",
        "llm.critic",
        "A critic looks for gaps, single-source claims and unsupported statements.",
        "Critic",
        "A critic is checking the findings for gaps and unsupported claims.",
        ("critique.json",),
        outputs=("critique",),
        skipped_when=_without_critic,
        reruns_on=("requires_critic_review",),
    ),
    ReportStage(
        "write_report",
        "Write the cited report",
        "deepresearch:report:v1",
        "workspace.write",
        "Write the report, check every citation against its source, save the artifacts.",
        "Write",
        "Writing the report and checking every citation against its source.",
        FINAL_ARTIFACTS,
        outputs=("report",),
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
REVIEW_PLAN = "review_plan"
"""Not a business stage: passes through, or waits for a person's review of the plan (option review_plan)."""
FINALIZE = "finalize_report"
"""Not a business stage: checks the final files on disk against their recorded digests."""

GRAPH_ORDER: tuple[str, ...] = (
    "plan_research",
    REVIEW_PLAN,
    "search_web",
    "fetch_sources",
    "screen_evidence",
    REFLECTION.key,
    "analyze_findings",
    "critic_review",
    "write_report",
    FINALIZE,
)
"""Every node of the graph in the order it runs: each runs after the one before it, a stage the run's
options skip passes to the next, and the reflection may send the run back to search_web for another
round (workflow.py wires it so)."""

STAGES_BY_KEY: dict[str, ReportStage] = {stage.key: stage for stage in REPORT_STAGES}
STAGE_KEYS: tuple[str, ...] = tuple(stage.key for stage in REPORT_STAGES)
if tuple(key for key in GRAPH_ORDER if key in STAGES_BY_KEY) != STAGE_KEYS:
    raise ValueError(f"GRAPH_ORDER must hold every stage, in the order of REPORT_STAGES: {STAGE_KEYS}")


def _node(stage: ReportStage) -> GraphNode:
    return GraphNode(
        stage.key, stage.title, stage.short, stage.description, stage.headline, True, stage.artifacts
    )


_SHOWN = {**{stage.key: _node(stage) for stage in REPORT_STAGES}, REFLECTION.key: REFLECTION}
GRAPH_NODES: tuple[GraphNode, ...] = tuple(_SHOWN[key] for key in GRAPH_ORDER if key in _SHOWN)
"""In graph order: search, fetch and screen loop through the reflection back to search."""


def get_stage(key: str) -> ReportStage:
    try:
        return STAGES_BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown stage {key!r}; stages are {', '.join(STAGE_KEYS)}") from None


def node_before(key: str) -> str:
    """The graph node whose outgoing edge leads to ``key``: a state recorded as that node runs ``key``
    next (LangGraph's update_state(as_node=...); a skipped stage passes on to the one after it)."""
    return GRAPH_ORDER[GRAPH_ORDER.index(key) - 1]


def node_after(key: str) -> str | None:
    """The graph node that runs after ``key`` (None after the last)."""
    index = GRAPH_ORDER.index(key) + 1
    return GRAPH_ORDER[index] if index < len(GRAPH_ORDER) else None


def stages_after(key: str, options: Options) -> list[str]:
    """The business stages after the stage ``key`` that run with these options, in order."""
    return [stage.key for stage in REPORT_STAGES[STAGE_KEYS.index(key) + 1 :] if stage.runs_with(options)]


def reflection_ahead(key: str) -> bool:
    """Whether the reflection still comes after the stage ``key``: a run resumed there may search again."""
    return GRAPH_ORDER.index(key) < GRAPH_ORDER.index(REFLECTION.key)
