"""An eighteenth reading (bench/quality/JOURNAL.md, session 48: Borg's and Flask's Sphinx pages, and the
seventeenth reading's rsyslog example): each case is the smallest page read wrong there, with its defect in a
comment. Invented lighthouse material."""

from __future__ import annotations

from deepresearch.extractive.asking.asked import resolve_pronouns
from deepresearch.extractive.asking.clauses import ASKS, split_clauses
from deepresearch.extractive.asking.planning import keyword_plan, lookup_phrases
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import code_like
from deepresearch.extractive.screening import MANY_SECTIONS, rank_sources
from deepresearch.report.lines import Ledger, cite
from tests._report_helpers import QUESTION
from tests.test_extractive_answers import LENS_GUIDE, SOURCES

SAMPLE = 'lamp(load="wick" hours="12")␤tower(type="beacon" port="514")'


def _texts(passage: str, headings: tuple[str, ...] = ()) -> list[str]:
    return [quote.text for quote in quotes(passage, 1, headings)]


def test_an_examples_this_is_the_sample_it_announces() -> None:
    # rsyslog's imtcp "Example 1": "This sets up a TCP server on port 514 and permits it to accept up to 500
    # connections:" opens on a pronoun and was dropped with its sample - the answer to R7
    passage = (
        f"### Example 1\n\nThis sets up a beacon on port 514 and lets it burn for twelve hours:\n\n{SAMPLE}\n"
    )
    headings = ("The beacon module", "Examples", "Example 1")
    texts = _texts(passage, headings)
    assert texts == [f"This sets up a beacon on port 514 and lets it burn for twelve hours: `{SAMPLE}`"], (
        texts
    )
    # ... elsewhere "This" still leans on the sentence before it
    assert _texts(passage.replace("Example 1", "Lighting"), ("The beacon module", "Lighting")) == []


LONG = (
    "So how does the keeper know when to light the lamp? Well the tower clock rings at dusk if the weather "
    "is clear, otherwise the fog horn sounds first (as the harbour rules require). But how do you make the "
    "lamp burn longer? By default the lamp burns for as long as the oil lasts, but you can limit that by "
    "setting the wick hours key:"
)


def test_a_long_paragraph_announces_its_sample_by_its_last_sentence() -> None:
    # Flask's "... you can limit that by setting the MAX_CONTENT_LENGTH config key:" ends a paragraph of 313
    # characters (announcing paragraphs are 300 at most): the sentence and its sample were lost
    assert len(LONG) > 300
    texts = _texts(f"## Burning\n\n{LONG}\n\n{SAMPLE}\n\nThe keeper trims the wick at dawn every single day.")
    announcing = LONG.rsplit("? ", 1)[1]
    assert f"{announcing} `{SAMPLE}`" in texts, texts
    # ... not one that leans on the sentence before it ("Thus, we will let the server know ...:")
    leaning = LONG.replace("By default the lamp", "Thus, by default the lamp")
    texts = _texts(f"## Burning\n\n{leaning}\n\n{SAMPLE}\n")
    assert not any(SAMPLE in text for text in texts), texts
    # ... nor a list: its items are read as before, and the sentence is no statement of its own
    items = "\n\n".join(f"- the keeper trims wick number {n} at dawn" for n in range(1, 4))
    texts = _texts(f"## Burning\n\n{LONG}\n\n{items}\n")
    assert not any("wick hours key" in text for text in texts), texts


def test_a_long_list_of_fragments_quotes_the_paragraph_once() -> None:
    # Borg's "For restoring, you usually want to work on the same machine .... Doing it like that avoids quite
    # some issues:" over nine fragments: the first sentence was quoted twice, once glued to a fragment
    first = "For lighting, you usually want to climb the same stairs as the keeper who trimmed the wick."
    items = "\n\n".join(f"- maybe a spare wick of size {n}" for n in range(1, 10))
    items += "\n\n- maybe including a spare wick for the lamp (quicker than a trip to town)."
    texts = _texts(f"## Lighting\n\n{first} Doing it like that avoids quite some trouble:\n\n{items}\n")
    assert sum(first in text for text in texts) == 1, texts


def test_a_definition_without_a_full_stop_keeps_to_its_term() -> None:
    # Borg's placeholders: "{borgversion}:" then "The version of borg, e.g.: 1.0.8rc1" took the next term,
    # "{borgmajor}:", as its sample, and every later definition was labelled "{borgversion}"
    passage = (
        "## Placeholders\n\n{lamp}:\n\nThe lamp of the tower, e.g.: L-12\n\n{horn}:\n\n"
        "See: The tower keeper's handbook\n\n{wick}:\n\nThe wick of the lamp, only its length, e.g.: 12\n\n"
        "{oil}:\n\nThe oil the lamp burns, by default whale oil from the harbour store."
    )
    units = [(quote.section, quote.text) for quote in quotes(passage, 1, ("Tower", "Placeholders"))]
    assert units == [
        ("{lamp}", "The lamp of the tower, e.g.: L-12"),
        ("{wick}", "The wick of the lamp, only its length, e.g.: 12"),
        ("{oil}", "The oil the lamp burns, by default whale oil from the harbour store."),
    ], units


def test_a_contrary_rule_is_no_copy_of_the_rule() -> None:
    # Borg's patterns: "If it ends with a slash, ... the directory will be included but not its content."
    # made "If it does not end with a slash, ... both the directory and content will be excluded." a copy
    ledger = Ledger()
    rule = "If the wick {} with a knot, such as a loop, the lamp {} be {}."
    assert ledger.take(rule.format("ends", "will", "lit but not the horn"))
    assert ledger.take(rule.format("does not end", "and horn will", "dark"))
    # ... a near-copy that only adds words is still the same sentence (a page's HTML and its source file)
    assert ledger.take("The keeper trims the wick of the great lamp at dawn.")
    assert not ledger.take("The keeper trims the wick of the great lamp at dawn and dusk.")


def test_placeholders_in_braces_are_prose_and_an_abbreviation_keeps_its_stop() -> None:
    # Flask's "The syntax is {module_import}:{app_variable}." read as code (four braces) and was no quote
    assert _texts("## Lighting\n\nThe keeper's syntax is {tower_name}:{lamp_number} in the log.") == [
        "The keeper's syntax is {tower_name}:{lamp_number} in the log."
    ]
    assert code_like("lamp { light = {a}; trim = {b}; }")
    # "... without the prefix i.e [1]." lost the abbreviation's full stop to the citation
    line = cite({"citations": [2], "statement": "The wick is trimmed to the lamp's length, i.e."})
    assert line == "The wick is trimmed to the lamp's length, i.e. [2]"
    assert cite({"citations": [2], "statement": "Is the wick trimmed?"}) == "Is the wick trimmed [2]?"


def test_a_reference_of_many_entries_gives_no_intro_that_shares_no_word_with_the_question() -> None:
    # Flask's api.html (hundreds of entries) was the best page, and its first four sections, "API",
    # "class flask.Flask", "aborter", "aborter_class" (BM25 0.0), opened every report's Findings
    guide = (
        "## Overview\n\nThe beacon's optics turn a small flame into a beam seen thirty miles out.\n\n"
        + LENS_GUIDE.split("## History")[0]
        + "## Before the first watch\n\nThe keeper trims the wick to a flat edge and fills the reservoir.\n\n"
        + "## Winter duties\n\nIce on the gallery rail is chipped away before dusk, and storm panes shut.\n\n"
    )
    entries = "".join(
        f"## fitting_{n}\n\nThe fitting number {n} holds a brass bolt of the tower.\n\n" for n in range(45)
    )

    def leads(text: str) -> set[str]:
        sources = [{"id": "S1", "n": 1, "title": "Beacon handbook", "text": text}, SOURCES[1]]
        main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
        return {p["headings"][-1] for _, p in main if p.get("lead") and p["source_id"] == "S1"}

    assert {"Before the first watch", "Winter duties"} <= leads(guide)  # a guide's: read whatever they say
    assert not {"Before the first watch", "Winter duties"} & leads(guide + entries), leads(guide + entries)
    assert len(guide.split("## ")) <= MANY_SECTIONS < len((guide + entries).split("## "))
    # ... nor its opening as the first answering section ("This part of the documentation covers all the
    # interfaces of Flask" opened the Findings of every question it was the best page of)

    def first_answer(text: str) -> str:
        sources = [{"id": "S1", "n": 1, "title": "Beacon handbook", "text": text}, SOURCES[1]]
        main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
        return next(p["headings"][-1] for _, p in main if p.get("answer") == 1)

    assert first_answer(guide) == "Overview"
    assert first_answer(guide + entries) == "Concentrating the light"


def test_a_scene_of_when_something_happens_is_no_question() -> None:
    # Borg's "When the Wi-Fi drops in the middle of a backup, the next runs fail ..." was asked as a
    # sub-question of its own, and "is it safe to just run break-lock?" read "it" as the topic
    question = (
        "Our keeper backs up the log every hour. When the fog rolls in over the cliffs, the next lamp checks "
        "fail with 'Lens locked', and the tower still shows a lit wick. What should we set so this does not "
        "happen, and is it safe to just unlock the lens?"
    )
    plan = keyword_plan(question, 6)
    assert not any(q.startswith("When the fog") for q in plan.sub_questions), plan.sub_questions
    assert "Is it safe to just unlock the lens?" in plan.sub_questions, plan.sub_questions
    assert resolve_pronouns("is it safe to just unlock the lens", "'Lens locked'") == (
        "is it safe to just unlock the lens"
    )
    assert resolve_pronouns("how do we trim it", "the wick") == "how do we trim the wick"
    # ... the scene is what "this" stands for: said once, after its own "When"
    assert any("happen when the fog rolls in" in q for q in plan.sub_questions), plan.sub_questions
    assert not any("when when" in q.lower() for q in plan.sub_questions), plan.sub_questions
    # ... and a question about when, or one after its condition, still asks
    for asking in ("When did the lamp fail, and why", "When the fog rolls in, how do I light the lamp"):
        assert ASKS.match(asking), asking


def test_a_quoted_message_is_one_clause_and_a_name_in_the_scene_can_be_the_topic() -> None:
    # Flask's "the log says 'WARNING: This is a development server. Do not use it in a production
    # deployment.' We want to switch to Gunicorn. What command do we run ...?" asked "Do not use our Flask
    # shop ... in a production deployment.' We want to switch to Gunicorn?"
    question = (
        "Our tower still runs the old lamp, and the log says 'WARNING: This is a test lamp. Do not use it in "
        "a real storm.' We want to switch to Lumora. What wick do we buy, and how do we get the logs?"
    )
    said = split_clauses(question)
    assert said[1] == "We want to switch to Lumora", said
    assert "Do not use it in a real storm" in said[0], said
    rarity = dict.fromkeys(lookup_phrases(question), 0.3) | {"lumora": 0.01, "wick": 0.2}
    plan = keyword_plan(question, 6, rarity=rarity)
    assert not any("Do not use" in q for q in plan.sub_questions), plan.sub_questions
    # ... a capitalised name inside the scene weighs as a name ("Gunicorn"), not as the scene's other words
    assert plan.topic == "Lumora", plan.topic


def test_an_option_tables_row_labels_its_description_with_the_option() -> None:
    # Borg's option tables ("| --restrict-to-path PATH | restrict repository access to PATH. Can be specified
    # multiple times ...") gave quotes with no label: "Can be specified multiple times ..." of what?
    passage = (
        "# lamp trim\n\noptions\n\n"
        "| --wick-length MM | trim the wick to MM millimetres. Can be given twice to trim the spare wick.\n\n"
        "| -n, --dry-run | do nothing. The keeper only reads the wick gauge and writes it in the log."
    )
    units = [(quote.section, quote.text) for quote in quotes(passage, 1, ("lamp trim",))]
    assert ("--wick-length MM", "Can be given twice to trim the spare wick.") in units, units
    assert ("-n, --dry-run", "The keeper only reads the wick gauge and writes it in the log.") in units, units
