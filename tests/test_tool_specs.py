"""The tool specs and the stage records: what receipts already stored in users' databases depend on (tool
names, receipt keys) stays as it was, and each stage fact is read from its one record."""

from __future__ import annotations

from typing import Any

import pytest

from deepresearch.engine.state_patch import StatePatch, plan_fork
from deepresearch.receipts.specs import FETCH_TOOLS, REUSABLE_TOOLS, TOOL_SPECS, ReceiptId
from stages import GRAPH_NODES, REPORT_STAGES, STAGE_KEYS, get_stage, node_before, stages_after

# receipt keys as releases before the specs computed them (sha256 of {"tool": name, "args": args}): a stored
# receipt is found only while these stay the same
STORED_KEYS = [
    ("web.search", {"query": "sqlite wal", "max_results": 5}, "01fab9e6339314e42aa48da65ba333c1"),
    ("web.fetch", {"url": "https://example.org/a"}, "a316d1028a9cfdbe440eb1c5657042040"),
    ("corpus.read", {"url": "corpus://notes/a.md"}, "0222e3e2243a388985a249690fa80e1e7"),
    (
        "llm.structured",
        {
            "prompt": "plan/v1",
            "model": "m",
            "messages": [{"role": "user", "content": "q"}],
            "schema": "ResearchPlan",
        },
        "a062da80eb201ac7fd2c2b4e4f11f5472",
    ),
    (
        "llm.complete",
        {"prompt": "report/v1", "model": "m", "messages": [{"role": "user", "content": "q"}]},
        "1f272210b183f6735e0fcc705845582ef",
    ),
    (
        "workspace.write",
        {"path": "research/x/plan.json", "sha256": "ab", "size": 2},
        "8fdae9fd38c89eab5410be9bd0aa3b3d9",
    ),
]


@pytest.mark.parametrize(("tool", "args", "stored"), STORED_KEYS, ids=[c[0] for c in STORED_KEYS])
def test_a_call_has_the_receipt_key_it_always_had(tool: str, args: dict[str, Any], stored: str) -> None:
    identity = ReceiptId.of("run", "deepresearch:plan:v1", TOOL_SPECS[tool], args)
    assert identity.tool == tool and identity.args_hash.startswith(stored)
    assert identity.row == ("run", "deepresearch:plan:v1", identity.args_hash)


def test_which_receipts_a_new_run_may_reuse() -> None:
    external = {"web.search", "web.fetch", "corpus.read", "llm.structured", "llm.complete"}
    assert set(REUSABLE_TOOLS) == external | {"mcp.search", "mcp.fetch"}
    assert set(FETCH_TOOLS) == {"web.fetch", "corpus.read"}
    budgets = {name: spec.budget.option if spec.budget else None for name, spec in TOOL_SPECS.items()}
    assert budgets == {
        "web.search": "max_search_calls",
        "web.fetch": "max_fetches",
        "corpus.read": None,  # the corpus is the run's own folder: no fetch limit counts it
        "llm.structured": "max_llm_tokens",
        "llm.complete": "max_llm_tokens",
        "workspace.write": None,
        # an MCP call is a sub-call of the web.search or web.fetch that asked for it: that call spends it
        "mcp.search": None,
        "mcp.fetch": None,
    }


def test_the_stage_records_say_order_outputs_artifacts_and_the_optional_critic() -> None:
    assert [n.key for n in GRAPH_NODES] == [*STAGE_KEYS[:4], "reflection", *STAGE_KEYS[4:]]
    # a fork recorded "as" this node runs the stage next
    assert {key: node_before(key) for key in STAGE_KEYS[1:]} == {
        "search_web": "review_plan",
        "fetch_sources": "search_web",
        "screen_evidence": "fetch_sources",
        "analyze_findings": "reflection",
        "critic_review": "analyze_findings",
        "write_report": "critic_review",
    }
    assert {s.key: s.outputs for s in REPORT_STAGES if s.outputs} == {
        "screen_evidence": ("evidence", "reflection"),
        "analyze_findings": ("findings",),
        "critic_review": ("critique",),
        "write_report": ("report",),
    }
    assert all(s.artifacts and s.artifact == s.artifacts[0] for s in REPORT_STAGES)
    assert get_stage("write_report").artifact == "deepresearch-report.md"
    assert [s.key for s in REPORT_STAGES if s.optional] == ["critic_review"]
    assert stages_after("analyze_findings", {"requires_critic_review": False}) == ["write_report"]
    assert stages_after("analyze_findings", {}) == ["critic_review", "write_report"]


def test_a_fork_turning_the_critic_on_runs_it_from_the_analysis() -> None:
    values = {"plan": {"sub_questions": ["a"], "queries": ["q"]}, "findings": {}, "critique": {"issues": []}}
    old = {"requires_critic_review": False, "reviewers": ["fact_reviewer"]}
    values["options"] = old
    plan = plan_fork(values, "write_report", StatePatch(), {**old, "requires_critic_review": True}, {})
    assert (plan.as_node, plan.seeded_stage) == ("analyze_findings", "analyze_findings")
    assert plan.stages_to_run == ["critic_review", "write_report"]
    assert plan.changes == ["critic review: on"] and "critique" not in plan.values
