"""A section's consecutive quotes read as one paragraph under its name (report/digest.py `paragraphs`), and
the citation check still reads every sentence of that line with its own citation."""

from __future__ import annotations

from typing import Any

from deepresearch.report.render import check_citations
from tests._report_helpers import QUESTION, two_source_body

LOCK = "Refreshing a stale entry"
PASSAGE = (
    "When an entry becomes stale, a lock is created for it until the backend answers. "
    "During the lock, later requests are given the stale entry. "
    "The lock expires after five seconds. "
    "Locks are empty files in the lock directory."
)


def quote(text: str, n: int, place: int, position: int, section: str = LOCK) -> dict[str, Any]:
    """A fact reviewer's finding: sentence `position` of the evidence passage at `place`, of source `n`."""
    return {
        "sub_question": QUESTION,
        "statement": text,
        "citations": [n],
        "section": section,
        "score": 0.8,
        "order": [place, position],
    }


# the summary takes the two best quotes: these, so that the findings hold all of the section's
SUMMARY = [
    quote("Lens one turns once a minute.", 2, 0, 0, "Lens") | {"score": 0.99},
    quote("Lens two turns once a minute.", 2, 0, 1, "Lens") | {"score": 0.98},
]


def findings_lines(body: str) -> list[str]:
    """The lines under the question's own heading in Findings."""
    section = body.split(f"### {QUESTION}", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]


def sentences() -> list[str]:
    return [s if s.endswith(".") else s + "." for s in PASSAGE.split(". ")]


def test_quotes_that_follow_each_other_in_a_section_are_one_line_under_its_name() -> None:
    first, second, third, fourth = sentences()
    body = two_source_body(
        [
            quote(first, 1, 3, 0),
            quote(second, 1, 3, 1),
            quote(third, 1, 3, 2),
            quote(fourth, 1, 3, 3),
            *SUMMARY,
        ]
    )
    lines = findings_lines(body)
    together = [line for line in lines if "During the lock" in line]
    assert len(together) == 1, lines
    assert together[0].count(f"*{LOCK}*") == 1
    # every quoted sentence keeps its own citation, before its full stop
    for text in (second, third):
        assert text[:-1] + " [1]." in together[0]


def test_a_quote_the_source_does_not_follow_with_starts_its_own_line() -> None:
    first, second, third, fourth = sentences()
    body = two_source_body(
        [
            quote(first, 1, 3, 0),
            quote(second, 1, 3, 1),
            quote(third, 1, 3, 3),  # the passage's fourth quote: its third is not in the report
            quote(fourth, 1, 4, 4),  # next by number, in another passage: the source may say more between
            *SUMMARY,
        ]
    )
    lines = findings_lines(body)
    assert lines[0].endswith(f"{second[:-1]} [1].")
    assert lines[1:] == [f"- *{LOCK}*: {third[:-1]} [1].", f"- *{LOCK}*: {fourth[:-1]} [1]."], lines


def test_the_same_section_name_on_another_source_is_another_line() -> None:
    first, second, third, _ = sentences()
    body = two_source_body(
        [
            quote(first, 1, 3, 0),
            quote(second, 1, 3, 1),
            quote(third, 2, 3, 2),  # next in order, but source 2's
            *SUMMARY,
        ]
    )
    lines = findings_lines(body)
    assert any(line.startswith(f"- *{LOCK}*: {third[:-1]} [2].") for line in lines), lines


def test_a_quote_that_ends_no_sentence_is_not_continued() -> None:
    first, _, third, _ = sentences()
    body = two_source_body(
        [
            quote(first, 1, 3, 0),
            quote("Default: `CacheLock off`", 1, 3, 1),
            quote(third, 1, 3, 2),
            *SUMMARY,
        ]
    )
    lines = findings_lines(body)
    assert any(line.endswith("Default: `CacheLock off` [1]") for line in lines), lines
    assert any(line.startswith(f"- *{LOCK}*: {third[:-1]} [1].") for line in lines), lines


def test_the_citation_check_reads_each_sentence_of_a_paragraph_on_its_own() -> None:
    first, second, third, fourth = sentences()
    body = two_source_body(
        [
            quote(first, 1, 3, 0),
            quote(second, 1, 3, 1),
            quote(third, 1, 3, 2),
            quote(fourth, 1, 3, 3),
            *SUMMARY,
        ]
    )
    passages = {1: [PASSAGE], 2: ["Lens one turns once a minute. Lens two turns once a minute.", PASSAGE]}
    checked, result = check_citations(body, passages, set())
    assert result.unverified_sentences == 0 and not result.removed
    together = next(line for line in findings_lines(checked) if "During the lock" in line)
    # a citation before each full stop: no sentence was merged into its neighbour by the check
    assert together.count(" [1].") == 4 and together.endswith("directory [1].")


def test_a_definition_list_keeps_a_line_per_term() -> None:
    # one passage, consecutive quotes, each under the term it defines (sentences.py's definition items)
    body = two_source_body(
        [
            quote("The entry was fresh and served from the cache.", 1, 3, 0, "HIT"),
            quote("The entry was stale and fetched again.", 1, 3, 1, "MISS"),
            *SUMMARY,
        ]
    )
    assert findings_lines(body) == [
        "- *HIT*: The entry was fresh and served from the cache [1].",
        "- *MISS*: The entry was stale and fetched again [1].",
    ]


def test_a_sentence_quoted_with_its_example_is_not_quoted_again_alone() -> None:
    lead = "A typical lock configuration might look as follows."
    body = two_source_body(
        [
            quote(f"{lead} `LockPath /var/lock/cache`", 1, 2, 0, "Locks"),
            quote(lead, 1, 3, 0),  # the same sentence, cut from another passage without its example
            quote("The lock expires after five seconds.", 1, 3, 1),
            *SUMMARY,
        ]
    )
    assert body.count("A typical lock configuration") == 1, body
    # the quote after it stays, on a line of its own
    assert f"- *{LOCK}*: The lock expires after five seconds [1]." in body
    # a short sentence said within a longer one is no repeat ("It is fast." is in many quotes)
    short = two_source_body(
        [
            quote("Locks are fast.", 1, 2, 0, "Locks"),
            quote("Locks are fast as they are empty.", 1, 3, 0),
            *SUMMARY,
        ]
    )
    assert short.count("Locks are fast") == 2, short
