"""A nineteenth reading (bench/quality/JOURNAL.md, session 49: Celery's and pytest's Sphinx pages): each case
is the smallest page or question read wrong there, with its defect in a comment. Invented lighthouse
material."""

from __future__ import annotations

from deepresearch.extractive.asking.asked import inline
from deepresearch.extractive.asking.clauses import ASKS
from deepresearch.extractive.asking.phrases import noun_phrases, verb_terms
from deepresearch.extractive.asking.planning import keyword_plan, lookup_phrases
from deepresearch.extractive.reading.pages import release_pages
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import heading_passages

SAMPLE = 'import lamp␤def test_wick():␤with lamp.raises(WickError, match=r".* 12 .*"):␤lamp.light()'


def _texts(passage: str, headings: tuple[str, ...] = ()) -> list[str]:
    return [quote.text for quote in quotes(passage, 1, headings)]


def test_a_pages_sample_stays_in_the_passage_of_the_sentence_announcing_it() -> None:
    # pytest's "You can pass a match keyword parameter to the context-manager ... from unittest):" ended a
    # passage and its <pre> sample opened the next: the sentence was quoted with "." and no sample (7 of 36
    # such intros on that reading had a sample short enough to quote)
    before = " ".join(["The keeper lights the lamp at dusk and trims the wick at dawn."] * 9)
    announcing = (
        "You can pass a match keyword to the lamp test to check that a pattern matches the message of the "
        "error the lamp raises (as the harbour's own lamp tests do):"
    )
    assert len(before) + len(announcing) < 800 < len(before) + len(announcing) + len(SAMPLE)
    text = f"## Testing the lamp\n\n{before}\n\n{announcing}\n\n{SAMPLE}\n\nThe tests run every night."
    passages = [p.text for p in heading_passages(text)]
    holding = [p for p in passages if announcing in p]
    assert len(holding) == 1 and SAMPLE in holding[0], passages
    assert f"{announcing} `{SAMPLE}`" in _texts(holding[0], ("Testing the lamp",))


def _rarity(question: str, rare: str, shares: tuple[float, float] = (0.001, 0.2)) -> dict[str, float]:
    # a corpus where the asker's host names are on one page in a thousand and everything else on a fifth
    return {phrase: shares[0] if rare in phrase else shares[1] for phrase in lookup_phrases(question)}


def test_a_numbered_host_is_no_topic() -> None:
    # Celery's "Often enc02 sits idle while enc01 holds tasks ...": the topic was "enc02 sits idle" (the
    # rarest words: a host's name), and its queries found a changelog's "idle CPU usage"
    question = (
        "We run the lamps on two towers, lamp01 and lamp02. Often lamp02 sits idle while lamp01 burns all "
        "the oil. We want each lamp to burn only one wick at a time. Which settings do we need?"
    )
    plan = keyword_plan(question, 6, rarity=_rarity(question, "lamp0"))
    assert "lamp0" not in plan.topic, plan
    assert not any("lamp0" in sub_question for sub_question in plan.sub_questions), plan.sub_questions
    # ... not a name with a figure of its own ("utf8", "x86", "sha1")
    named = "How do I read the log file in utf8 on the tower?"
    assert keyword_plan(named, 6, rarity=_rarity(named, "utf8")).topic == "utf8"


def test_a_when_clause_without_its_comma_is_a_scene() -> None:
    # "... and when enc01 is restarted those tasks wait even longer." was asked as "When enc01 is restarted
    # those tasks wait even longer?"
    assert not ASKS.match("when lamp01 is restarted those wicks wait even longer")
    assert not ASKS.match("when I run the lamp test the lamp passes and none of my notes show up")
    # ... a when-clause that asks still asks
    for asking in ("When it fails what do I do", "When is the lamp lit", "when to trim the wick", "Where to"):
        assert ASKS.match(asking), asking


def test_how_often_is_no_part_of_a_phrase() -> None:
    # "customers get the same reminder three or four times": the topic was "the same reminder three or four
    # times", and a sub-question asked "What are four times?"
    phrases = [p.text for p in noun_phrases("our keepers got the same warning three or four times, and then")]
    assert phrases == ["our keepers", "the same warning"], phrases
    assert [p.text for p in noun_phrases("we lit the lamp 2 to 3 times")] == ["the lamp"]


def test_a_causatives_verb_before_an_adverb_is_a_verb() -> None:
    # "How do I make a Celery task retry automatically with exponential backoff when ...": the phrase was
    # "a Celery task retry", and "backoff" a verb - the topic "exponential" asked "How many times does
    # exponential retry by default?"
    question = "How do I make a lighthouse lamp dim automatically with a slow pulse when a ship comes near"
    assert [p.text for p in noun_phrases(question)][:2] == ["a lighthouse lamp", "a slow pulse"]
    assert "dim" in verb_terms(question) and "puls" not in verb_terms(question)
    # ... still "How does a queue in the tower *decide* when to ring?"
    assert "decid" in verb_terms("How does a bell queue in the tower decide when to ring the bell")


def test_a_sentence_opening_on_a_quoted_word_is_prose() -> None:
    # pytest's '"Yield" fixtures yield instead of return.' was no statement (it opens on punctuation)
    for quoted in ('"Storm" lamps', "“Storm” lamps"):
        sentence = f"{quoted} burn brighter than the harbour lights do."
        assert sentence in _texts(f"## Lamps\n\n{sentence} The keeper trims them at dawn.\n"), quoted


def test_a_whats_new_page_is_release_notes() -> None:
    # Celery's "What’s new in Celery 4.0 (latentcall)" (its sections topics: "Canvas Refactor") was the best
    # page of a question on worker memory, and its "Step 1: Upgrade to Celery 3.1.25" led the Summary
    for title, released in (
        ("What’s new in Beacon 4.0 (Foghorn)", True),
        ("What's New In Beacon 3.11", True),
        ("What's new in the keeper's trade", False),
    ):
        passages = [{"n": 1, "headings": [title, f"Lamp topic {i}"]} for i in range(4)]
        assert (release_pages(passages) == {1}) is released, title


def test_a_scenes_adverb_is_lowered_inside_a_sub_question() -> None:
    # "Why does this happen when Sometimes the task fails with ...?"
    assert inline("Sometimes the lamp fails at dusk") == "sometimes the lamp fails at dusk"
    assert inline("It started after the refit") == "it started after the refit"
    assert inline("Sometimes") == "sometimes"
    assert inline("Lamp01 fails at dusk") == "Lamp01 fails at dusk"


def test_a_purpose_clause_is_no_topic() -> None:
    # pytest's "How do I register custom pytest markers ... so that I stop getting PytestUnknownMarkWarning":
    # the warning (on one page in 200) was the topic, and the page that registers markers never names it
    question = (
        "How do I register custom lamp markers such as storm and fog so that I stop getting "
        "LampUnknownMarkWarning, and can I make an unknown marker an error?"
    )
    # (pytest's shares: the warning on 1 page in 200, the markers on 1 in 8)
    plan = keyword_plan(question, 6, rarity=_rarity(question, "lampunknownmarkwarning", (0.005, 0.13)))
    assert "LampUnknownMarkWarning" not in plan.topic, plan
    # ... a purpose is what is asked when nothing comes before it ("What do I need to change so that ...")
    asked = "What do I need to change so that the tower relays signals for our harbour?"
    assert keyword_plan(asked, 6, rarity=_rarity(asked, "harbour")).topic == "harbour"
