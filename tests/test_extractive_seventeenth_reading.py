"""A seventeenth reading (bench/quality/JOURNAL.md, session 47): each case is the smallest question or page
read wrong there, with its defect in a comment. Invented lighthouse material."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepresearch.extractive.asking.clauses import quoted_stops
from deepresearch.extractive.asking.phrases import noun_phrases
from deepresearch.extractive.asking.planning import MAX_SUB_QUESTIONS, keyword_plan, lookup_phrases
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.search import CorpusIndex
from deepresearch.search.documents import extract_text
from deepresearch.search.ranking import SMALL_CORPUS


def _phrases(clause: str) -> list[str]:
    return [phrase.text for phrase in noun_phrases(clause)]


def test_a_yes_no_question_has_its_subject_and_verb() -> None:
    # "..., and should the redirect use code 301 or 302?" was one phrase, "the redirect use code 301 or 302",
    # and the plan asked "What is redirect use code 301?" and "What is 302?"
    assert _phrases("should the keeper use lens 3 or 4") == ["the keeper", "lens 3 or 4"]
    assert _phrases("should the keeper trim wicks") == ["the keeper", "wicks"]
    # ... a figure is never the verb, and what it counts or labels is the object (the review's cases)
    assert _phrases("can the tower keep 10 or 20 lamps") == ["the tower", "10 or 20 lamps"]
    assert _phrases("should the keeper use HTTP code 301") == ["the keeper", "HTTP code 301"]
    plan = keyword_plan("How do I light the lamp at dusk, and should the keeper use lens 3 or 4?", 6)
    assert {"What is lens 3?", "What is lens 4?"} <= set(plan.sub_questions), plan.sub_questions
    # ... a figure inside the subject is the subject's: "does Lampworks 15 support ..."
    assert _phrases("does Lampworks 15 support shutters") == ["Lampworks 15", "shutters"]


def test_the_verb_after_the_noun_which_asks_for() -> None:
    # "Which timeout applies to WebSocket connections and how should I set it?": the phrase was "timeout
    # applies", the topic "timeout applies" and a sub-question "What are timeout applies?"
    assert _phrases("Which signal applies to foggy nights") == ["signal", "foggy nights"]
    assert _phrases("Which keeper trims the wicks") == ["keeper", "the wicks"]
    # ... not a plural noun with its verb further on, nor a noun of two words
    assert _phrases("Which wick formats in Lampworks are sold") == ["wick formats", "Lampworks"]
    assert _phrases("Which lamp oils in the store burn")[0] == "lamp oils"


def test_a_figure_with_its_thousands_is_one_word_and_a_count_no_topic() -> None:
    # "adds about 500,000 rows with session.add() ...; what should we use instead?" asked "What should we use
    # instead of 000 rows?"; "our 40 web servers", "about 300 Order objects" were topics
    assert _phrases("we light about 500,000 lamps with a taper") == ["500,000 lamps", "a taper"]
    question = (
        "Our nightly job on tower01 records about 500,000 flashes with beacon.log() in a loop, and it takes "
        "40 minutes. Why is recording that many flashes so slow, and what should we use instead?"
    )
    plan = keyword_plan(question, 6)
    assert "What should we use instead of beacon.log()?" in plan.sub_questions, plan.sub_questions
    rarity = {"lamp keepers": 0.001, "lamp": 0.0005, "keepers": 0.3, "fog horn": 0.2, "horn": 0.2, "fog": 0.3}
    plan = keyword_plan("Our 40 lamp keepers are tired. How do we sound the fog horn?", 6, 4, rarity)
    assert plan.topic == "the fog horn", plan
    # ... a status code is no count: "Why do I get 404 errors ...?" is about them
    assert keyword_plan("Why do I get 404 errors on every page?", 6).topic == "404 errors"


def test_a_quoted_message_is_one_clause() -> None:
    # "... we get 'Parent instance <Order at 0x7f3a> is not bound to a Session; lazy load operation of
    # attribute 'customer' cannot proceed'. How do we fix this?" was cut at its ";" into a question of its own
    question = (
        "When the keeper winds the clock we get 'Weight <W at 0x7f3a> is not bound to a drum; lazy wind of "
        "attribute 'cable' cannot proceed'. It started on Friday's shift. How do we fix this?"
    )
    said = " ".join(keyword_plan(question, 6).sub_questions)
    assert "lazy wind of attribute 'cable' cannot proceed'" in said, said
    assert quoted_stops("we ran 'a; b' and c; d", {";": "|"}) == "we ran 'a| b' and c; d"
    # ... a quote that never closes masks nothing: the question after its ";" is still one of its own
    unclosed = "lamps of the '90s; how do I trim them?"
    assert quoted_stops(unclosed) == unclosed
    assert quoted_stops("the keeper's lamp; the mate's wick") == "the keeper's lamp; the mate's wick"


def test_when_something_happened_is_no_phrase() -> None:
    # "after a night without traffic, the first few requests fail": "a night" was the topic
    assert _phrases("every evening, after a night without oil, the lamp fails") == ["oil", "the lamp fails"]
    assert _phrases("it broke during the weekend") == []
    assert _phrases("after the storm I lit the lamp") == ["the storm", "the lamp"]  # not a unit of time
    assert _phrases("the lamp failed after the night shift") == ["the lamp", "the night shift"]


def test_a_verb_past_the_subjects_preposition_asks_its_own_question() -> None:
    # "How does a disk-assisted queue in rsyslog decide when to write messages to disk?": "queue" was taken
    # for the verb, the topic was "a disk-assisted" and a sub-question "What is a disk-assisted?"
    assert _phrases("How does a fog-assisted horn in Lampworks decide when to sound warnings") == [
        "a fog-assisted horn",
        "Lampworks",
        "warnings",
    ]
    plan = keyword_plan("How does a fog-assisted horn in Lampworks decide when to sound warnings?", 6)
    assert plan.topic == "a fog-assisted horn", plan


def test_what_keeps_a_thing_from_doing_has_its_verb() -> None:
    # "What can stop rsyslog from writing its output files?": the topic was "stop rsyslog", and a sub-question
    # asked "What is stop rsyslog?"
    assert _phrases("What can stop the lamp from burning") == ["the lamp", "burning"]
    assert _phrases("What could keep Lampworks from flashing its beacon") == ["Lampworks", "its beacon"]
    assert _phrases("What can Lampworks do") == ["Lampworks"]
    assert "learn" not in _phrases("What can keepers learn from reading the log")  # no "keep from" verb


_FUELS = ("whale oil", "paraffin", "colza oil", "acetylene gas", "lard", "kerosene", "coal gas")


def _manual(root: Path, pages: int, sections: int) -> None:
    """Long pages of many sections, "a graceful relight" said once on each page, "a storm" on one."""
    root.mkdir()
    for page in range(pages):
        parts = [f"# Lampworks manual, part {page}\n"]
        for section in range(sections):
            said = " A graceful relight keeps the beam turning." if section == page else ""
            storm = " Ships wait out a storm in the bay." if (page, section) == (0, 5) else ""
            burns = _FUELS[(page + section) % len(_FUELS)]
            parts.append(f"## Lamp {page}.{section}\n\nThe lamp {section} burns {burns}.{said}{storm}\n")
        (root / f"part-{page}.md").write_text("\n".join(parts))


async def test_a_small_corpus_measures_rarity_over_its_passages(tmp_path: Path) -> None:
    # HAProxy's four manuals: every word is on most pages, so "a download", said in passing in the scene,
    # was rarer than "a graceful reload", the subject asked about, and became the topic
    _manual(tmp_path / "small", pages=3, sections=10)
    small = CorpusIndex(tmp_path / "small.db", tmp_path / "small")
    await small.reindex()
    question = "Keepers worry about a storm in the night. How does a graceful relight work in Lampworks?"
    rarity = await small.document_shares(lookup_phrases(question))
    assert rarity["graceful relight"] == pytest.approx(3 / 30), rarity  # of its 30 passages, not 3 of 3 pages
    assert rarity["storm"] == pytest.approx(1 / 30), rarity
    plan = keyword_plan(question, 4, MAX_SUB_QUESTIONS, rarity)
    assert plan.topic == "a graceful relight", plan
    # ... a corpus of SMALL_CORPUS pages or more still counts pages: 3 of 20 (3 of its 60 passages)
    _manual(tmp_path / "large", pages=SMALL_CORPUS, sections=3)
    large = CorpusIndex(tmp_path / "large.db", tmp_path / "large")
    await large.reindex()
    rarity = await large.document_shares(["graceful relight", "lamp"])
    assert rarity == {"graceful relight": 3 / SMALL_CORPUS, "lamp": 1.0}, rarity


def test_a_sphinx_see_also_box_is_no_text() -> None:
    # "Configuring Logging - further detail on how to configure logging." was quoted, twice in a Summary
    page = (
        "<html><head><title>Lamps</title></head><body><h1>Lamps</h1>"
        "<p>If True, the keeper logs every flash of the lamp to the tower's book.</p>"
        '<div class="admonition seealso"><p class="admonition-title">See also</p>'
        '<p><a href="logging.html">Keeping the Book</a> - further detail on how to keep the book.</p></div>'
        "<p>The book is read at dawn by the harbour master.</p></body></html>"
    )
    said = extract_text(Path("lamps.html"), page.encode()).text
    assert "Keeping the Book" not in said and "See also" not in said, said
    assert "tower's book.\n\nThe book is read at dawn" in said, said


def test_a_long_list_item_is_quoted_sentence_by_sentence() -> None:
    # S2's answer, one 765-character list item ("Try not to have detached objects; don't close the session
    # prematurely - Often, ..."), was no quote at all: an item over 600 characters was no statement
    sentence = "The keeper should never leave the lamp unattended while the wick is being trimmed at dusk."
    item = "- " + " ".join([sentence] * 8)
    passage = f"Keep these rules in mind.\n\n{item}\n\n- A short second rule about the brass fittings here.\n"
    assert len(item) > 600
    said = [quote.text for quote in quotes(passage, 1)]
    assert sentence in said, said


def test_a_statement_that_names_what_is_described_below_is_quoted() -> None:
    # "... these parameters ultimately interact with the regular Python loggers described below." was taken
    # for a sentence announcing a list, and with no list after it, for no quote
    stated = "The keeper records each flash in the book, which the harbour master reads, described below."
    said = [quote.text for quote in quotes(f"{stated}\n\nThe book is kept in the lamp room.", 1)]
    assert stated in said, said
    # ... a sentence that announces what follows is still quoted only with it
    passage = "The keeper checks the following items below:\n\n- the wick\n- the brass\n- the glass\n"
    said = [quote.text for quote in quotes(passage, 1)]
    assert said == ["The keeper checks the following items below: the wick; the brass; the glass."], said


def test_a_local_table_of_contents_is_no_text() -> None:
    # SQLAlchemy's FAQ pages open with a docutils "contents" box listing every entry, some of them statements
    # ("I am using multiple connections with a SQLite database ..., and my test program is not working!"),
    # quoted as a Summary's claim; Doxygen's main "contents" division is the page itself
    entries = '<li><a href="#wick">My lamp smokes every night and the glass goes black!</a></li>'
    page = (
        "<html><head><title>Lamp FAQ</title></head><body><h1>Lamp FAQ</h1>"
        f'<div class="contents faq local topic" id="contents"><ul class="simple">{entries}</ul></div>'
        '<section id="wick"><h2>My lamp smokes every night!</h2><p>Trim the wick square after each night.</p>'
        "</section></body></html>"
    )
    said = extract_text(Path("faq.html"), page.encode()).text
    assert "the glass goes black" not in said and "Trim the wick square" in said, said
    doxygen = (
        '<html><body><div class="contents"><p>The lamp class keeps the flame lit.</p></div></body></html>'
    )
    assert "keeps the flame lit" in extract_text(Path("lamp.html"), doxygen.encode()).text
