"""A seventeenth reading (bench/quality/JOURNAL.md, session 47): each case is the smallest question or page
read wrong there, with its defect in a comment. Invented lighthouse material."""

from __future__ import annotations

from deepresearch.extractive.phrases import noun_phrases
from deepresearch.extractive.planning import keyword_plan


def _phrases(clause: str) -> list[str]:
    return [phrase.text for phrase in noun_phrases(clause)]


def test_a_yes_no_question_has_its_subject_and_verb() -> None:
    # "..., and should the redirect use code 301 or 302?" was one phrase, "the redirect use code 301 or 302",
    # and the plan asked "What is redirect use code 301?" and "What is 302?"
    assert _phrases("should the keeper use lens 3 or 4") == ["the keeper", "lens 3 or 4"]
    assert _phrases("should the keeper trim wicks") == ["the keeper", "wicks"]
    plan = keyword_plan("How do I light the lamp at dusk, and should the keeper use lens 3 or 4?", 6)
    assert {"What is lens 3?", "What is lens 4?"} <= set(plan.sub_questions), plan.sub_questions
    # ... a figure inside the subject is the subject's: "does Lampworks 15 support ..."
    assert _phrases("does Lampworks 15 support shutters") == ["Lampworks 15", "shutters"]
