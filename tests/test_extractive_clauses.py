"""Sub-questions from questions written the way people write them (issue [quality] part 2): a statement that
sets the scene before the question, a later clause that says "that" or names nothing ("and what should I be
careful about?"), a vague noun that is no subject ("a certain port"); and the best page's first sections as
evidence whatever words they use. Invented domains, so nothing here is tuned on the quality sets."""

from __future__ import annotations

import pytest

from bench.quality.grammar import grammar_problems
from deepresearch.extractive.asking.phrases import noun_phrases, verbs
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.inflection import gerund, plural_word
from deepresearch.extractive.reading.text import content_tokens, plain_words
from deepresearch.extractive.screening import passages_of, rank_passages
from tests._planning_helpers import planned as _plan


def test_a_statement_sets_the_scene_and_is_no_sub_question() -> None:
    # "it" is the statement's subject, not the question's topic; the statement is not asked as a question
    sub_questions = _plan(
        "My lighthouse is flashing all night; how can I see which ships it is signalling right now?"
    )
    assert sub_questions[0] == "How can I see which ships my lighthouse is signalling right now?"
    assert not any(sq.startswith("My lighthouse is flashing") for sq in sub_questions)
    # "them" is the plural noun the statement names
    boats = _plan("I own hundreds of small boats; can the harbour moor them without a berth for each one?")
    assert boats[0] == "Can the harbour moor small boats without a berth for each one?"
    # a sentence ending in a full stop is a statement too, and its subject is a name followed by its verb
    ropes = _plan(
        "Knotbook asks for my rope size and knot type on every splice. How can I make it remember them?"
    )
    assert ropes[0] == "How can I make Knotbook remember my rope size and knot type?"


def test_an_abbreviation_ends_no_sentence() -> None:
    assert _plan("Can I moor a dinghy, e.g. Optimist, at the harbour wall?")[0] == (
        "Can I moor a dinghy, e.g. Optimist, at the harbour wall?"
    )


def test_a_question_that_names_nothing_of_the_scene_carries_it() -> None:
    question = "I raised the storm jib but the boat still heels and the rudder stalls. What is going wrong?"
    sub_questions = _plan(question)
    assert sub_questions[0] == (
        "What is going wrong when I raised the storm jib but the boat still heels and the rudder stalls?"
    )
    assert grammar_problems(sub_questions[0], question) == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "that" stands for what the clause before asks to do
        (
            "Why would I reef the mainsail early, and when is that a bad idea?",
            "When is reefing the mainsail early a bad idea?",
        ),
        (
            "How can I make the winch hold the halyard, and is that safe?",
            "Is making the winch hold the halyard safe?",
        ),
        # a clause that shares no word with the rest is about the first clause's task, or the topic
        (
            "How do I tar a rope end, and what should I be careful about?",
            "What should I be careful about when tarring a rope end?",
        ),
        (
            "What does the bilge pump remove, and when can oily water really be lost?",
            "When can oily water really be lost with the bilge pump?",
        ),
        # "their" is resolved like "its" - to the kind, not to its example after "like"
        (
            "Where do hull numbers like HN-42-b7 come from and what do their parts mean?",
            "What do the parts of hull numbers mean?",
        ),
    ],
)
def test_a_later_clause_says_what_it_is_about(question: str, expected: str) -> None:
    assert expected in _plan(question)


@pytest.mark.parametrize(
    "question",
    [
        "How do I tar a rope end, and what should I be careful about?",
        "How do I hoist the storm jib, and when is that a bad idea?",
        "How do I splice a mooring line, and is it risky?",
        "How do I varnish the tiller, and is it dangerous?",
        "How do I reef the mainsail, and what precautions should I take?",
    ],
)
def test_a_question_that_asks_what_can_go_wrong_has_no_limitations_aspect(question: str) -> None:
    # the question asks it in its own words: "What are the limitations of ...?" would ask it twice
    assert not any(sq.startswith("What are the limitations of") for sq in _plan(question)), _plan(question)


def test_a_question_that_does_not_ask_it_still_has_one() -> None:
    assert "What are the limitations of tarring a rope end?" in _plan("How do I tar a rope end?")


def test_what_is_is_asked_only_of_the_subject_or_a_name() -> None:
    port = _plan(
        "Are harbour signals real radio messages, and how can I send one only to ships from a certain port?"
    )
    assert not any("certain port" in sq and sq.startswith(("What is", "What are")) for sq in port)
    bow = _plan("Is it better to stow the anchor in the bow or lash it to the deck?")
    assert "What is the bow?" not in bow and "What are the limitations of the bow?" not in bow
    # a coordination is asked about item by item only when the question compares the items
    login = _plan("Knotbook asks for my rope size and knot type. How can I make it remember them?")
    assert "What is rope size?" not in login
    # ... and still when it does
    rigs = _plan("How do the sloop, ketch and schooner rigs differ?")
    assert "What is the ketch rig?" in rigs
    # a name is asked about wherever it stands ... but an example of a kind the question names is not
    assert "What is HN-42-b7?" in _plan("Where does the rigging plan of HN-42-b7 come from?")
    assert "What is HN-42-b7?" not in _plan("Where do hull numbers like HN-42-b7 come from?")


def test_the_best_page_s_first_sections_are_evidence_whatever_their_words() -> None:
    # the question says "gzip"; the page that answers it says "pressing" in its first sections, and its
    # title does not name the topic either
    answer = (
        "# Pressing sails\n\n## Overview\n\nSail pressing is done by the folding filter, which packs the "
        "cloth before it leaves the loft.\n\n## Enabling the filter\n\nThe folding filter is switched on per "
        "loft with one directive.\n\n## Gzip notes\n\nA gzip bag holds a gzip sail; gzip it twice.\n"
    )
    other = "# Bags\n\n## Bags\n\nA bag may say gzip on its label.\n"
    sources = [
        {"id": "S1", "n": 1, "title": "Pressing sails", "text": answer},
        {"id": "S2", "n": 2, "title": "Bags", "text": other},
    ]
    question = "How do I gzip what the loft sends?"
    ranked = rank_passages(question, [question], passages_of(sources), 1, topic="gzip")
    leads = [p["headings"][-1] for _, p in ranked[0] if p.get("lead") and p["n"] == 1]
    assert leads[:2] == ["Overview", "Enabling the filter"]


def test_the_words_that_frame_a_question_choose_no_page() -> None:
    # "what should I be careful about" asks for the answer's limits: the page that says "careful" in a
    # heading of its own is not the page about gzipping sails
    answer = (
        "# Pressing sails\n\n## Overview\n\nThe folding filter gzips each sail before it leaves. A gzip sail "
        "is half the size.\n\n## Notes\n\nA sail gzipped twice tears at the seams.\n"
    )
    other = (
        "# Harbour rules\n\n## careful-mooring\n\nMoor carefully: careful crews tie two lines, and a "
        "careful skipper checks both.\n\n## Labels\n\nA bag may say gzip on its label, and a gzip bag "
        "holds sails.\n"
    )
    sources = [
        {"id": "S1", "n": 1, "title": "Pressing sails", "text": answer},
        {"id": "S2", "n": 2, "title": "Harbour rules", "text": other},
    ]
    question = "How do I gzip the sails the loft sends, and what should I be careful about?"
    passages = passages_of(sources)
    rank_passages(question, [question], passages, 1, topic="gzip")
    relevance = {p["n"]: p["page"] for p in passages}
    assert relevance[1] > relevance[2], relevance


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        # after "why is" / "how is" the subject has a predicate: "slow" is what the log is, not its name
        ("Why is my harbour log slow?", "harbour log"),
        ("Why is the tide table empty after midnight?", "the tide table"),
        ("Why is my mooring missing after the storm?", "mooring"),
        ("Why is the keel bolt corroded?", "the keel bolt"),  # a participle, as before
        # "What is X?" and "Where is X?" may end on their subject
        ("Where is the tide table?", "the tide table"),
        ("What is the tide table?", "the tide table"),
    ],
)
def test_the_predicate_after_why_is_is_not_part_of_the_topic(question: str, topic: str) -> None:
    plan = keyword_plan(question, max_queries=6)
    assert plan.topic == topic, plan
    assert not any(
        sq.startswith("What is") and sq.endswith(("slow?", "empty?", "missing?")) for sq in plan.sub_questions
    )


def test_a_singular_noun_ending_in_s_is_asked_about_in_the_singular() -> None:
    sub_questions = _plan("How does a lighthouse lens concentrate the lamp's light?")
    assert "What is a lighthouse lens?" in sub_questions, sub_questions
    assert not plural_word("the lens") and not plural_word("the gas") and not plural_word("a class")
    assert plural_word("the lanterns") and plural_word("the buoys")


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # "the difference between X and Y" asks about X and Y, not about "the difference"
        (
            "What is the difference between the harbour crane and the dock winch?",
            ["What is the harbour crane?", "What is the dock winch?"],
        ),
        # each member with its own article, sharing the last one's noun
        (
            "What is the difference between a sloop and a ketch rig?",
            ["What is a sloop rig?", "What is a ketch rig?"],
        ),
        # a lower-case word after "and" starts a member, it is no verb
        (
            "What is the difference between the spinnaker and jib Sails?",
            ["What is the spinnaker Sail?", "What is the jib Sail?"],
        ),
        # a command line keeps its options, and a bare option is one of the same command
        (
            "What is the difference between knotctl tie -s tight and knotctl tie -X tight?",
            ["What is knotctl tie -s tight?", "What is knotctl tie -X tight?"],
        ),
        (
            "What is the difference between knotctl tie --loose and --firm?",
            ["What is knotctl tie --loose?", "What is knotctl tie --firm?"],
        ),
    ],
)
def test_the_things_a_question_compares_are_asked_about_one_by_one(question: str, asked: list[str]) -> None:
    sub_questions = _plan(question)
    assert sub_questions[1:3] == asked, sub_questions
    assert not any("difference work" in sq for sq in sub_questions)


@pytest.mark.parametrize(
    ("question", "word"),
    [
        # a verb after "to" that acts on a name is no part of the topic
        ("Is it safe to hoist SPINNAKER while the crew is tacking?", "hoist"),
        # a verb after "but" that takes an object ("but keep my ropes")
        ("How can I untie the last knot but keep my ropes?", "keep"),
        # a number or a quantifier is no topic
        ("How do I split a mooring line into two?", "two"),
        ("How does the harbour pick a berth when several could be used?", "several"),
    ],
)
def test_verbs_and_numbers_are_no_topic(question: str, word: str) -> None:
    # as in a corpus where the verb, the number or the quantifier is the rarest word of the question
    rarity = {w: 0.3 for w in question.lower().strip("?").split()} | {word: 0.001}
    plan = keyword_plan(question, 6, rarity=rarity)
    assert plan.topic and word not in plan.topic.lower().split(), plan


def test_a_gerund_doubles_the_consonant_of_a_stressed_last_syllable() -> None:
    assert [gerund(v) for v in ("split", "commit", "run", "edit", "limit", "offer", "prefer", "rotate")] == [
        "splitting",
        "committing",
        "running",
        "editing",
        "limiting",
        "offering",
        "preferring",
        "rotating",
    ]
    # CMake: "What are the limitations of debuging generator expressions?"
    assert [gerund(v) for v in ("debug", "defer", "target")] == ["debugging", "deferring", "targeting"]


def test_am_is_a_name_unless_it_follows_i() -> None:
    # "knotctl am" is a command, as "git am" is: "am" is the verb "to be" only after "I"
    plan = keyword_plan("What should I do when knotctl am stops because a splice from the locker slips?", 6)
    assert any("knotctl am" in query for query in plan.queries), plan.queries
    assert "am" in content_tokens("knotctl am") and "am" in plain_words("knotctl-am(1)")
    assert "am" not in content_tokens("I am splicing a rope") + plain_words("I am splicing a rope")
    assert verbs("Why does knotctl am reject my splice?") == ["reject"]


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        # a verb with its particle ("give back") is the clause's verb: the run after "does" is all subject
        (
            "What does the MOORING clause on a sloop, ketch or yawl give back, and what are its limits?",
            "the MOORING clause",
        ),
        ("How do I clean up the old harbour charts?", "the old harbour charts"),
    ],
)
def test_a_verb_with_its_particle_is_the_clauses_verb(question: str, topic: str) -> None:
    assert keyword_plan(question, 6).topic == topic


@pytest.mark.parametrize(
    "question",
    [
        # without a verb further on, the run's last word before a preposition is still the verb ...
        "Why does the winch crash on load?",
        # ... and a verb of the next clause is that clause's
        "Why does the winch crash on load, and does the cable snap on impact?",
    ],
)
def test_the_last_word_before_a_preposition_is_the_verb_when_the_clause_has_no_other(question: str) -> None:
    phrases = [p.text for p in noun_phrases(question)]
    assert phrases[:2] == ["the winch", "load"], phrases


@pytest.mark.parametrize(
    "question", ["How am I supposed to splice a mooring line?", "Am I supposed to grease the winch by hand?"]
)
def test_am_next_to_i_is_the_verb(question: str) -> None:
    plan = keyword_plan(question, 6)
    assert plan.topic and plan.topic.lower() != "am", plan
    assert not any("am" in content_tokens(query) for query in plan.queries), plan.queries
    assert "am" not in content_tokens(question)


@pytest.mark.parametrize(
    ("graded", "plain"),
    [("older", "old"), ("oldest", "old"), ("larger", "large"), ("latest", "late"), ("bigger", "big")],
)
def test_a_comparative_is_its_adjective(graded: str, plain: str) -> None:
    # "Why avoid resuming from an old checkpoint?" is answered by "Resuming from an older checkpoint ..."
    assert content_tokens(f"an {graded} checkpoint") == content_tokens(f"an {plain} checkpoint")
    assert plain_words(f"{graded}-checkpoint") == plain_words(f"{plain}-checkpoint")


@pytest.mark.parametrize(
    "word", ["filter", "user", "water", "order", "master", "hardier", "widener", "earlier"]
)
def test_a_word_that_merely_ends_in_er_keeps_it(word: str) -> None:
    # a rule on every -er would make "filter" "filt"; "hardier" is not "hard", "earlier" not "ear"
    assert content_tokens(word) == [word]


def test_things_compared_with_vs_are_asked_about_one_by_one() -> None:
    # "What is typing.Protocol vs abc.ABC?", "How do git merge vs git rebase work?" and "Typing.Protocol vs
    # abc.ABC?" (a code name capitalised, and no question word) were the sub-questions of such questions
    assert _plan("lamp.Wick vs horn.Bell?") == [
        "How do lamp.Wick and horn.Bell compare?",
        "What is lamp.Wick?",
        "What is horn.Bell?",
        "What are the limitations of lamp.Wick and horn.Bell?",
    ]
    sub_questions = _plan("When should a keeper use the oil lamp versus the gas lamp in fog?")
    assert sub_questions[1:3] == ["What is the oil lamp?", "What is the gas lamp?"], sub_questions
    assert not any(" versus " in sq or " vs " in sq for sq in sub_questions[1:]), sub_questions
    # "Is X or Y better ...?": better is asked of both, not a word of the last ("What is a horn better?")
    assert _plan("Is a foghorn or a bell better for thick fog?")[1:3] == [
        "What is a foghorn?",
        "What is a bell?",
    ]
    # a capitalised keyword pair stays whole before "versus the default" (it was "What is LIGHT OR?": the
    # last word was taken for a verb before "the default")
    sub_questions = _plan(
        "What happens to the beam with LIGHT OR DIM versus LIGHT OR FLASH versus the default?"
    )
    assert sub_questions[1:3] == ["What is LIGHT OR DIM?", "What is LIGHT OR FLASH?"], sub_questions
    # three things compared are three ("lamp vs horn vs bell" lost the bell), with "vs." too; "VS Code" and
    # "does vs code" name an editor, and "is it safe" reads "Is X or Y safe"
    assert _plan("lamp.Wick vs. horn.Bell vs bell.Rope?")[:4] == [
        "How do lamp.Wick, horn.Bell and bell.Rope compare?",
        "What is lamp.Wick?",
        "What is horn.Bell?",
        "What is bell.Rope?",
    ]
    assert "What is vs code?" in _plan("Why does vs code not light the lamp?")
    assert keyword_plan("How do I light the lamp from VS Code?", 6).topic == "VS Code"
    sub_questions = _plan("Should I light the oil lamp or the gas lamp, and is it safe in a storm?")
    assert "Is the oil lamp or the gas lamp safe in a storm?" in sub_questions, sub_questions
    # a question that opens on a code name keeps its case
    plan = keyword_plan("lamp.light() or lamp.dim(): which one wakes the keeper?", max_queries=6)
    assert plan.sub_questions[0] == "lamp.light() or lamp.dim(): which one wakes the keeper?"


def test_a_comparison_asks_what_is_compared_not_the_comparative_nor_the_relation() -> None:
    # "Which is faster, X or Y?" gave "What is faster?"; "the pros and cons of X" gave "What are pros?"
    sub_questions = _plan("Which is faster, the oil lamp or the gas lamp?")
    assert sub_questions[1:3] == ["What is the oil lamp?", "What is the gas lamp?"], sub_questions
    # ... but a comparative before its noun is part of the phrase ("faster storage"), and one before "to"
    # takes its verb along ("easier to configure, X or Y" asked "What is configure?")
    assert "What is faster storage?" in _plan("Is faster storage better for a lighthouse?")
    sub_questions = _plan("Which is easier to light, lamp_oil or lamp_gas in the tower?")
    assert sub_questions[1:3] == ["What is lamp_oil?", "What is lamp_gas?"], sub_questions
    # a run of nouns ends at its last one: "OIL lamp or a gas lamp" took "lamp" for a verb ("What is OIL?")
    assert "What is OIL lamp?" in _plan("Is OIL lamp or a gas lamp faster in thick fog?")
    sub_questions = _plan("What are the pros and cons of the gas lamp for a lighthouse?")
    assert "What is the gas lamp?" in sub_questions or "How does the gas lamp work?" in sub_questions
    assert not any(sq.startswith(("What are pros", "What are cons")) for sq in sub_questions), sub_questions
    # "How does X compare to Y": the verb is "compare", not the last word of X ("What is OIL?" for "OIL lamp")
    assert "What is OIL lamp?" in _plan("How does OIL lamp compare to a gas lamp for thick fog?")
    # the members are asked about together with "and": "How do the oil lamp or the gas lamp work?" is no
    # English; a capitalised OR inside a name stays ("LIGHT OR DIM")
    sub_questions = _plan("What is better: the oil lamp or the gas lamp?")
    assert "How do the oil lamp and the gas lamp work?" in sub_questions, sub_questions


def test_the_drawbacks_of_x_ask_about_x_and_them_are_the_drawbacks() -> None:
    # "What are the drawbacks of X?" asked "How do the drawbacks work?" and searched "drawbacks" alone; "the
    # limitations of X" likewise ("How do the limitations work?")
    for relation in ("drawbacks", "benefits", "limitations", "trade-offs", "advantages"):
        sub_questions = _plan(f"What are the {relation} of the gas lamp in a lighthouse?")
        assert sub_questions[1] == "How does the gas lamp work?", sub_questions
    # "... and how do I avoid them?": them are the pitfalls of X, not X ("How do I avoid the gas lamps?")
    sub_questions = _plan("What are the pitfalls of gas lamps and how do I avoid them?")
    assert sub_questions[1] == "How do I avoid the pitfalls of gas lamps?", sub_questions


@pytest.mark.parametrize(
    ("request_", "first"),
    [
        ("Compare the oil lamp with the gas lamp", "How does the oil lamp compare to the gas lamp?"),
        ("Compare oil, gas and candle light", "How do oil, gas and candle light compare?"),
        ("Explain lamp wicks", "What are lamp wicks?"),
        ("Please describe the oil lamp.", "What is the oil lamp?"),
        ("Explain how the oil lamp works", "How does the oil lamp work?"),
        ("Tell me about the gas lamp", "What is the gas lamp?"),
        # an embedded question is asked directly
        ("Explain why the lamp needs oil", "Why does the lamp need oil?"),
        ("Please explain what a wick is.", "What is a wick?"),
        ("Explain why lamps smoke at night", "Why do lamps smoke at night?"),
        ("Describe how the keeper trims wicks", "How does the keeper trim wicks?"),
        ("Explain which lamp burns longest", "Which lamp burns longest?"),
        ("Explain what happens when the wick dries", "What happens when the wick dries?"),
    ],
)
def test_a_request_is_planned_as_the_question_it_makes(request_: str, first: str) -> None:
    # "Explain git rebase" asked "What is Explain git rebase?", "Compare nginx and Apache" asked "How do
    # Compare nginx and Apache compare?"
    sub_questions = _plan(request_)
    assert sub_questions[0] == first, sub_questions
    assert not any(
        word in sq for sq in sub_questions for word in ("Explain", "Compare", "describe", "Tell")
    ), sub_questions


def test_a_yes_no_phrase_that_holds_its_verb_is_not_asked_about() -> None:
    # "Does git gc delete unreachable objects?" asked "What are git gc delete unreachable objects?": the
    # chunker cannot tell the verb from a name's word, so the phrase after the auxiliary holds it
    assert _plan("Does lamp trim cut charred wicks?") == ["Does lamp trim cut charred wicks?"]
    assert _plan("Can lampwick trim burn on ships?") == ["Can lampwick trim burn on ships?"]
    # a subject followed by its own verb is asked about as before
    assert "What is an oil lamp?" in _plan("Can an oil lamp be lit twice?")
    # ... and "how does that work?" still asks how it does it, with the verb its auxiliary agrees with
    assert _plan("Will lamp trim cut wicks after a storm, and how does that work?") == [
        "Will lamp trim cut wicks after a storm?",
        "How does lamp trim cut wicks after a storm?",
    ]


@pytest.mark.parametrize(
    ("question", "limits"),
    [
        (
            "How does Lampwick trim charred wicks?",
            "What are the limitations of how Lampwick trims charred wicks?",
        ),
        (
            "How does the keeper verify lamp wicks?",
            "What are the limitations of how the keeper verifies lamp wicks?",
        ),
        # a word with no vowel is a name's ("gc", "ctl"), not the verb
        (
            "How does wick ctl trim charred wicks?",
            "What are the limitations of how wick ctl trims charred wicks?",
        ),
    ],
)
def test_how_does_a_name_do_things(question: str, limits: str) -> None:
    # "How does Apache handle keep-alive connections?" took "connections" for the verb: it asked "What is
    # Apache handle keep-alive?" and "... of how Apache handle keep-alive connectionses?"
    sub_questions = _plan(question)
    assert limits in sub_questions, sub_questions
    assert not any("wickses" in sq or " trim charred?" in sq for sq in sub_questions), sub_questions


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        # a clause of its own ends on its verb in -s: "grows" is no word of "the offset"
        ("Why does the harbour fill up faster as the season grows", ["the harbour", "faster", "the season"]),
        ("What happens to the sail when the wind changes, and why", ["the sail", "the wind"]),
        ("How do I reef the main if the boat heels", ["the main", "the boat"]),
        # ... not after "as" that is a preposition, nor for a noun that ends the clause alone
        ("Is the mooring treated as the harbour fees", ["the mooring", "the harbour fees"]),
        ("How does the winch work when the ropes", ["the winch", "the ropes"]),
        # ... nor a longer run, which may hold the verb and its object, nor one the clause goes on past
        ("What happens if the winch holds spare ropes", ["the winch holds spare ropes"]),
        (
            "What do I do when the mooring lines in the harbour are frayed",
            ["the mooring lines", "the harbour"],
        ),
        # ... nor a comma inside a list or an aside, nor a time ("since the early days")
        (
            "What happens if the sail covers, the ropes and the fenders are lost",
            ["the sail covers, the ropes and the fenders"],
        ),
        ("How were buoys named since the early days", ["buoys", "the early days"]),
    ],
)
def test_a_subordinate_clause_ends_on_its_verb(clause: str, expected: list[str]) -> None:
    assert [p.text for p in noun_phrases(clause)] == expected
