"""The planner's comparisons (asking/comparison.py): both sides of "X vs Y", "Is X safer than Y?", "How
does X compare to Y?", "the advantages of X over Y" are asked about, and what only looks like a comparison
is not ("files older than 7 days", "a better web server than")."""

from __future__ import annotations

import pytest

from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.screening import rank_sources
from tests._planning_helpers import planned as _plan


def test_both_sides_of_a_comparison_are_asked_about() -> None:
    # "Is X safer than Y?", "How does X compare to Y?" and "the advantages of X over Y" asked only about X
    # (or only Y): the other side was never searched for
    for question in (
        "Is the oil lamp brighter than the gas lamp in thick fog?",
        "Is the oil lamp more reliable than the gas lamp in thick fog?",
        "How does the oil lamp compare to the gas lamp in thick fog?",
        "What are the advantages of the oil lamp over the gas lamp?",
    ):
        plan = keyword_plan(question, max_queries=6)
        assert plan.sub_questions[0] == question, plan.sub_questions
        sides = ["What is the oil lamp?", "What is the gas lamp?"]
        assert plan.sub_questions[1:3] == sides, plan.sub_questions
        assert {"oil lamp", "gas lamp"} <= set(plan.queries), plan.queries
    # the limits asked about are the two sides', not "how the oil lamp compares to the gas lamp"
    sub_questions = _plan("How does the oil lamp compare to the gas lamp?")
    assert sub_questions[-1] == "What are the limitations of the oil lamp and the gas lamp?", sub_questions
    # a comparative before "than" is asked of the two, not a word of the first ("What is git merge faster?")
    assert _plan("Is lamp.light faster than lamp.dim on a cold night?")[1:3] == [
        "What is lamp.light?",
        "What is lamp.dim?",
    ]
    # "over" joins two sides only after a word that weighs them: here the lamp hangs over the door
    plan = keyword_plan("Is the lamp over the door bright enough?", max_queries=6)
    assert plan.topic == "the lamp", plan
    assert "What is the door?" not in plan.sub_questions, plan.sub_questions


def test_a_bare_member_and_an_articled_one_are_compared() -> None:
    # "Which is safer, cancel or a second Ctrl-C?" planned only "What is a second Ctrl-C?": a member with
    # its own article after one without ended the coordination
    assert _plan("Which is safer, oil or a gas lamp?")[1:3] == ["What is oil?", "What is a gas lamp?"]
    # ... and a question that compares two things is about them, not about what they are compared for
    plan = keyword_plan("Which is faster for signalling, a horn or a bell?", max_queries=6)
    assert plan.topic == "a horn or a bell", plan
    assert plan.sub_questions[1:3] == ["What is a horn?", "What is a bell?"], plan.sub_questions


def test_a_bare_version_is_one_of_the_same_name() -> None:
    # "Python 3.11 vs 3.12 performance" asked "What is 3.12 performance?" and searched "3.12 performance":
    # the second version is of the first one's name, and what follows the last version is asked of each
    plan = keyword_plan("Lampwick 3.11 vs 3.12 brightness", max_queries=6)
    assert plan.sub_questions[1:3] == [
        "What is Lampwick 3.11 brightness?",
        "What is Lampwick 3.12 brightness?",
    ]
    assert {"Lampwick 3.11 brightness", "Lampwick 3.12 brightness"} <= set(plan.queries), plan.queries
    assert _plan("Should I use Lampwick 15 or 16?")[1:3] == ["What is Lampwick 15?", "What is Lampwick 16?"]
    assert _plan("Lampwick v2, v3 or v4?")[1:4] == [
        "What is Lampwick v2?",
        "What is Lampwick v3?",
        "What is Lampwick v4?",
    ]
    # a member that names itself in full keeps its name
    assert _plan("Lampwick 3 vs Gaslight 4")[1:3] == ["What is Lampwick 3?", "What is Gaslight 4?"]


def test_how_that_works_is_how_the_thing_asked_about_does_it() -> None:
    # "..., how can one SQLite query return a whole subtree, and how does that work?" asked "How does one
    # SQLite query work?": "that" is what the clause before asks the thing to do
    assert _plan("Can the lamp burn without oil, and how does that work?")[:2] == [
        "Can the lamp burn without oil?",
        "How does the lamp burn without oil?",
    ]
    assert _plan("How can one Lampwick wick light two lamps, and how does this work?")[1] == (
        "How does one Lampwick wick light two lamps?"
    )
    assert _plan("Can lamps share one wick? How does that work?")[1] == "How do lamps share one wick?"
    # the asker's own task keeps its gerund ("How does lighting the lamp work?"), "one" as a pronoun too
    assert _plan("How do I light the lamp, and how does that work?")[1] == "How does lighting the lamp work?"
    assert (
        _plan("How can one light the lamp, and how does that work?")[1] == "How does lighting the lamp work?"
    )


@pytest.mark.parametrize(
    ("question", "wanted", "unwanted"),
    [
        # a noun in "-er" before "than" is the noun, not a comparative ("What is a better lamp?")
        ("Is Lampwick a better lamp server than Gaslight?", [], ["What is a better lamp?"]),
        # one side may be a list of its own
        (
            "How does the oil lamp compare to the gas lamp and the candle?",
            ["What is the oil lamp?", "What is the gas lamp?", "What is the candle?"],
            [],
        ),
        # a list beside a comparative is no choice: the lamp is still what is asked about
        ("How do I make Lampwick faster for wicks and lamps?", [], ["What are wicks?"]),
        # a filter or an idiom is no second side
        ("How do I delete lamps older than 7 days?", [], ["What is a 7 day?", "What is a lamps day?"]),
        ("How do I find wicks newer than a lamp?", [], ["What is a lamp?", "What are wicks?"]),
        ("Does the lamp burn more oil than expected?", [], ["What is expected?"]),
        ("Why does Lampwick use LW-1 rather than LW-256?", [], ["What is LW-256?"]),
        ("Is there any way other than cron to schedule jobs?", [], ["What is any way?"]),
        # the two sides keep their own nouns
        ("Are wicks brighter than hard lamps?", ["What are wicks?", "What are hard lamps?"], []),
        ("lampwick versus Gaslight burner for ships", ["What is lampwick?", "What is Gaslight burner?"], []),
        # "over" joins two sides only after a word that weighs them
        ("How do I carry lamps and wicks over to a new ship?", [], ["What are lamps?"]),
        # "ones" is the other side's noun
        (
            "Is the new lamp brighter than the old one?",
            ["What is the new lamp?", "What is the old lamp?"],
            [],
        ),
        # "that" after a comparison is the two things compared
        (
            "Is the oil lamp brighter than the gas lamp? How does that work?",
            ["How do the oil lamp and the gas lamp work?"],
            [],
        ),
        # a quantity is no version
        (
            "Should I give Lampwick 4 or 8 GB of oil?",
            [],
            ["What is Lampwick 4 GB?", "What is Lampwick 8 GB?"],
        ),
        ("Lampwick 11 vs 12 vs Gaslight 22.04", ["What is Lampwick 12?", "What is Gaslight 22.04?"], []),
        # "the difference between X and Y" weighs the two (not "What is What's?")
        (
            "What's the difference between git stash and git commit?",
            ["What is git stash?", "What is git commit?"],
            [],
        ),
        ("Do Lampwick wicks burn oil, and how does that work?", ["How do Lampwick wicks burn oil?"], []),
    ],
)
def test_what_a_comparison_is_not(question: str, wanted: list[str], unwanted: list[str]) -> None:
    # regressions a review of the comparison rules found (bench/quality/JOURNAL.md, session 20)
    sub_questions = _plan(question)
    assert all(sq in sub_questions for sq in wanted), sub_questions
    assert not any(sq in sub_questions for sq in unwanted), sub_questions


def _rig_pages() -> list[dict[str, object]]:
    overview = (
        "## Choosing a rig\n\nMost boats carry a sloop rig, a ketch rig or a schooner rig, and the choice "
        "depends on the crew and the size of the boat.\n\n## Default rigs\n\nA yard builds a sloop rig on a "
        "small boat, a ketch rig on a larger one and a schooner rig on the largest, unless asked otherwise.\n"
    )
    members = {"sloop": "one mast and a single headsail", "ketch": "a main mast and a shorter mizzen mast"}
    members["schooner"] = "two masts, the front one shorter"
    return [{"id": "S1", "n": 1, "title": "Sailing rigs", "text": overview}] + [
        {
            "id": f"S{n}",
            "n": n,
            "title": name,
            "text": f"## Summary\n\nThis rig has {has}.\n\n## Handling\n\nThe {name} rig takes its sheets.",
        }
        for n, (name, has) in enumerate(members.items(), start=2)
    ]


def test_the_page_about_one_thing_compared_is_read_for_the_sub_question_about_it() -> None:
    # the page on all three rigs is the question's best page; the sloop's own page says what the sloop rig
    # is in its summary without naming it (Apache's prefork page: "This Multi-Processing Module implements a
    # non-threaded, pre-forking web server"), and the search found it lower
    question = "How do the sloop, ketch and schooner rigs differ?"
    members = ["What is the sloop rig?", "What is the ketch rig?", "What is the schooner rig?"]
    found = {1: 1.0, 2: 0.3, 3: 0.3, 4: 0.3}
    topic = "the sloop, ketch and schooner rigs"
    ranked = rank_sources(question, [question, *members], _rig_pages(), [2], topic=topic, found=found)[0]
    for n, evidence in enumerate(ranked[1:], start=2):
        assert [p["source_id"] for _, p in evidence] == [f"S{n}", f"S{n}"], evidence
        assert any("This rig has" in p["text"] for _, p in evidence), evidence
