"""The planner's sub-questions for a question, each checked to read as a question: shared by the test
modules of the extractive planner (test_extractive_clauses.py, test_extractive_comparisons.py)."""

from __future__ import annotations

from deepresearch.extractive.asking.planning import keyword_plan


def planned(question: str) -> list[str]:
    plan = keyword_plan(question, max_queries=6)
    for sub_question in plan.sub_questions:
        assert sub_question.endswith("?") and sub_question[:1].isupper(), sub_question
    return plan.sub_questions
