"""Plans the third reading of corpora nobody tuned on showed (session 34: python-jinja2-doc and rsyslog-doc):
a common word searched on its own ("error", "HTML", "page" find any page of a manual), "What are common
causes?" taken for the topic and asked "How do common causes work?", "rsyslog runs fine" and "a fixed size
and rotate" read as things, and a scene opening on "After" quoted with its capital. Each case is the shape
seen there, on words of our own."""

from __future__ import annotations

import pytest

from deepresearch.extractive.asking.asked import inline
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.reading.text import content_tokens

_RARITY = {"error": 0.46, "lantern": 0.02, "wick": 0.01, "oil": 0.2, "lantern wick": 0.01}


def test_a_one_word_topic_on_many_pages_is_no_search_of_its_own() -> None:
    # "How do I make Jinja raise an error when ...": "error" alone found any page of the manual
    question = "How do I make my lantern raise an error when the wick is too short?"
    plan = keyword_plan(question, 5, rarity={**_RARITY, "wick": 0.5, "lantern": 0.5})
    assert plan.topic == "an error"
    assert "error" not in plan.queries, plan.queries
    assert plan.queries[0] == question  # the question and its keywords are still searched
    assert len(plan.queries) >= 2


@pytest.mark.parametrize(
    ("rarity", "searched"),
    [
        ({"wick": 0.25}, True),  # on a quarter of the pages: specific enough
        ({"wick": 0.31}, False),
        (None, True),  # no corpus to tell: the topic is searched
    ],
)
def test_a_topic_is_searched_alone_when_few_pages_hold_it(
    rarity: dict[str, float] | None, searched: bool
) -> None:
    plan = keyword_plan("Why does the wick smoke?", 5, rarity=rarity)
    assert plan.topic == "the wick"
    assert ("wick" in plan.queries) is searched, plan.queries


def test_a_phrase_of_several_words_is_searched_however_common() -> None:
    # "virtual host" is on half of Apache's pages and still finds its own
    plan = keyword_plan("How does the lantern wick burn?", 5, rarity={"lantern wick": 0.5, "wick": 0.5})
    assert "lantern wick" in plan.queries, plan.queries


def test_common_causes_ask_about_the_scene_not_about_causes() -> None:
    question = (
        "My lantern burns fine but the wick I trimmed outside the cabin never lights. What are common causes?"
    )
    plan = keyword_plan(question, 5, rarity=_RARITY)
    assert "causes" not in plan.topic, plan.topic
    assert not any("work?" in sq for sq in plan.sub_questions), plan.sub_questions
    assert plan.sub_questions[0].startswith("What are common causes when my lantern burns fine")


@pytest.mark.parametrize(
    "asked", ["What are the usual reasons?", "What are some ways?", "What are my options?"]
)
def test_a_list_asked_for_is_no_topic(asked: str) -> None:
    plan = keyword_plan(f"The oil lantern went out in the storm. {asked}", 5, rarity=_RARITY)
    assert plan.topic in ("the oil lantern", "oil lantern"), plan.topic


@pytest.mark.parametrize(
    ("clause", "subject"),
    [
        ("rigging runs fine but the halyard I rove outside the mast is never taut", "rigging"),
        ("the lantern burns properly", "the lantern"),
        ("the pump works well", "the pump"),
    ],
)
def test_a_verb_in_s_before_how_it_does_it_is_no_part_of_the_subject(clause: str, subject: str) -> None:
    assert noun_phrases(clause)[0].text == subject


def test_a_verb_before_it_after_and_is_no_member_of_a_list() -> None:
    phrases = noun_phrases("How can I keep a log at a fixed size and rotate it without a cron job")
    assert [p.text for p in phrases] == ["a log", "a fixed size", "a cron job"], phrases
    # "it" as the subject of what follows is not the object of the word before
    assert "the mast and boom" in [p.text for p in noun_phrases("Check the mast and boom it carries")]


@pytest.mark.parametrize(
    ("scene", "inside"),
    [
        ("After a refit my lantern smokes", "after a refit my lantern smokes"),
        ("Since the storm the pump fails", "since the storm the pump fails"),
        ("The pump fails", "the pump fails"),
        ("NMEA output stops", "NMEA output stops"),  # a name keeps its capitals
        ("ON CONFLICT clauses fail", "ON CONFLICT clauses fail"),  # ... a keyword too
        ("I trimmed the wick", "I trimmed the wick"),
    ],
)
def test_a_scene_continued_inside_a_question_drops_only_an_opening_capital(scene: str, inside: str) -> None:
    assert inline(scene) == inside


def test_a_scene_opening_on_a_preposition_reads_inside_the_question() -> None:
    plan = keyword_plan("After a refit my lantern smokes. Why, and how do I fix it?", 5, rarity=_RARITY)
    assert not any(" when After " in sq for sq in plan.sub_questions), plan.sub_questions


# the fourth reading (bind9-doc and python-celery-doc)


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("What's the right way to trim it", ["way"]),  # "What's" is no thing
        (
            "Why did the keeper stop using paraffin as the default fuel",
            ["the keeper", "paraffin", "the default fuel"],
        ),
        ("How can I light the lamp every Monday morning at 7:30", ["the lamp"]),
        ("Will my trimmings get lost", ["my trimmings"]),
        ("I accidentally set my lamp wick to a length in inches", ["my lamp wick", "a length", "inches"]),
    ],
)
def test_words_that_name_no_thing_are_no_phrase(clause: str, expected: list[str]) -> None:
    assert [p.text for p in noun_phrases(clause)] == expected


def test_it_after_a_scene_of_the_askers_own_is_what_they_did_it_to() -> None:
    plan = keyword_plan(
        "I accidentally set my lamp wick to a length in the future. How do I get it back down to an inch?",
        5,
        rarity={"lamp wick": 0.01, "wick": 0.01, "inch": 0.2},
    )
    assert plan.sub_questions[0] == "How do I get my lamp wick back down to an inch?", plan.sub_questions


def test_a_second_question_after_or_is_asked_apart_and_do_it_stays_the_task() -> None:
    question = (
        "Can I just trim the wick of a lamp by hand, or will my trimmings get lost? "
        "What's the right way to do it?"
    )
    plan = keyword_plan(question, 5, rarity={"wick": 0.01, "lamp": 0.4, "hand": 0.3, "trimmings": 0.05})
    assert plan.sub_questions[:3] == [
        "Can I just trim the wick of a lamp by hand?",
        "Will my trimmings get lost when just trimming the wick of a lamp by hand?",
        "What's the right way to do it when just trimming the wick of a lamp by hand?",
    ], plan.sub_questions
    assert "What's" not in plan.queries and "hand" not in plan.topic


def test_the_noun_of_an_idiom_is_no_topic() -> None:
    plan = keyword_plan(
        "Should I let the lamp-policy handle my wicks or trim the wicks by hand?",
        5,
        rarity={"hand": 0.01, "wicks": 0.1, "lamp-policy": 0.05},
    )
    assert plan.topic != "hand", plan.topic


def test_what_is_the_difference_after_a_choice_is_no_topic() -> None:
    plan = keyword_plan(
        "Should I let the keeper trim my wicks or trim the wicks myself? What is the difference?",
        5,
        rarity={"difference": 0.01, "wicks": 0.1, "keeper": 0.2},
    )
    assert plan.topic != "the difference", plan.topic


def test_a_verb_both_clauses_use_is_no_word_they_share() -> None:
    # bind9-doc: "Can I just edit the zone file of a zone that gets dynamic updates by hand, or will my
    # changes get lost?" asked "Will my changes get lost?" of nothing
    plan = keyword_plan(
        "Can I just trim the wick of a lamp that gets oil at dusk, or will my trimmings get lost?",
        5,
        rarity={"wick": 0.01, "lamp": 0.4, "trimmings": 0.05, "oil": 0.1},
    )
    assert (
        plan.sub_questions[1]
        == "Will my trimmings get lost when just trimming the wick of a lamp that gets oil at dusk?"
    )


# what a review of the rules above found they must not do


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("I apply patches to the lamp", ["patches", "the lamp"]),  # a verb in -ly is no adverb
        ("I rely on the keeper", ["the keeper"]),
        ("How do I avoid naming conflicts between lamps", ["naming conflicts", "lamps"]),  # a noun's modifier
        ("How do I keep logging enabled after a refit", ["logging", "a refit"]),
        ("How do I avoid string lights in the tower", ["string lights", "the tower"]),
    ],
)
def test_the_new_verb_rules_leave_nouns_alone(clause: str, expected: list[str]) -> None:
    assert [p.text for p in noun_phrases(clause)] == expected


def test_they_after_how_do_is_still_the_topic() -> None:
    plan = keyword_plan("What are lamp timers and how do they work?", 5)
    assert "How do lamp timers work?" in plan.sub_questions, plan.sub_questions


# the fifth reading (postfix-doc and haproxy-doc, session 35)


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        # a verb in -s that takes a verb in -ing: "keeps" is no noun ("my server keeps getting")
        ("My lamp keeps getting covered with soot from the wick", ["My lamp", "soot", "the wick"]),
        ("the oil tank keeps growing", ["the oil tank"]),
        # a manner adverb ends its clause before a question word the dash stood before
        ("the oil drains slowly — how do I find the leak", ["the oil", "the leak"]),
        ("I'm running the lamp in a tower with no keeper", ["the lamp", "a tower", "no keeper"]),
        ("the keeper spends most of his time in the tower rather than in the lamp room", None),
        ("the wick goes out after about a minute of wind", ["the wick", "wind"]),
        # "how much" asks the amount of a noun ("much space", not "much" then the verb "space"); a plural
        # subject "keep"s as one does ("Users keep filling up the /home disk": "Users keep" was a thing)
        ("Keepers keep filling up the oil store", ["Keepers", "the oil store"]),
        # ... and a verb after its modal is no thing ("what a patch would change" searched "change")
        ("how can I limit how much oil each lamp can burn", ["much oil", "each lamp"]),
        ("how much does a new wick cost", ["a new wick"]),
    ],
)
def test_words_of_a_scene_that_name_no_thing_are_no_phrase(clause: str, expected: list[str] | None) -> None:
    found = [p.text for p in noun_phrases(clause)]
    if expected is None:  # "rather" ends a phrase: "the tower rather" is none of them
        assert found and not any(text.endswith("rather") for text in found), found
    else:
        assert found == expected


def test_it_after_a_scene_of_something_done_to_its_subject_is_the_happening() -> None:
    # "My server keeps getting flooded with bounce messages ...; how do I stop it?" asked "How do I stop my
    # server?"
    plan = keyword_plan(
        "My lamp keeps getting covered with soot from the wick. How do I stop it?",
        5,
        rarity={"lamp": 0.02, "soot": 0.01, "wick": 0.05},
    )
    assert not any("stop my lamp" in sub.lower() for sub in plan.sub_questions), plan.sub_questions
    assert plan.sub_questions[0].startswith("How do I stop it when my lamp keeps getting covered"), plan


def test_them_after_a_scene_is_not_a_phrase_that_leans_back_itself() -> None:
    # "My backend servers only see HAProxy's IP address in their logs. How do I pass the real client IP to
    # them?" asked "How do I pass the real client IP to their logs?"
    plan = keyword_plan(
        "My lamp keepers only see the harbour's light in their logs. How do I send the ship's name to them?",
        5,
    )
    assert plan.sub_questions[0] == "How do I send the ship's name to my lamp keepers?", plan.sub_questions


def test_how_much_is_no_topic() -> None:
    # the Debian handbook: "Users keep filling up the /home disk; how can I limit how much space each user can
    # use?" took "much" for its topic, searched "much" and filled the report with "much more"
    question = "Keepers keep filling up the oil store; how can I limit how much oil each lamp can burn?"
    plan = keyword_plan(question, 5, rarity={"much": 0.29, "oil": 0.3, "oil store": 0.01, "lamp": 0.2})
    assert "much" not in plan.queries and plan.topic != "much", plan
    # ... nor a word a passage is ranked by (the installer's "much more" outranked the quota page)
    assert "much" not in content_tokens(question) and "oil" in content_tokens(question)
    assert not any(sub.startswith("What is much") for sub in plan.sub_questions), plan.sub_questions
    # ... nor part of one ("How much memory does the cache use?" asked "What is much memory?")
    plan = keyword_plan(
        "How much oil does a lamp burn?", 5, rarity={"oil": 0.01, "much oil": 0.01, "lamp": 0.3}
    )
    assert not any("much oil" in sub for sub in plan.sub_questions[1:]), plan.sub_questions


@pytest.mark.parametrize(
    ("question", "word"),
    [
        # aptitude and diffutils (session 37): the topics "else" and "change" were searched on their own
        ("How do I keep one lamp dark while still lighting everything else?", "else"),
        ("How can I see what a lantern would change before it touches my lamp?", "change"),
        # mutt (session 38): "settings such as the sort order" asked "How is settings such configured?"
        ("How do I change settings such as the wick length for each lamp I light?", "such"),
        ("How do I change settings such as the wick length depending on which lamp I light?", "depending"),
    ],
)
def test_else_after_everything_and_a_verb_after_its_modal_are_no_topic(question: str, word: str) -> None:
    rarity = {**_RARITY, "else": 0.001, "change": 0.001, "such": 0.001, "depending": 0.001}
    rarity |= {"lamp": 0.4, "dark": 0.4}
    plan = keyword_plan(question, 5, rarity=rarity)
    assert word not in plan.topic.split() and word not in plan.queries, plan
    assert not any(f" {word} configured" in sub for sub in plan.sub_questions), plan


def test_which_things_an_auxiliary_asks_about_keep_their_verb() -> None:
    # "which proxies does mod_remoteip trust": the auxiliary comes before its subject (no "trust with X")
    assert [p.text for p in noun_phrases("Which lamps does lampctl trim")] == ["lampctl"]
    words = [w for p in noun_phrases("What does the else clause of a loop do") for w in p.text.split()]
    assert "else" in words  # Python's "else clause" is a thing


def test_an_aside_between_dashes_is_read_as_one_in_brackets() -> None:
    # django (session 38): "Which session backend should I choose — database, cache, or signed cookies —?"
    plan = keyword_plan("Which lamp should I light — oil, gas, or candle — and what are the costs?", 5)
    assert plan.sub_questions[0] == "Which lamp should I light (oil, gas, or candle)?", plan.sub_questions
    plan = keyword_plan("How do I trim a wick – and why does it smoke?", 5)
    assert not any("–" in sub for sub in plan.sub_questions), plan.sub_questions


def test_why_after_a_scene_asks_why_of_it_and_then_the_rest() -> None:
    # django (session 38): "My Django list page runs hundreds of SQL queries. Why, and how do I cut the number
    # of queries?" lost its "why" ("runs" was read as a noun of the subject, and "Why," ended no statement)
    plan = keyword_plan("My harbour lamp burns hundreds of wicks. Why?", 5)
    assert plan.sub_questions[0] == "Why does my harbour lamp burn hundreds of wicks?", plan.sub_questions
    plan = keyword_plan("My harbour lamp burns hundreds of wicks. Why, and how do I stop it?", 5)
    assert plan.sub_questions[:2] == [
        "Why does my harbour lamp burn hundreds of wicks?",
        "How do I stop my harbour lamp?",
    ], plan.sub_questions
