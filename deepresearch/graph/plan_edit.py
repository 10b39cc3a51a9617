"""The plan a person reviews before a run searches, and the edits they may make to it.

A run with `review_plan` stops after plan_research at LangGraph's `interrupt()` with a `PlanReview`; the
person answers approve, edit (a whole edited plan: sub-questions and queries added, removed, reordered or
reworded) or reject, which the graph receives through `Command(resume=...)` (docs/steering.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from deepresearch.receipts.runtime import RunCancelled

MAX_SUB_QUESTIONS = 6
MAX_QUERIES = 20
MAX_ITEM_CHARS = 300
MAX_RATIONALE_CHARS = 20_000
FIXED_SECTIONS_BEFORE = ("Summary",)
EDITED = "Edited by a person at plan review."
FIXED_SECTIONS_AFTER = ("Disagreements and risks", "Open questions", "Recommendations", "Sources")

Item = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ITEM_CHARS)]


def distinct(items: list[str]) -> list[str]:
    seen: set[str] = set()
    for item in items:
        if item.casefold() in seen:
            raise ValueError(f"listed twice: {item!r}; remove the repeat")
        seen.add(item.casefold())
    return items


def one_line(items: list[str]) -> list[str]:
    for item in items:
        if any(ch in item for ch in "\r\n\x00"):
            raise ValueError(f"{item[:40]!r}: one line each, no line breaks")
    return items


class PlanEdit(BaseModel):
    """An edited plan: the whole lists as they should be (so any add, remove, reorder or rewording)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    sub_questions: Annotated[
        list[Item],
        Field(min_length=1, max_length=MAX_SUB_QUESTIONS, description="Become the report's sections."),
        AfterValidator(one_line),
        AfterValidator(distinct),
    ]
    queries: Annotated[
        list[Item],
        Field(min_length=1, max_length=MAX_QUERIES, description="Searched first (at least one)."),
        AfterValidator(one_line),
        AfterValidator(distinct),
    ]
    # The rest of what pending_input.plan shows, so the plan a client read can be sent back as it is.
    rationale: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_RATIONALE_CHARS)] | None
    ) = Field(None, description="Why this plan; omitted or null keeps the planner's.")
    outline: (
        Annotated[list[Annotated[str, Field(max_length=2 * MAX_ITEM_CHARS)]], Field(max_length=20)] | None
    ) = Field(
        None,
        description="Read only: the report's sections follow sub_questions; what is sent here is ignored.",
    )


class PlanDecision(BaseModel):
    """What a person answers to a plan review."""

    # the rule of _plan_only_with_edit, stated in the JSON schema too (clients and fuzzers read it)
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "if": {"properties": {"action": {"const": "edit"}}, "required": ["action"]},
            "then": {"required": ["plan"], "properties": {"plan": {"not": {"type": "null"}}}},
            "else": {"properties": {"plan": {"type": "null"}}},
        },
    )

    action: Literal["approve", "edit", "reject"]
    plan: PlanEdit | None = Field(None, description="The edited plan (action `edit` only).")
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)] | None = Field(
        None, description="Why the plan was rejected (shown as the run's error)."
    )

    @model_validator(mode="after")
    def _plan_only_with_edit(self) -> PlanDecision:
        if self.action == "edit" and self.plan is None:
            raise ValueError("action edit needs the edited plan in `plan` (sub_questions and queries)")
        if self.action != "edit" and self.plan is not None:
            raise ValueError(f"action {self.action} takes no plan; send action edit to change the plan")
        return self


class PlanReview(BaseModel):
    """The plan shown for review: what will be searched, and the report it leads to."""

    model_config = ConfigDict(extra="forbid")

    sub_questions: list[str]
    queries: list[str]
    rationale: str = ""
    outline: list[str] = Field(description="The report's sections: one finding section per sub-question.")


class PlanRejected(RunCancelled):
    """The person rejected the plan: the run ends `cancelled` with the reason."""


def outline_of(sub_questions: list[str]) -> list[str]:
    """The report's section headings for these sub-questions (the report writer's fixed order)."""
    return [*FIXED_SECTIONS_BEFORE, *(f"Findings: {q}" for q in sub_questions), *FIXED_SECTIONS_AFTER]


def review_of(plan: dict[str, Any]) -> PlanReview:
    sub_questions = list(plan.get("sub_questions") or [])
    return PlanReview(
        sub_questions=sub_questions,
        queries=list(plan.get("queries") or []),
        rationale=str(plan.get("rationale") or ""),
        outline=outline_of(sub_questions),
    )


def edited_plan(plan: dict[str, Any], edit: PlanEdit) -> dict[str, Any]:
    """The state's plan after a person's edit (the rationale says so)."""
    rationale = str(plan.get("rationale") or "") if edit.rationale is None else edit.rationale
    if rationale.startswith(EDITED):  # the rationale read back from an earlier edit
        rationale = rationale[len(EDITED) :].strip()
    return {
        **plan,
        "sub_questions": list(edit.sub_questions),
        "queries": list(edit.queries),
        "rationale": f"{EDITED} {rationale}".strip(),
    }
