"""Topics of questions that quote code or a formula, or say "anything special" (session 43, the twelfth
reading's plans: "a = a.transpose();" gave the topic "a a.transpose()", "a linear system Ax = b" gave "a
linear", "need to call g_thread_init()" gave "call g_thread_init()", "do anything special" gave "special").
Each case is the shape seen there, on words of our own."""

from __future__ import annotations

import pytest

from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.asking.wordclasses import tokens


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


# the thirteenth reading (FFmpeg's manuals, gnuplot's): a ratio and an option's value cut at their colon
# ("Why doesn't scaling fix my old 4?"), a greeting taken for the topic ("What is Hi?"), a job's number
# kept in it ("What is [1] suspended tty output?")


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("Why doesn't trimming fix my old 4:3 lamp?", "trimming"),
        ("Hi all, why does the lantern smoke at night?", "the lantern"),
        (
            'My lamp job started with & stops with "[1] + suspended (lamp output)". How do I keep it lit?',
            "lamp job",
        ),
    ],
)
def test_a_ratio_a_greeting_and_a_jobs_number(question: str, topic: str) -> None:
    # in a corpus where the greeting is rare (the reading's: "Hi" was the topic)
    rarity = {"hi": 0.01, "lantern": 0.05, "smoke": 0.2, "night": 0.3} if question.startswith("Hi") else None
    plan = keyword_plan(question, max_queries=4, max_sub_questions=4, rarity=rarity)
    assert plan.topic == topic, plan
    assert not any("4?" in q or "[1]" in q or "Hi" in q.split() for q in plan.sub_questions[1:]), plan


def test_a_ratio_and_an_options_value_are_one_word_and_a_time_no_phrase() -> None:
    assert tokens("my old 4:3 lamp with len=3:2 [1] at 7:30") == [
        "my",
        "old",
        "4:3",
        "lamp",
        "with",
        "len=3:2",
        "at",
        "7:30",
    ]
    assert [p.text for p in noun_phrases("How can I light the lamp at 7:30")] == ["the lamp"]


def test_a_scene_opening_on_when_is_no_question_but_a_question_after_its_comma_is() -> None:
    # gnuplot's "When I run gnuplot myscript.gp from a terminal, the plot window pops up and disappears
    # immediately. How can I keep it open?": the scene was asked as a sub-question, with a "?"
    plan = keyword_plan(
        "When I light the lamp from the gallery, the flame flares up and dies. How can I keep it lit?",
        4,
        4,
    )
    assert not any(q.startswith("When I light") for q in plan.sub_questions), plan.sub_questions
    # ... and its "it" is what the scene's main clause is about, after its comma (not the lamp lit)
    assert plan.sub_questions[0] == "How can I keep the flame lit?", plan.sub_questions
    asked = keyword_plan("When I light the lamp, why does the flame die?", 4, 4).sub_questions
    assert asked[0] == "When I light the lamp, why does the flame die?", asked
    assert (
        keyword_plan("When should I trim the wick?", 4, 4).sub_questions[0] == "When should I trim the wick?"
    )


def test_a_phrase_does_not_run_across_a_comma_into_the_next_clause() -> None:
    # gnuplot's "from a terminal, the plot window pops up and disappears immediately": the phrase "a terminal,
    # the plot window pops" (its "and" joins two verbs, no list)
    phrases = noun_phrases("When I light it from the gallery, the lamp flame pops up and dies at once")
    assert [p.text for p in phrases][:2] == ["the gallery", "the lamp flame"], phrases
    # ... while a list after commas is one phrase of its members
    (listed,) = noun_phrases("the wick settings, the oil and the glass are checked")
    assert listed.items == ("the wick settings", "the oil", "the glass"), listed
