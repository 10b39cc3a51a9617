"""Topics of questions that quote code or a formula, or say "anything special" (session 43, the twelfth
reading's plans: "a = a.transpose();" gave the topic "a a.transpose()", "a linear system Ax = b" gave "a
linear", "need to call g_thread_init()" gave "call g_thread_init()", "do anything special" gave "special").
Each case is the shape seen there, on words of our own."""

from __future__ import annotations

import pytest

from deepresearch.extractive.phrases import noun_phrases
from deepresearch.extractive.planning import keyword_plan
from deepresearch.extractive.wordclasses import tokens


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Why does w = w.trimmed(); leave the lamp dark while w = 2*w works?", "w.trimmed()"),
        ("How do I balance a lamp's reservoir Fr = m with the wick?", "a lamp's reservoir"),
        ("Do I still need to call lamp_prime() before lighting the lamps?", "lamp_prime()"),
        ("Do I need to do anything special when several keepers trim the lamp at once?", "the lamp"),
    ],
)
def test_a_questions_code_or_formula_is_no_part_of_its_topic(question: str, topic: str) -> None:
    assert keyword_plan(question, max_queries=4, max_sub_questions=4).topic == topic


def test_an_assignment_sign_ends_a_phrase_and_a_comparison_stays_one_word() -> None:
    assert tokens("set Wicks = 3 when x == y") == ["set", "Wicks", "=", "3", "when", "x", "y"]
    assert [p.text for p in noun_phrases("I set MaxWicks = 150; is that enough?")] == ["MaxWicks", "enough"]
