"""Sub-questions that say what the question's words lean on (extractive/asking/asked.py): a bare "Why?"
after a statement, "its" after a statement of what the asker did, "it is <state>" and "that" in a later
clause, "Can I ...?" as a task, a time said in passing, a call as one word. Invented domains, so nothing here
is tuned on the quality sets."""

from __future__ import annotations

import pytest

from bench.quality.grammar import grammar_problems
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.asking.wordclasses import tokens
from deepresearch.extractive.reading.text import content_tokens
from tests._planning_helpers import planned as _plan


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # with the asker the statement's subject, "its" is what the asker did something to: said in full where
        # the question shares words with the statement (which is then left out of the sub-question)
        (
            "I renamed a chart with a pen; how do I see its history from before the rename?",
            "How do I see the chart's history from before the rename?",
        ),
        # ... a time said in passing is not part of it
        (
            "We moored the boat last year; how do I renew its mooring permit?",
            "How do I renew the boat's mooring permit?",
        ),
        # ... not where the question names something of its own before "its"
        (
            "I moved my boat to a new berth; does the harbour keep its old berth?",
            "Does the harbour keep its old berth?",
        ),
        # a statement the question shares no word with is carried whole, and "its" reads against it
        (
            "My lighthouse is flashing all night; how can I change its rhythm?",
            "How can I change its rhythm when my lighthouse is flashing all night?",
        ),
        (
            "We sold the boat last year; how do I cancel its permit?",
            "How do I cancel its permit when we sold the boat last year?",
        ),
    ],
)
def test_its_in_a_question_after_a_statement_names_whose(question: str, expected: str) -> None:
    sub_questions = _plan(question)
    assert sub_questions[0] == expected
    assert grammar_problems(sub_questions[0], question) == []


def test_can_i_asks_to_do_something_and_its_place_is_no_subject() -> None:
    # "Can I ..." asks to do something as "How do I ..." does: the limits asked about are the task's, and a
    # name it is done in is not what the question is about
    sub_questions = _plan("Can I store the tide charts entirely in RAM, and can two crews read the same one?")
    assert "What is RAM?" not in sub_questions
    assert "What are the limitations of RAM?" not in sub_questions
    assert "What are the limitations of storing the tide charts entirely in RAM?" in sub_questions


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("We sold the boat last year", ["the boat"]),
        ("I moved the mooring next week to a new harbour", ["the mooring", "a new harbour"]),
        ("I tarred a rope yesterday", ["a rope"]),
        # an opener after a determiner, or a unit before "of", is a word of the phrase
        ("How do I undo the last splice", ["the last splice"]),
        (
            "What happened to the harbour in the last week of the regatta",
            ["the harbour", "the last week", "the regatta"],
        ),
    ],
)
def test_a_time_said_in_passing_is_no_word_of_a_noun_phrase(clause: str, expected: list[str]) -> None:
    assert [p.text for p in noun_phrases(clause)][-len(expected) :] == expected


def test_it_in_a_later_clause_is_what_the_clause_before_gave_the_same_kind_of_state() -> None:
    # "it is stale" says of the chart what "is still current" said of it, not of the topic
    sub_questions = _plan(
        "How does the chartroom decide whether a tide chart is still current, and what happens when it is "
        "stale?"
    )
    assert "What happens when the tide chart is stale?" in sub_questions
    # without such a state, "it" is still the topic
    assert "How do I store the chartroom?" in _plan("What is the chartroom, and how do I store it?")


def test_that_after_a_yes_no_question_is_its_subject_not_the_name_it_ends_on() -> None:
    question = (
        "Are buoys treated as hazards by the harbour in a narrow channel and at the MARINA, and how does "
        "that compare with other harbours?"
    )
    sub_questions = _plan(question)
    assert "How do buoys compare with other harbours?" in sub_questions
    # a comparison is still the two things it compares
    assert "How do the sloop and the ketch work?" in _plan(
        "Is the sloop faster than the ketch? How does that work?"
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # a bare "Why?" asks about the statement before it: its auxiliary goes before its subject ...
        ("The harbour crane won't lift the dinghy. Why?", "Why won't the harbour crane lift the dinghy?"),
        ("The tide table is empty. Why?", "Why is the tide table empty?"),
        # ... or "do"/"does" with the verb's plain form
        ("My moorings drift every night. Why?", "Why do my moorings drift every night?"),
        ("The winch won't hold under load. How come?", "Why won't the winch hold under load?"),
        # what comes before "but" sets the scene
        (
            "I greased the winch but the handle doesn't turn. Why?",
            "Why doesn't the handle turn when I greased the winch?",
        ),
        # "it" of what the scene made takes all the scene says of it
        (
            "I carved a cleat from teak like ash(7) but my dinghy doesn't seem to hold it. Why?",
            "Why doesn't my dinghy seem to hold the cleat from teak like ash(7)?",
        ),
        # a verb in the past has no plain form here: the statement is asked as it is
        ("The mast cracked after the storm. Why?", "The mast cracked after the storm?"),
    ],
)
def test_a_bare_why_after_a_statement_asks_why_it_holds(question: str, expected: str) -> None:
    sub_questions = _plan(question)
    assert sub_questions[0] == expected
    if expected.startswith("Why"):
        assert grammar_problems(sub_questions[0], question) == []


def test_the_guards_of_the_rules_that_say_what_a_word_stands_for() -> None:
    # a verb in -s after a singular subject takes "does" and its plain form
    assert _plan("The chartroom shows every buoy as missing. Why?")[0] == (
        "Why does the chartroom show every buoy as missing?"
    )
    # "Can I see ...", "May I know ...": a request, no task whose limits to ask about
    assert not any("limitations of seeing" in sq for sq in _plan("Can I see an example of a bowline knot?"))
    # "that" after a yes/no question whose subject may hold its predicate ("moorings free") is the topic
    assert "How does the MARINA-2 pier compare with other harbours?" in _plan(
        "Are moorings free by default at the MARINA-2 pier, and how does that compare with other harbours?"
    )
    # ... or one that a participle does not follow ("the tide table accurate" holds its predicate)
    assert "How does the MARINA-2 pier compare with other harbours?" in _plan(
        "Is the tide table accurate at the MARINA-2 pier, and how does that compare with other harbours?"
    )
    # "its" after a statement whose subject is not the asker stays "its"
    assert _plan("My cat scratched the leather sofa. How do I repair its leather?")[0] == (
        "How do I repair its leather?"
    )
    # a time opener before a unit that goes on into a phrase, and a capitalised time word, are a phrase's
    assert next(p.text for p in noun_phrases("Which next day delivery option does the harbour offer")) == (
        "next day delivery option"
    )
    assert [p.text for p in noun_phrases("What is the Today show")] == ["the Today show"]


def test_a_call_is_one_word_and_a_contraction_no_keyword() -> None:
    # "lower(name)" is one name: read as "lower" and "name", its last word was taken for the clause's verb
    assert "ash(7)" in [p.text for p in noun_phrases("Why does the winch hold a cleat like ash(7)")]
    assert content_tokens("Why doesn't the winch hold, and won't it slip?") == content_tokens(
        "Why the winch hold, and it slip?"
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "has" is an auxiliary only before a participle: "has 200 moorings" has its verb
        ("My harbour has 200 moorings. Why?", "Why does my harbour have 200 moorings?"),
        ("My harbour has changed. Why?", "Why has my harbour changed?"),
        # the last sentence is asked about, the ones before set the scene
        (
            "The harbour runs a ferry. The quay floods every spring. Why?",
            "Why does the quay flood every spring when the harbour runs a ferry?",
        ),
        # "cannot" is asked as "can't", "dies" loses its "s" only
        ("The winch cannot lift the dinghy. Why?", "Why can't the winch lift the dinghy?"),
        ("My basil dies every winter. Why?", "Why does my basil die every winter?"),
        # "it" that ends the question is what the scene made - up to an "and" or a comma
        (
            "I rigged a jackline with a shackle and tested the boat but the crew doesn't use it. Why?",
            "Why doesn't the crew use the jackline with a shackle?",
        ),
        # ... not an "it" with its own verb
        (
            "I added a cover but the deck is wet when it rains. Why?",
            "Why is the deck wet when it rains when I added a cover?",
        ),
        # asked as written: an auxiliary that ends the statement, a verb joined to another, a verb the
        # chunker took for the subject's
        ("The jib works but the main doesn't. Why?", "The jib works but the main doesn't?"),
        (
            "I bought a winch but the handle is stiff and it won't turn. Why?",
            "I bought a winch but the handle is stiff and it won't turn?",
        ),
        ("My lawn goes brown every July. Why?", "My lawn goes brown every July?"),
    ],
)
def test_a_bare_why_asks_only_what_it_can_say_as_a_question(question: str, expected: str) -> None:
    assert _plan(question)[0] == expected


def test_the_topic_of_a_bare_why_is_what_the_statement_is_about() -> None:
    # "I ran VACUUM but ..." is about VACUUM, though the why-question puts the database file first; and the
    # article that opened a sentence is no capital inside a sub-question
    plan = keyword_plan("I ran VACUUM but the logbook file is still large. Why?", 6)
    assert plan.topic == "VACUUM"
    assert plan.sub_questions[0] == "Why is the logbook file still large when I ran VACUUM?"
    crane = keyword_plan("The harbour crane won't lift the dinghy. Why?", 6)
    assert "What is the harbour crane?" in crane.sub_questions


def test_a_one_letter_placeholder_is_no_part_of_a_call() -> None:
    assert tokens("os.path.join(a) and git-gc(1) and lower(name)") == [
        "os.path.join", "a", "and", "git-gc(1)", "and", "lower(name)"
    ]  # fmt: skip
