"""A fifteenth reading (the plans of the fourteenth's CMake and BIND 9 questions - bench/quality/JOURNAL.md,
session 45): each case is the smallest question that was planned wrong there, with its defect in a comment."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.reading.leaning import leans_back
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages
from deepresearch.report.digest import warns
from deepresearch.report.links import sanitize_links
from deepresearch.search.documents import extract_text


def _phrases(clause: str) -> list[str]:
    return [phrase.text for phrase in noun_phrases(clause)]


def test_an_example_after_like_stands_for_its_kind() -> None:
    # "Why does CMake warn me about policies like CMP0048, and how should I set them?": every query and
    # sub-question was about CMP0048, none about policies; the pages on policies were never read
    rarity = {"lw0048": 0.001, "rules": 0.2, "lampworks": 0.9}  # the program's name is on every page
    question = "Why does Lampworks warn me about rules like LW0048, and how should I set them?"
    plan = keyword_plan(question, 6, rarity=rarity)
    assert plan.topic == "rules", plan
    assert "How should I set rules?" in plan.sub_questions, plan.sub_questions
    assert not any("LW0048" in sq for sq in plan.sub_questions[1:]), plan.sub_questions
    # ... also after "such as"
    plan = keyword_plan("Why does Lampworks warn me about rules such as LW0048?", 6, rarity=rarity)
    assert plan.topic == "rules", plan
    # ... but not after a verb: "would like the keeper to" names no example
    plan = keyword_plan("I would like the lamp keeper to trim wicks. How do I train a lamp keeper?", 6)
    assert plan.topic == "a lamp keeper", plan


def test_a_scene_no_question_points_back_at_is_not_the_topic() -> None:
    # "We want employees inside our network ... Can one BIND server do split DNS, and how?": the topic was
    # "employees" (a rare word in a manual); the DNSSEC guide's parable of a company's employees was quoted
    rarity = {"deckhands": 0.01, "split mooring": 0.04, "split": 0.1, "mooring": 0.2, "harbour": 0.6}
    question = (
        "We want deckhands on our ship to use the inner quay, while visitors only see the public berths. "
        "Can one harbour do split mooring, and how?"
    )
    assert keyword_plan(question, 6, rarity=rarity).topic == "split mooring"
    # ... while a name in the scene is still what it is about (git-dev's "Colleagues on Windows commit files
    # where every line shows as changed because of CRLF. How do I get consistent line endings?")
    rarity = {"crlf": 0.01, "consistent wick lengths": 0.05, "wick lengths": 0.05, "consistent": 0.2}
    question = "Keepers commit logs where every wick shows as changed because of CRLF. "
    question += "How do I get consistent wick lengths?"
    assert keyword_plan(question, 6, rarity=rarity).topic == "CRLF"
    # ... and so is one written in capitals with a slash ("I turned on HTTP/2 but ... fall back to HTTP/1.1.
    # What is going wrong?" was about HTTP/1.1 once "HTTP/2", no identifier, counted as the asker's scene)
    rarity = {"lamp/2": 0.02, "lamp/1.1": 0.05, "wicks": 0.3}
    question = "I turned on LAMP/2 but wicks stall and keepers fall back to LAMP/1.1. What is going wrong?"
    assert keyword_plan(question, 6, rarity=rarity).topic == "LAMP/2"
    # ... and a question that points back at the scene is still about it
    rarity = {"deckhands": 0.01, "merge": 0.2, "roster": 0.3}
    plan = keyword_plan("I counted the deckhands twice in the roster. How do I merge them?", 6, rarity=rarity)
    assert plan.topic == "the deckhands", plan


def test_a_sixteenth_readings_scenes_set_no_topic() -> None:
    # Varnish's and R's manuals (session 45, /tmp/probe32): "Our cache server has 32 GB of RAM ..." asked "How
    # do 32 GB differ?"; "Since this morning some users get ... 503 ..." had the topic "morning"
    rarity = {"32 gb": 0.01, "200 gb": 0.01, "ram": 0.03, "malloc": 0.05, "file storage backend": 0.1}
    rarity |= {"storage backend": 0.1, "backend": 0.5, "storage": 0.3, "file": 0.6, "lampd": 0.9}
    question = (
        "Our lamp server has 32 GB of RAM, but the wicks we want to keep add up to about 200 GB. Should we "
        "use the malloc or the file storage backend in Lampd, and how do they differ?"
    )
    plan = keyword_plan(question, 6, rarity=rarity)
    assert plan.topic == "the malloc or the file storage backend", plan
    assert "How do the malloc and the file storage backend differ?" in plan.sub_questions, plan.sub_questions
    # ... a measure is no topic, as a figure is not
    rarity = {"10 gb": 0.001, "gb": 0.002, "10": 0.01, "lamp": 0.2}
    plan = keyword_plan("My lamp holds 10 GB of oil. Why?", 6, rarity=rarity)
    assert plan.topic != "10 GB", plan
    # ... nor a formula's figures ("Why does 0.1 + 0.2 == 0.3 return FALSE in R?" had the topic "0.3 return")
    question = (
        "Why does 0.1 + 0.2 == 0.3 return FALSE in Lampd, and how should I compare wick lengths instead?"
    )
    assert (
        "0.3" not in keyword_plan(question, 6, rarity={"0.1": 0.01, "0.3": 0.01, "wick lengths": 0.1}).topic
    )
    rarity = {"morning": 0.01, "503 errors": 0.05, "errors": 0.3}
    question = (
        "Since this morning some keepers get a dark lamp. How do I find out what is causing these 503 errors?"
    )
    assert keyword_plan(question, 6, rarity=rarity).topic == "503 errors"


def test_a_quoted_message_ends_its_statement_and_the_asked_name_is_told() -> None:
    # "find_package fails with 'Could not find a package configuration file provided by Foo'. Where does
    # CMake look for FooConfig.cmake and how do I tell it where my package is installed?": the quote's full
    # stop ended no clause, so the first question was lost, and "it" was "find_package fails"
    question = (
        "lamp_find fails with 'Could not find a wick file provided by Foo'. Where does Lampctl look for "
        "FooWick.conf and how do I tell it where my wick is installed?"
    )
    sub_questions = keyword_plan(question, 6).sub_questions
    assert sub_questions[:2] == [
        "Where does Lampctl look for FooWick.conf?",
        "How do I tell Lampctl where my wick is installed?",
    ], sub_questions


def test_what_is_confirmed_is_what_the_statement_says_happens() -> None:
    # "My BIND resolver returns SERVFAIL for one domain and I suspect DNSSEC validation. How do I confirm it
    # and troubleshoot it?" asked "How do I confirm my BIND resolver ...?" once "returns" was read as a verb
    question = "My lamp monitor returns SOOTFAIL for one lamp and I suspect the wick. How do I confirm it"
    question += " and fix it?"
    plan = keyword_plan(question, 6)
    assert (
        plan.sub_questions[0] == "How do I confirm my lamp monitor returns SOOTFAIL for one lamp and fix it?"
    )
    # ... "it" done otherwise to is still the statement's subject
    plan = keyword_plan("My lamp monitor shows a red light. How do I repaint it?", 6)
    assert plan.sub_questions[0] == "How do I repaint my lamp monitor?", plan.sub_questions


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        # "Can one BIND server do split DNS": "do" is the verb, "split DNS" its object (the topic was lost)
        ("Can one lamp keeper do split trimming", ["one lamp keeper", "split trimming"]),
        ("Why does my lamp do a full burn", ["my lamp", "a full burn"]),
        # "How does dnssec-policy handle key rollovers automatically": an adverb before the end hid the verb
        ("How does wick-policy handle wick rollovers automatically?", ["wick-policy", "wick rollovers"]),
        # "My BIND resolver returns SERVFAIL for one domain": a verb in -s before a keyword in capitals
        ("My lamp monitor returns SOOTFAIL for one lamp", ["My lamp monitor", "SOOTFAIL", "one lamp"]),
        ("How do I confirm my lamp monitor returns SOOTFAIL?", ["my lamp monitor", "SOOTFAIL"]),
        # "Why does my query plan show SCAN TABLE?" ("my query plan show SCAN" was a phrase)
        ("Why does my lamp plan show SCAN WICK?", ["my lamp plan", "SCAN WICK"]),
        # "... for a small office and I'd like it to send ...": "I'd" is a pronoun, no word of a noun
        (
            "I trim wicks in a small cabin and I'd like brighter lamps",
            ["wicks", "a small cabin", "brighter lamps"],
        ),
        # "find_package fails with ...": a verb in -s after a name in code (not after a possessive)
        ("lamp_find fails with a message", ["lamp_find", "a message"]),
        ("How do mod_lamp's options for a wick differ", ["mod_lamp's options", "a wick"]),
        # "tell R which encoding the file uses": a question inside the clause has its verb
        ("How do I tell Lampd which wick the lamp uses", ["Lampd", "wick", "the lamp"]),
        # "... with rm() and ran gc()": a verb after a call and "and"
        ("I trimmed the wicks with trim() and ran dry()", ["the wicks", "trim()", "dry()"]),
        # "Every time I start R ...": a time said in passing
        ("Every time I light the lamp it smokes", ["the lamp"]),
        # "How does lazy evaluation of function arguments work in R": "evaluation" was taken for the verb
        ("How does lazy trimming of lamp wicks work in winter", ["lazy trimming", "lamp wicks", "winter"]),
        # "Why does 0.1 + 0.2 == 0.3 return FALSE in R": "0.2" was taken for the verb
        ("Why does 0.1 + 0.2 == 0.3 return FALSE in Lampd", ["0.1 0.2 0.3", "FALSE", "Lampd"]),
        # "twice" says how often, it is no noun
        ("I counted the deckhands twice in the roster", ["the deckhands", "the roster"]),
        # "How do I configure forwarding": a gerund that ends the clause is the verb's object ...
        ("How do I configure trimming", ["trimming"]),
        # ... unless the verb takes a gerund
        ("I keep trimming", []),
        # "How can I make the exported target use the installed include directory?": "target use" was a noun
        (
            "How can I make the exported lamp shade use the installed wick holder?",
            ["the exported lamp shade", "the installed wick holder"],
        ),
        # ... while one word after the causative's determiner is made something, not an agent
        ("How do I make the default wick the same", ["the default wick"]),
    ],
)
def test_verbs_the_chunker_took_for_nouns(clause: str, expected: list[str]) -> None:
    assert _phrases(clause) == expected


def test_a_warning_word_in_a_name_warns_of_nothing() -> None:
    # the DNSSEC guide's acknowledgements ("Thanks to ... Vicky Risk ...") pointed "Disagreements and risks"
    # at a limitations section as if it held a warning
    assert not warns("Thanks to the following keepers: Petra Lamp, Vicky Risk and Alan Doe.")
    assert warns("An untrimmed wick is a fire risk.")
    assert warns("Risk: the oil may spill when the lamp is tilted.")
    assert warns("The Lamp Risk of a cabin is high.") is False  # a title-cased name, as in a heading


def test_a_short_step_is_quoted_with_the_steps_before_it() -> None:
    # BIND's "... rndc freeze zone. This updates the zone file with the changes stored in its .jnl file.
    # Then, edit the zone file. Finally, run rndc thaw zone ...": the third step was never quoted (too short)
    text = (
        "To change a lamp by hand, follow these steps: first, close the oil valve with the keeper's key. "
        "This empties the wick of the oil stored in its tray. Then, trim the wick. Finally, open the valve "
        "again to light the lamp at dusk."
    )
    said = [quote.text for quote in quotes(text, 1, ("Lamps",))]
    assert any(q.endswith("stored in its tray. Then, trim the wick.") for q in said), said
    # ... not a short sentence that leans on nothing quotable
    said = [quote.text for quote in quotes("Lamps. Then, trim the wick.", 1, ("Lamps",))]
    assert said == [], said


def _page_quotes(body: str) -> list[str]:
    page = f"<html><head><title>Lamps</title></head><body><h1>Lamps</h1><h2>Trim</h2>{body}</body></html>"
    text = extract_text(Path("lamp.html"), page.encode()).text
    return [q.text for p in heading_passages(text) for q in quotes(p.text, 1, p.headings)]


def test_a_short_sample_inside_a_sentence_is_quoted_with_it() -> None:
    # R's "Writing R Extensions": "A directive of the form</p><pre>export(f, g)</pre><p>specifies that the
    # variables f and g are to be exported." - a NAMESPACE how-to quoted no directive at all
    said = _page_quotes(
        "<p>The keeper's file holds directives for each lamp. A directive of the form</p>"
        "<pre>trim(f, g)</pre><p>specifies that the wicks <code>f</code> and <code>g</code> are to be "
        "trimmed. The keeper reads each directive in order at dusk.</p>"
    )
    assert "A directive of the form `trim(f, g)` specifies that the wicks f and g are to be trimmed." in said
    assert "The keeper reads each directive in order at dusk." in said, said
    # ... and one the sentence ends on ("... can be done by something like read.table(...)")
    said = _page_quotes(
        "<p>A lamp of another make needs its oil named, which can be done by something like</p>"
        '<pre>light("lamp.dat", oil="whale")</pre><p>Note that this works for any lamp of the harbour.</p>'
    )
    sample = '`light("lamp.dat", oil="whale")`'
    assert f"A lamp of another make needs its oil named, which can be done by something like {sample}" in said
    # ... not a caption in words between two paragraphs
    said = _page_quotes(
        "<p>The keepers are listed in the table below</p><p>Keepers of the harbour</p><p>each of them trims "
        "the wicks at dusk.</p>"
    )
    assert not any("`" in quote for quote in said), said


def test_this_after_an_opening_phrase_without_a_comma_leans_back() -> None:
    # Varnish's grace page: "In some products this is called request coalescing ..." opened Findings, its
    # antecedent quoted in the Summary
    said = _page_quotes(
        "<p>When several keepers ask for the same lamp the harbour sends one boy and keeps the others "
        "waiting. In some harbours this is called lamp pooling and the keepers do it by hand.</p>"
    )
    pooling = "In some harbours this is called lamp pooling and the keepers do it by hand."
    assert any(q.startswith("When several") and q.endswith(pooling) for q in said), said


def test_a_sessions_rules_of_dashes_are_no_prose() -> None:
    # Varnish's CLI page: "Using old SHMFILE Platform: Linux,... ----------------------------- Varnish Cache
    # CLI. ----------------------------- Type 'help' for command list [1]." was cited as a finding
    said = _page_quotes(
        "<p>The keeper starts the lamp console and sees its greeting at the top of the screen.</p><pre>"
        "200 193\n-----------------------------\nLamp Keeper CLI version 2 for the harbour.\n"
        "-----------------------------\nType 'help' for the list of commands you can give.</pre>"
    )
    assert not any("-----" in quote for quote in said), said


def test_a_texinfo_footnotes_number_is_no_part_of_the_word_before_it() -> None:
    # R's manuals: "Terminal25", ".Rprofile23", "available.31 On most systems ..." (two sentences, one cite)
    said = _page_quotes(
        '<p>The keeper trims the wick at the Terminal<a id="DOCF25" href="#FOOT25"><sup>25</sup></a> before '
        'dusk every night. Each lamp is filled with whale oil.<a id="DOCF3" href="#FOOT3"><sup>3</sup></a> '
        "The oil comes from the harbour stores at noon.</p>"
    )
    assert "The keeper trims the wick at the Terminal before dusk every night." in said, said
    assert "Each lamp is filled with whale oil." in said, said


def test_the_review_of_these_rules() -> None:
    # a question that stops on a determiner after "which ... " ("which encoding the") had raised IndexError
    assert [phrase.text for phrase in noun_phrases("which encoding the")] == ["encoding"]
    # "that" after the opening phrase is a relative pronoun there, no demonstrative
    assert not leans_back("For a lamp that has no wick, the keeper uses a candle.")
    # a "like" after an adverb or a verb names no example
    rarity = {"lampd": 0.01, "dusk": 0.3}
    assert keyword_plan("I would really like Lampd to light at dusk. How?", 6, rarity=rarity).topic == "Lampd"
    # "confirm it is ..." confirms a clause of its own: "it" is its subject there
    question = "My lamp monitor returns SOOTFAIL for one lamp. How do I confirm it is the wick?"
    assert "returns SOOTFAIL" not in keyword_plan(question, 6).sub_questions[0]
    # a sentence's first word is no name: "Data Loss" warns
    assert warns("Data Loss may occur when the lamp tilts.")
    # a sentence that ends on its sample at the passage's end is quoted; a glued sentence that leans back is
    # read with the sentence before it; a table's row is no sample
    said = _page_quotes(
        "<p>A lamp of another make needs its oil named, which can be done by something like</p>"
        '<pre>light("lamp.dat", oil="whale")</pre>'
    )
    sample = '`light("lamp.dat", oil="whale")`'
    assert said == [
        f"A lamp of another make needs its oil named, which can be done by something like {sample}"
    ]
    said = quotes(
        "The keeper trims every wick of the harbour lamps at dusk. This keeper writes a directive for the "
        "lamp in the form\n\n`trim(f, g)`\n\nwhere f and g are the wicks that are to be trimmed at dusk.",
        1,
        ("Lamps",),
    )
    assert any("`trim(f, g)` where f and g" in quote.text for quote in said), said
    said = quotes(
        "Keeper notes of the harbour\n\n| a (b) | c |\n\nwhere a is the lamp and c is the wick.", 1, ("L",)
    )
    assert not any("| a (b) | c |" in quote.text for quote in said), said
    # two placeholders side by side stay two code spans
    assert sanitize_links("$<LAMP:a>$<WICK:b>", set(), quoted=True)[0] == "`$<LAMP:a>`$`<WICK:b>`"
