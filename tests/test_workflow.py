"""The research graph end to end against real scripted servers: shape, extractive and LLM runs, honesty."""

from __future__ import annotations

import json
import re
from pathlib import Path

from deepresearch.engine.core import open_engine
from deepresearch.store import EventRecord
from peers.research_llm import UNSUPPORTED_CLAIM
from stages import FINAL_ARTIFACTS, REPORT_STAGES
from tests.conftest import Servers
from workflow import build_graph

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"


def test_graph_shape() -> None:
    graph = build_graph().get_graph()
    edges = {(e.source, e.target) for e in graph.edges}
    assert {
        "__start__",
        "plan_research",
        "review_plan",
        "search_web",
        "fetch_sources",
        "screen_evidence",
        "reflection",
        "analyze_findings",
        "critic_review",
        "write_report",
        "finalize_report",
        "__end__",
    } <= set(graph.nodes)
    for edge in [
        ("__start__", "plan_research"),
        ("plan_research", "review_plan"),
        ("review_plan", "search_web"),
        ("search_web", "fetch_sources"),
        ("fetch_sources", "screen_evidence"),
        ("screen_evidence", "reflection"),
        ("reflection", "search_web"),
        ("reflection", "analyze_findings"),
        ("analyze_findings", "critic_review"),
        ("analyze_findings", "write_report"),
        ("critic_review", "write_report"),
        ("write_report", "finalize_report"),
        ("finalize_report", "__end__"),
    ]:
        assert edge in edges, edge
    sub = build_graph().get_graph(xray=1)
    sub_nodes = set(sub.nodes)
    assert {
        "search_web:query_agent",
        "search_web:reduce_queries",
        "analyze_findings:analysis_reviewer",
        "analyze_findings:reduce_analysis",
    } <= sub_nodes
    assert [s.key for s in REPORT_STAGES] == [
        "plan_research",
        "search_web",
        "fetch_sources",
        "screen_evidence",
        "analyze_findings",
        "critic_review",
        "write_report",
    ]


def _artifacts(settings_workspace: Path, artifact_dir: str) -> dict[str, Path]:
    base = settings_workspace / artifact_dir
    return {name: base / name for name in FINAL_ARTIFACTS}


def _assert_citations_resolve(report_md: str, sources: list[dict], fetched_urls: set[str]) -> set[int]:
    by_n = {s["n"]: s for s in sources}
    body = report_md.split("## Sources")[0]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    assert cited, "the report cites nothing"
    for n in cited:
        assert n in by_n, f"[{n}] does not resolve to sources.json"
        assert by_n[n]["url"] in fetched_urls
    for url in re.findall(r"https?://[^\s)>\]]+", report_md):
        assert any(url.startswith(u) or u.startswith(url) for u in fetched_urls), f"unseen URL {url}"
    return cited


async def test_extractive_run_end_to_end(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
    assert final.status == "completed", final.error
    assert final.engine == "extractive"
    files = _artifacts(settings.workspace_dir, final.artifact_dir or "")
    for name, path in files.items():
        assert path.is_file(), name
    report = files["deepresearch-report.md"].read_text()
    assert "Engine: **extractive**" in report
    state = json.loads(files["research-state.json"].read_text())
    rounds = state["rounds"]
    assert {1: " · 1 search round · ", 2: " · 2 search rounds · "}[rounds] in report  # not "round(s)"
    assert state["engine"] == "extractive"
    sources = json.loads(files["sources.json"].read_text())["sources"]
    fetched = {s["url"] for s in sources}
    assert all(url.startswith(servers.site_url) for url in fetched)
    _assert_citations_resolve(report, sources, fetched)
    html = files["deepresearch-report.html"].read_text()
    assert ("<script" not in html and 'href="#source-1"' in html) or "#source-" in html
    evidence = json.loads(files["evidence.json"].read_text())
    assert evidence["citation_check"]["citations_checked"] >= 1
    # every extractive finding is a verbatim quote of a fetched page
    from peers.static_site import ARTICLES

    page_text = " ".join(" ".join(paragraphs) for _, paragraphs in ARTICLES.values())
    analysis = json.loads((files["sources.json"].parent / "analysis.json").read_text())
    statements = [f["statement"] for review in analysis.values() for f in review["findings"]]
    assert statements
    for statement in statements:
        assert statement in page_text, statement
    # events: the contract order per stage and the engine label
    assert events[0].type == "run_status" and events[0].data["engine"] == "extractive"
    assert events[-1].type == "end" and events[-1].data["status"] == "completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    for stage in REPORT_STAGES:
        if stage.key == "critic_review" and not settings.requires_critic_review:
            continue
        kinds = [
            (e.type, e.data.get("parent_call_id") is None)
            for e in events
            if e.stage == stage.key and e.type in ("tool_call", "checkpoint", "tool_result")
        ]
        stage_level = [k for k, top in kinds if top]
        assert stage_level[0] == "tool_call", (stage.key, kinds)
        assert stage_level[-2:] == ["checkpoint", "tool_result"], (stage.key, stage_level)
    results = [e for e in events if e.type == "tool_result" and e.data.get("langgraph_checkpoint_id")]
    assert {e.stage for e in results} == {s.key for s in REPORT_STAGES}
    for result in results:
        assert result.data["ok"] is True and result.data["receipt_key"].startswith("deepresearch:")


async def test_llm_run_end_to_end_checks_citations(servers: Servers, tmp_path: Path) -> None:
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id)
        receipts = await engine.store.list_receipts(run.run_id, status="succeeded")
    assert final.status == "completed", final.error
    assert final.engine == "llm"
    files = _artifacts(settings.workspace_dir, final.artifact_dir or "")
    report = files["deepresearch-report.md"].read_text()
    sources = json.loads(files["sources.json"].read_text())["sources"]
    fetched = {s["url"] for s in sources}
    _assert_citations_resolve(report, sources, fetched)
    assert "[99]" not in report
    assert "evil.example" not in report
    unsupported = next(line for line in report.splitlines() if UNSUPPORTED_CLAIM in line)
    assert "[1]" not in unsupported and "unverified" in unsupported
    check = json.loads(files["evidence.json"].read_text())["citation_check"]
    reasons = {item["reason"] for item in check["citations_removed"]}
    assert reasons == {"no such source", "not supported"}
    calls = servers.llm.calls_by_prompt()
    assert calls["plan/v1"] == 1 and calls["report/v1"] == 1 and calls["critic/v1"] == 1
    assert calls["review/v1"] == 3
    assert final.usage["tokens"] > 0
    assert {r.receipt_key for r in receipts} >= {s.receipt_key for s in REPORT_STAGES}
