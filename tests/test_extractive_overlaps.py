"""One sentence, one quote (issue [quality] part 2): a sentence that two passages of a page read differently -
alone in one, with the list that completes it in the other - is quoted in its longest form, and a definition
under its term may be short. Without that, the report quoted the sentence alone and left the longer quote out
(no sentence is quoted twice), losing what it went on to say. Invented domains, so nothing here is tuned on
the quality sets; whole manuals are measured by bench/quality (bench/quality/JOURNAL.md, session 15)."""

from __future__ import annotations

from typing import Any

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.report.findings import extractive_review
from deepresearch.report.lines import cite
from tests.test_extractive_answers import WORDS

QUESTION = "What should the keeper do when the ferry stops because the channel does not clear?"

OPENING = (
    "When the ferry leaves the quay, the keeper gives it the list of buoys to pass. "
    "Upon seeing the first buoy that does not answer, it stops in the middle of the channel. "
    "You can recover from this in one of two ways:"
)
ITEMS = (
    "- skip the silent buoy by sounding the horn twice and steering by the chart alone\n\n"
    "- light the buoy by hand from the pilot boat, mark it in the log book, and then signal the ferry on\n"
)
SIDE = (
    "The ferry keeps a log of every crossing in the wheelhouse, with the weather and the tide of the hour. "
    "The log is copied to the harbour office at the end of every week by the second mate on duty. "
)


def _evidence(passage: str, n: int, bm25: float, **marks: Any) -> dict[str, Any]:
    return {
        "n": n,
        "title": "Ferry handbook" if n == 1 else f"Harbour notes {n}",
        "passage": passage,
        "headings": ["Ferry handbook", "Stops"],
        "bm25": bm25,
        "sub_question_index": 0,
        "sub_question": QUESTION,
        "lead": False,
    } | marks


def _cut_and_whole(**marks: Any) -> list[dict[str, Any]]:
    # the same section cut twice: a passage that ends on the announcement, and one with its list
    return [
        _evidence(OPENING + "\n", 1, 3.0, **marks),
        _evidence(f"{OPENING}\n\n{ITEMS}", 1, 2.0),
        _evidence(SIDE, 2, 2.5),
    ]


def _statements(evidence: list[dict[str, Any]]) -> list[str]:
    return [
        f["statement"] for f in extractive_review("fact_reviewer", [QUESTION], evidence, QUESTION)["findings"]
    ]


def _units(passage: str) -> dict[str, str]:
    """The passage's quotes by their label."""
    return {q.section: q.text for q in quotes(passage, 1, ["Handbook", "Charts"])}


def _no_sentence_twice(statements: list[str]) -> None:
    for a in statements:
        for b in statements:
            assert a is b or a not in b, (a, b)


def test_a_sentence_of_an_answering_section_is_quoted_with_the_list_it_announces() -> None:
    statements = _statements(_cut_and_whole(answer=1))
    whole = [s for s in statements if "skip the silent buoy" in s]
    assert whole and whole[0].startswith("When the ferry leaves the quay"), statements
    _no_sentence_twice(statements)


def test_a_ranked_sentence_is_quoted_with_the_list_it_announces() -> None:
    statements = _statements(_cut_and_whole())
    assert any("skip the silent buoy" in s for s in statements), statements
    _no_sentence_twice(statements)


def test_a_list_announced_by_a_sentence_that_leans_on_the_one_before_is_one_quote_with_both() -> None:
    passage = (
        "For simplicity, the lamps of the outer pier are left out of this chapter entirely.\n\n"
        "This chapter does not follow the harbour code strictly. In particular:\n\n"
        "- Red lamps may be lit on the western side of the channel;\n\n"
        "- Fog bells may ring at night without a written order.\n"
    )
    texts = [q.text for q in quotes(passage, 1, ["Handbook", "Lamps"])]
    assert len(texts) == 1, texts
    assert texts[0].startswith("For simplicity, the lamps") and "Fog bells may ring" in texts[0], texts


def test_a_short_definition_under_its_term_is_a_quote_but_a_bare_noun_phrase_is_not() -> None:
    passage = (
        "The harbour keeps its charts with one of these helpers:\n\n"
        "vault:\n\nStore charts in the vault. See the vault manual for details.\n\n"
        "shelf:\n\nKeep charts on the shelf for a short period of time before they are filed.\n\n"
        "chart:\n\nThe harbour chart object.\n"
    )
    units = _units(passage)
    assert units.get("vault") == "Store charts in the vault.", units
    assert units.get("shelf", "").startswith("Keep charts on the shelf"), units
    assert "chart" not in units, units
    # outside a definition list, five words are no full sentence
    assert not quotes("Store charts in the vault.\n", 1, ["Handbook", "Charts"])


STATIONS = (*WORDS, "marsh", "north")  # fourteen places, each its own words


def test_the_sentence_after_a_best_quote_scores_as_its_continuation_even_when_it_names_the_question() -> None:
    question = "How does the tide gauge record the water level?"
    explanation = (
        "The tide gauge records the water level with a float that rides in a stilling well. "
        "Generally, the gauge float turns a drum of paper as it rises and falls with every tide."
    )
    # many stations restate the question in their own section, each ranked below the explanation
    others = [
        _evidence(
            f"The tide gauge at {word} station records the water level for {word}{i} pilots.", i + 2, 1.0
        )
        for i, word in enumerate(STATIONS)
    ]
    evidence = [_evidence(explanation, 1, 3.0), *others]
    evidence = [e | {"sub_question": question} for e in evidence]
    statements = [
        f["statement"] for f in extractive_review("fact_reviewer", [question], evidence, question)["findings"]
    ]
    assert any(s.startswith("Generally, the gauge float turns a drum") for s in statements), statements


def test_a_quote_cut_alike_from_two_passages_is_listed_once() -> None:
    evidence = [
        _evidence(OPENING + "\n", 1, 3.0, answer=1),
        _evidence(f"{OPENING}\n\n{ITEMS}", 1, 2.0),
        _evidence(
            f"{OPENING}\n\n{ITEMS}\nThe keeper writes the stop in the log book of the harbour office.\n",
            1,
            1.9,
        ),
        _evidence(SIDE, 2, 2.5),
    ]
    statements = _statements(evidence)
    assert any("skip the silent buoy" in s for s in statements), statements
    assert len(statements) == len(set(statements)), statements


def test_a_sentence_is_not_taken_for_the_end_of_another_that_ends_alike() -> None:
    question = "Where does Keepbase store the buoy index?"
    evidence = [
        _evidence("Keepbase stores the buoy index in the keeper's database file.", 1, 3.0),
        _evidence(
            "In version one of the tool that nobody runs anymore, Keepbase stores the buoy index in the "
            "keeper's database file.",
            1,
            0.5,
        ),
        _evidence("Pilots read the buoy index from the keeper's database file on the boat.", 2, 2.0),
    ]
    evidence = [e | {"sub_question": question} for e in evidence]
    found = extractive_review("fact_reviewer", [question], evidence, question)["findings"]
    assert "Keepbase stores the buoy index in the keeper's database file." in [f["statement"] for f in found]


def test_labels_remarks_and_list_definitions_under_a_term() -> None:
    passage = (
        "The chart tool reads three settings.\n\n"
        "--output:\n\nPath to the output file.\n\n"
        "Warning:\n\nRestart after every change.\n\n"
        "vault:\n\nStore charts in the vault. They stay dry there for many years.\n"
    )
    units = _units(passage)
    assert units.pop("Charts") == "The chart tool reads three settings."
    assert units == {"vault": "Store charts in the vault. They stay dry there for many years."}, units
    # a history diagram flattened to a line that ends with a colon is the sample the sentence announces,
    # not a term that labels the quotes after it
    diagram = (
        "Suppose somebody merges your branch into theirs, with a result like this:\n\n"
        "o--o--O--o <-- origin \\ t--t--m <-- their branch:\n\n"
        "Then suppose you rewrite the last three commits of your branch.\n"
    )
    units = _units(diagram)
    assert set(units) == {"Charts"}, units
    assert units["Charts"].startswith("Suppose somebody merges your branch into theirs"), units
    # the rest of a sentence that goes on past a sample is no term: it would label the quotes after it
    # ("*or an ssh URL*: For projects with few developers ..." in git's user manual, session 35)
    for clause in (
        "or an ssh URL:",
        "or:",
        "or, to list every chart:",
        "you’ll get a list of all the charts:",
        "where the chart will be treated as:",
        "results in this line being added to the chart:",
        "is the same as:",
        "the charts can then be listed with:",
    ):
        going_on = (
            f"Charts are read from the keeper's folder:\n\n$ chart read /keeper\n\n{clause}\n\n"
            "$ chart read ssh://keeper/charts\n\nKeepers with few charts read them all at once.\n"
        )
        units = _units(going_on)
        assert set(units) == {"Charts"}, (clause, units)
    # a definition's "This form ..." points at its term, not at the page's subject ("*git-diff(1) Manual
    # Page*: This form is to view the changes ..." in session 34's reports)
    form = "chart read <keeper>:\n\nThis form reads every chart the keeper holds. It needs no network.\n"
    units = _units(form)
    assert units == {"chart read <keeper>": "This form reads every chart the keeper holds."}, units
    # "the latter" stands for one of two things said before it: never quoted without them
    latter = "$ chart read /keeper\n\nor:\n\n$ chart fetch\n\nWith the latter, you read all charts.\n"
    assert _units(latter) == {}
    # a field's name ("Arguments :", "Translation:", Exim's "For example:") names no entry: the section labels
    for field in ("Arguments :", "Translation:", "Examples:", "For example:", "Note:"):
        units = _units(f"{field}\n\nThe wick is trimmed to the length the keeper sets at dusk.\n")
        assert set(units) == {"Charts"}, (field, units)
    # a command of an EXAMPLES list is the term its explanation is quoted under
    assert _units("$ chart read /keeper:\n\nReads every chart kept in the keeper's folder.\n") == {
        "$ chart read /keeper": "Reads every chart kept in the keeper's folder."
    }
    items = "Routines:\n\n- store: Store charts on disk.\n\n- cache → Cache charts in memory.\n"
    units = _units(items)
    assert units == {"store": "Store charts on disk.", "cache": "Cache charts in memory."}, units


def test_a_heading_in_words_that_names_an_identifier_is_a_label_in_italics() -> None:
    # a name with Markdown's characters is shown as code ("dataclass(*, init=True)", test_extractive_
    # generalisation.py); a heading in words that holds one is prose, its characters escaped
    labelled = cite({"statement": "It caches.", "citations": [3], "section": "Apache Module mod_cache"})
    assert labelled == "*Apache Module mod\\_cache*: It caches [3]."
    assert cite({"statement": "It runs.", "citations": [1], "section": "__init__(self)"}).startswith("`")


def test_a_sample_after_a_paragraph_that_names_it_an_example_is_quoted_with_it() -> None:
    # postfix-doc's null client: "In this example we assume ... As usual, the examples show only parameters
    # that are not left at their default settings." then the main.cf - the answer - was quoted nowhere
    passage = (
        "In this example the tower is named north-point. As usual, the examples show only settings the "
        "keeper changed.\n\n1 /etc/lamp/main.cf: 2 wick_length = 12 3 oil = colza\n\n"
        "The lamp burns through the night in the winter months.\n"
    )
    texts = [q.text for q in quotes(passage, 1, ["Handbook", "Charts"])]
    sample = "keeper changed. `1 /etc/lamp/main.cf: 2 wick_length = 12 3 oil = colza`"
    assert any(t.endswith(sample) for t in texts), texts
    # a line of prose in lower case after such a paragraph is no sample of it
    prose = "The examples show the keeper's lamps.\n\nmod_wick looks for a wick before it lights the lamp\n"
    assert all("`" not in text for text in [q.text for q in quotes(prose, 1, ["Handbook", "Charts"])])
