"""A how-to question that lists its tasks' verbs (session 43, from a new user's check: "How do I clone,
configure and write shell hooks for Frobnitz?" was planned with the topic "configure and write shell hooks"
and the sub-question "What are the limitations of clone,ing configure and write shell hooks for
Frobnitz?"). Each case is the shape seen there, on words of our own."""

from __future__ import annotations

import pytest

from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.inflection import gerund_phrase


@pytest.mark.parametrize(
    ("question", "topic", "limits"),
    [
        (
            "How do I trim, fill and light the lanterns of the tower?",
            "the lanterns",
            "What are the limitations of trimming, filling and lighting the lanterns of the tower?",
        ),
        (  # the comma before the last verb
            "How do I trim, fill, and light a lantern?",
            "a lantern",
            "What are the limitations of trimming, filling, and lighting a lantern?",
        ),
        (  # a verb after a comma with its own object
            "How do I trim the wick, fill the lamp and light it?",
            "the wick",
            "What are the limitations of trimming the wick, filling the lamp and lighting it?",
        ),
        (
            "How do I unpack the lantern, assemble it and light it?",
            "the lantern",
            "What are the limitations of unpacking the lantern, assembling it and lighting it?",
        ),
    ],
)
def test_a_tasks_listed_verbs_are_verbs_and_each_takes_ing(question: str, topic: str, limits: str) -> None:
    plan = keyword_plan(question, max_queries=4, max_sub_questions=4)
    assert plan.topic == topic, plan
    assert limits in plan.sub_questions, plan.sub_questions
    assert not any(",ing" in sub_question for sub_question in plan.sub_questions)


def test_the_listed_verbs_are_no_noun_phrase() -> None:
    phrases = [p.text for p in noun_phrases("How do I trim, fill and light the lanterns?")]
    assert phrases == ["the lanterns"], phrases
    phrases = [p.text for p in noun_phrases("How do I trim the wick, fill the lamp and light it?")]
    assert phrases == ["the wick", "the lamp"], phrases


@pytest.mark.parametrize(
    ("task", "gerund"),
    [
        ("trim, fill and light the lanterns", "trimming, filling and lighting the lanterns"),
        ("trim, fill, or light a lantern", "trimming, filling, or lighting a lantern"),
        # no list: the comma stays where it was, after the -ing
        ("trim, say, a wick", "trimming, say, a wick"),
        ("carefully trim, fill and light it", "carefully trimming, filling and lighting it"),
    ],
)
def test_a_task_with_listed_verbs_reads_as_a_gerund_phrase(task: str, gerund: str) -> None:
    assert gerund_phrase(task.split()) == gerund
