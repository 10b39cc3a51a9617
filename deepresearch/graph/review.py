"""review_plan: the graph's one human step. With option `review_plan` the run stops here at LangGraph's
`interrupt()` and waits, holding nothing, until a person answers through `Command(resume=...)`.

The node re-runs from its top when the run resumes, so nothing before the `interrupt()` call has a side
effect: it only reads the state. The edit's artifact is written after the answer arrives."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from deepresearch.graph.common import message, write_json
from deepresearch.graph.plan_edit import PlanDecision, PlanRejected, edited_plan, review_of
from deepresearch.graph.state import ReportState
from tools import ResearchContext

PLAN_REVIEW = "plan_review"


async def review_plan(state: ReportState, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    if not state["options"].get("review_plan"):
        return {}
    plan = state["plan"]
    answer = interrupt({"kind": PLAN_REVIEW, "plan": review_of(plan).model_dump()})
    # validated by the service before it resumed; validated again here, where it is used
    decision = PlanDecision.model_validate(answer)
    if decision.action == "reject":
        raise PlanRejected(f"plan rejected at review: {decision.reason or 'no reason given'}")
    if decision.action == "approve" or decision.plan is None:
        message("plan_research", "The plan was approved as planned.")
        return {"stage_notes": {"plan_review": "approved"}}
    new_plan = edited_plan(plan, decision.plan)
    await write_json(runtime, state, "plan_research", {"question": state["question"], **new_plan})
    message(
        "plan_research",
        f"The plan was edited at review: {len(new_plan['sub_questions'])} sub-questions, "
        f"{len(new_plan['queries'])} queries.",
    )
    return {
        "plan": new_plan,
        "pending_queries": list(new_plan["queries"]),
        "stage_notes": {"plan_review": "edited"},
    }
