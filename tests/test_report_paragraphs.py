"""A section's consecutive quotes read as one paragraph under its name (report/lines.py `paragraphs`), lines
of one section of one source in a row are items under its name, and the citation check still reads every
sentence of that line with its own citation; a sentence is quoted once (report/lines.py `Ledger`), with or
without its code sample."""

from __future__ import annotations

from typing import Any

from deepresearch.extractive.reading.sentences import quotes
from deepresearch.report.digest import extractive_report_body
from deepresearch.report.lines import cite
from deepresearch.report.render import check_citations
from tests._report_helpers import QUESTION

LOCK = "Refreshing a stale entry"
SENTENCES = [
    "When an entry becomes stale, a lock is created for it until the backend answers.",
    "During the lock, later requests are given the stale entry.",
    "The lock expires after five seconds.",
    "Locks are empty files in the lock directory.",
]
PASSAGE = f"## {LOCK}\n\n" + " ".join(SENTENCES)
LENS_SENTENCES = [
    "Lens one turns once a minute on a bath of mercury, so that a keeper can turn its tons of glass by hand, "
    "and its clockwork, wound every four hours through the night, keeps the beam's period steady all winter.",
    "Lens two flashes twice every ten seconds behind a red screen, which tells a ship's navigator at sea "
    "which harbour lies ahead, since no other light along this stretch of coast shows a red flash at night.",
]
LENS = " ".join(LENS_SENTENCES)


def quote(text: str, n: int, place: int, position: int, section: str = LOCK) -> dict[str, Any]:
    """A fact reviewer's finding: quote `position` of the evidence passage at `place`, of source `n`."""
    return {
        "sub_question": QUESTION,
        "statement": text,
        "citations": [n],
        "section": section,
        "score": 0.8,
        "order": [place, position],
    }


# the summary takes the two best quotes, which fill its length (SUMMARY_CHARS): these, so that the findings
# hold all of the section's
SUMMARY = [
    quote(LENS_SENTENCES[0], 2, 0, 0, "Lens") | {"score": 0.99},
    quote(LENS_SENTENCES[1], 2, 0, 1, "Lens") | {"score": 0.98},
]


def body(findings: list[dict[str, Any]], passages: dict[int, str]) -> str:
    """The report body of the fact reviewer's findings over a.html [1] and b.html [2], the question's
    evidence being `passages` by place (the summary's lens passage at place 0)."""
    texts = {0: LENS, **passages}
    evidence = [
        {"sub_question": QUESTION, "sub_question_index": 0, "passage": texts.get(place, ""), "n": 1}
        for place in range(max(texts) + 1)
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": evidence,
        "findings": {"fact_reviewer": {"findings": [*findings, *SUMMARY]}},
    }
    return extractive_report_body(state)


def findings_lines(text: str) -> list[str]:
    """The lines under the question's own heading in Findings (an item under a section's name indented)."""
    section = text.split(f"### {QUESTION}", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.lstrip().startswith("- ")]


def cited(sentence: str, n: int = 1) -> str:
    return f"{sentence[:-1]} [{n}]."


def test_quotes_that_follow_each_other_in_a_section_are_one_line_under_its_name() -> None:
    report = body([quote(s, 1, 3, i) for i, s in enumerate(SENTENCES)], {3: PASSAGE})
    assert findings_lines(report) == [f"- *{LOCK}*: " + " ".join(cited(s) for s in SENTENCES)]


def test_a_quote_with_text_between_it_and_the_last_starts_its_own_line() -> None:
    # the source says something between the second and third quotes that the report does not quote
    text = PASSAGE.replace(SENTENCES[2], "Not on Windows, though. " + SENTENCES[2])
    report = body([quote(s, 1, 3, i) for i, s in enumerate(SENTENCES)], {3: text})
    # ... under the section's name, said once: two items of it
    assert findings_lines(report) == [
        f"- *{LOCK}*:",
        f"  - {cited(SENTENCES[0])} {cited(SENTENCES[1])}",
        f"  - {cited(SENTENCES[2])} {cited(SENTENCES[3])}",
    ]


def test_only_quotes_of_one_section_and_one_source_share_a_line() -> None:
    first, second, third, fourth = SENTENCES
    report = body(
        [
            quote(first, 1, 3, 0),
            quote(second, 2, 3, 1),  # next in the passage, but cited to source 2
            quote(third, 1, 4, 2),
            quote(fourth, 1, 4, 3, "HIT"),  # next, under the term it defines
        ],
        {3: PASSAGE, 4: PASSAGE},
    )
    # a section of another source is another section: its name is said again
    assert findings_lines(report) == [
        f"- *{LOCK}*: {cited(first)}",
        f"- *{LOCK}*: {cited(second, 2)}",
        f"- *{LOCK}*: {cited(third)}",
        f"- *HIT*: {cited(fourth)}",
    ]


def test_the_text_of_the_first_quotes_passage_tells_what_follows_it() -> None:
    # two cuts of one page: the second quote read in another passage still follows the first in the page
    first, second, _, fourth = SENTENCES
    report = body(
        [quote(first, 1, 3, 0), quote(second, 1, 4, 1), quote(fourth, 1, 5, 0)], {3: PASSAGE, 4: PASSAGE}
    )
    assert findings_lines(report) == [
        f"- *{LOCK}*:",
        f"  - {cited(first)} {cited(second)}",
        f"  - {cited(fourth)}",
    ]


def test_a_quote_that_ends_no_sentence_is_not_continued() -> None:
    default = "Default: `CacheLock off`"
    text = f"## {LOCK}\n\n{SENTENCES[0]} {default} {SENTENCES[2]}"
    report = body(
        [quote(SENTENCES[0], 1, 3, 0), quote(default, 1, 3, 1), quote(SENTENCES[2], 1, 3, 2)], {3: text}
    )
    assert findings_lines(report) == [
        f"- *{LOCK}*:",
        f"  - {cited(SENTENCES[0])} {default} [1]",
        f"  - {cited(SENTENCES[2])}",
    ]


def test_a_line_the_citation_check_would_read_as_one_sentence_is_not_joined() -> None:
    # an odd backtick: the sentence splitter does not end a sentence inside what it takes for code
    odd = "The old form of command substitution uses the backquote (`) around the command."
    after = "The new form nests without any escaping of the inner quotes."
    report = body([quote(odd, 1, 3, 0), quote(after, 1, 3, 1)], {3: f"## {LOCK}\n\n{odd} {after}"})
    # (the odd backtick escaped: shown as the page's character, not opening a code span)
    shown = cited(odd).replace("`", "\\`")
    assert findings_lines(report) == [f"- *{LOCK}*:", f"  - {shown}", f"  - {cited(after)}"]


def test_the_citation_check_reads_each_sentence_of_a_paragraph_on_its_own() -> None:
    report = body([quote(s, 1, 3, i) for i, s in enumerate(SENTENCES)], {3: PASSAGE})
    checked, result = check_citations(report, {1: [PASSAGE], 2: [LENS]}, set())
    assert result.unverified_sentences == 0 and not result.removed
    (line,) = findings_lines(checked)  # one line, its section named on it
    # a citation before each full stop: no sentence was merged into its neighbour by the check
    assert line.count(" [1].") == 4 and line.endswith("directory [1].")


def test_a_sentence_quoted_with_its_example_is_not_quoted_again_alone() -> None:
    lead = "A typical lock configuration might look as follows."
    report = body(
        [quote(f"{lead} `LockPath /var/lock/cache`", 1, 2, 0, "Locks"), quote(lead, 1, 3, 0)],
        {2: f"## Locks\n\n{lead} LockPath /var/lock/cache", 3: f"## {LOCK}\n\n{lead}"},
    )
    assert report.count("A typical lock configuration") == 1, report
    assert "`LockPath /var/lock/cache`" in report


def test_a_sentence_that_says_more_than_a_quoted_one_is_quoted_too() -> None:
    # the same words with a qualifier, or a short sentence within a longer one: distinct sentences
    quotes = [
        quote("Readers do not block writers.", 1, 3, 0),
        quote("In WAL mode, readers do not block writers, but a checkpoint can block both.", 1, 4, 0),
        quote("Locks are very fast.", 1, 5, 0),
        quote("Locks are very fast because they are empty files.", 1, 6, 0),
    ]
    report = body(quotes, {})
    for finding in quotes:
        assert cited(finding["statement"]) in report, report


def test_a_sentence_that_opens_with_code_is_cited_on_its_own() -> None:
    # "... reconnects. `tests/x.py` restarts ..." was one sentence to the splitter: one citation for two
    text = (
        "The pool checks each connection before use and the `LISTEN` connection reconnects. "
        "`tests/test_replica_faults.py` restarts PostgreSQL while runs are executing."
    )
    units = quotes(f"## Pool\n\n{text}", 1, ("Durability", "Pool"))
    assert [u.text for u in units] == [
        "The pool checks each connection before use and the `LISTEN` connection reconnects.",
        "`tests/test_replica_faults.py` restarts PostgreSQL while runs are executing.",
    ]
    line = cite(quote(text, 1, 3, 0, "Pool"))
    assert line.count("[1]") == 2 and "reconnects [1]. `tests/" in line
    checked, result = check_citations(f"- {line}", {1: [text]}, set())
    assert result.supported == 2 and checked.count("[1]") == 2


def test_lines_of_one_section_in_a_row_are_items_under_its_name_said_once() -> None:
    # a tutorial's section quoted in three places in a row: its name once, each place an item under it;
    # the citation check still reads each item's sentences with their citations
    first, second, third, fourth = SENTENCES
    text = f"## {LOCK}\n\n{first} Not on Windows. {second} Nor on a Mac. {third}"
    report = body([quote(first, 1, 3, 0), quote(second, 1, 3, 1), quote(third, 1, 3, 2)], {3: text})
    lines = [f"- *{LOCK}*:", f"  - {cited(first)}", f"  - {cited(second)}", f"  - {cited(third)}"]
    assert findings_lines(report) == lines
    checked, result = check_citations(report, {1: [text], 2: [LENS]}, set())
    assert result.unverified_sentences == 0 and not result.removed
    assert findings_lines(checked) == lines
    # a quote of another section between them: each line is named again
    report = body([quote(first, 1, 3, 0), quote(fourth, 1, 3, 1, "HIT"), quote(third, 1, 3, 2)], {3: text})
    assert findings_lines(report) == [
        f"- *{LOCK}*: {cited(first)}",
        f"- *HIT*: {cited(fourth)}",
        f"- *{LOCK}*: {cited(third)}",
    ]


def test_a_sentence_and_its_contrary_are_both_quoted() -> None:
    # CMake's target_link_libraries: the PRIVATE sentence had taken the place of its PUBLIC one (7 of their
    # 9 words shared); a near-copy that says the same thing still goes (the one after it)
    quotes = [
        quote("Wicks following PUBLIC are trimmed, and are made part of the lamp interface.", 1, 3, 0),
        quote("Wicks following PRIVATE are trimmed, but are not made part of the lamp interface.", 1, 4, 0),
        quote("Wicks following PRIVATE are trimmed, but are not made a part of the lamp interface.", 1, 5, 0),
    ]
    report = body(quotes, {})
    assert cited(quotes[0]["statement"]) in report and cited(quotes[1]["statement"]) in report, report
    assert cited(quotes[2]["statement"]) not in report, report
