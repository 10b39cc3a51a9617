"""Sentences that say nothing about the subject (reading/leaning.py points_elsewhere): one that sends the
reader elsewhere, and one that says what the page goes on to do. Quoted, they read as findings ("Here we
discuss a few of these [1].") in the reports over Git's and Apache's manuals. And a reason given alone,
which answers the sentence before it (leans_back). Invented domains."""

from __future__ import annotations

import pytest

from deepresearch.extractive.reading.leaning import leans_back, points_elsewhere
from deepresearch.extractive.reading.sentences import quotes

CONTENT = "The keeper trims the wick every evening so that the flame burns without smoke."


@pytest.mark.parametrize(
    "pointer",
    [
        "See the keeper's handbook for the whole evening round.",
        "For more details on the lamp oil, consult the supply office.",
        "The winter schedule is described in the harbour master's notes.",
        "This section describes how the lamp is lit and trimmed.",
        # what the page goes on to do
        "Some examples of a keeper's log are presented in the next sections.",
        "Here we discuss a few of the lamps the coast still uses.",
        "We explain how to trim the wick in the following sections.",
        "Then we describe how the lamp room is cleaned.",
        "Everything below this line in this section is copied from the lamp manual.",
        # ... or what an example, a table or a section not quoted with it shows
        "The following example illustrates the effect of a short wick on the flame.",
        "The next section, section 3, describes the oils a lamp may burn.",
        "This section lists a few lamps that are not mentioned elsewhere.",
        "Let's take a look at an example using the storm lantern.",
        "The sections that follow describe the various wicks a lamp may take.",
        "For each lamp, you will find a more detailed description in its manual page.",
        "The full list of lamp oils is available as part of the supply office documentation.",
        "There are examples of more complicated wick settings in the storm lantern documentation.",
        "Special considerations for paraffin lamps are documented with that lamp.",
        # an FAQ's answer that only names other questions (celery: "Answer: See MySQL is throwing deadlock
        # errors, what can I do?, or ...")
        "Answer: See Why does the lamp smoke at night?, or Why is the wick always wet?",
    ],
)
def test_a_sentence_that_points_elsewhere_is_no_quote(pointer: str) -> None:
    assert points_elsewhere(pointer)
    texts = [q.text for q in quotes(f"{pointer} {CONTENT}", 1)]
    assert texts == [CONTENT], texts


@pytest.mark.parametrize(
    "statement",
    [
        # what it says stands, whatever it says about the next section
        "A spare wick keeps the lamp lit through the night, as discussed in the next section.",
        "The keeper's log is presented in a bound book with one page per night.",
        "We recommend trimming the wick before the lamp is lit.",
        "The following keeper trims the wick twice a night in winter.",
        "The following example uses the storm lantern, which burns paraffin.",
        "As this table shows, a short wick burns longer on paraffin than on whale oil.",
        "Let's say the keeper wants to light the lamp an hour early.",
        "The documentation of the lamp is written by the keeper every winter.",
    ],
)
def test_a_statement_that_names_another_place_is_still_quoted(statement: str) -> None:
    assert not points_elsewhere(statement)
    assert statement in [q.text for q in quotes(f"{statement} {CONTENT}", 1)]


def test_a_reason_given_alone_answers_the_sentence_before_it() -> None:
    # "Because that is what it does." was a summary item of its own (Git's revert-a-faulty-merge howto)
    reason = "Because that is what the lamp does."
    assert leans_back(reason)
    texts = [q.text for q in quotes(f"Think of the lamp as a clock that burns oil. {reason}", 1)]
    assert texts == [f"Think of the lamp as a clock that burns oil. {reason}"], texts
    # a reason with its own clause stands alone
    assert not leans_back("Because paraffin burns cleaner, the keeper prefers it to whale oil.")
    assert not leans_back("Because lamps just use paraffin they also smoke less than candles.")


def test_a_papers_references_are_no_quotes() -> None:
    # "[7] Ingo Molnar. Re: BUG 2.6.23-rc3 ...": a title, and a "[7]" that reads as a citation marker
    entry = "- [7] Ada Harbour. Re: Tides along the coast of the north sea. The harbour mailing list.\n"
    for heading in ("References", "Bibliography", "6. References"):
        assert quotes(entry, 1, ["Paper", heading]) == [], heading
    assert quotes("The tide rises twice a day because the moon pulls the sea.\n", 1, ["Paper", "Tides"])


@pytest.mark.parametrize(
    "question",
    [
        "What should the keeper do when the wick burns black?",
        "Does this seem a bit complicated?",
        "So how does the keeper know which lamp is the harbour's own?",
        "Why would a keeper trim the wick before the lamp is even lit?",
    ],
)
def test_a_question_is_no_quote(question: str) -> None:
    # it asks; the sentences after it answer (a report quoted "What URL does the rule see [2]?" alone)
    assert [q.text for q in quotes(f"{question} {CONTENT}", 1)] == [CONTENT]
    assert quotes(question, 1) == []


def test_an_answer_that_leans_on_its_question_is_quoted_with_it() -> None:
    question = "How does the keeper know which lamp is the harbour's own?"
    answer = "It carries a red glass that no other lamp on the coast carries."
    assert [q.text for q in quotes(f"{question} {answer}", 1)] == [f"{question} {answer}"]


def test_a_list_item_that_asks_is_no_quote_and_a_list_of_questions_is_an_index() -> None:
    # a list item that ends on a question is one, its statements setting it up ("I deleted some logs. How do I
    # get them back?"); a list whose items mostly ask is an FAQ's index: its statements are questions too
    assert quotes("- The keeper lost the key to the lamp room. How can the door be opened?", 1) == []
    index = "\n\n".join(
        [
            "- How often should the keeper trim the wick of the lamp?",
            "- The lamp burns with a black smoke every evening.",
            "- Can the keeper light the lamp an hour before sunset?",
            "- Where does the keeper store the spare wicks?",
        ]
    )
    assert quotes(index, 1) == []
    # two questions in a list of five statements are no index: the statements are quoted
    listed = [
        "- The keeper trims the wick of the lamp every evening.",
        "- The keeper cleans the glass of the lamp every morning.",
        "- How often should the keeper trim the wick of the lamp?",
        "- The keeper logs the weather of the night in the book.",
        "- Can the keeper light the lamp an hour before sunset?",
    ]
    texts = [q.text for q in quotes("\n\n".join(listed), 1)]
    assert texts == [item[2:] for item in listed if item.endswith(".")]


@pytest.mark.parametrize(
    "statement",
    [
        # a question mark after a symbol or a space, or a question the sentence quotes: a statement
        "The lazy form of the keeper's pattern is written as *?",
        "The harbour office's query names the ship as a placeholder, as in WHERE ship = ?",
        "Every new keeper's first lesson asks 'Why does the lamp smoke?'",
    ],
)
def test_a_statement_that_ends_on_a_question_mark_is_quoted(statement: str) -> None:
    assert [q.text for q in quotes(statement, 1)] == [statement]


def test_questions_each_answered_are_no_index_and_an_answer_keeps_its_question() -> None:
    faq = "\n\n".join(
        [
            "- How often should the keeper trim the wick?\nThe keeper trims the wick every evening.",
            "- Can the lamp burn whale oil?\nThe lamp burns whale oil as well as paraffin, but smokes more.",
            "- Why does the glass turn black?\nThe glass turns black when the wick is cut unevenly.",
        ]
    )
    texts = [q.text for q in quotes(faq, 1)]
    assert texts == [line.split("\n")[1] for line in faq.split("\n\n")], texts
    # "No, ..." answers the question before it: quoted with it, not alone
    answered = "Should the keeper trim the wick twice a night? No, once before dusk keeps the flame clean."
    assert [q.text for q in quotes(answered, 1)] == [answered]
