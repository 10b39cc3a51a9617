"""A question's literals (identifiers, quoted strings): what they are, and how screening reads the page that
holds one. Search's side is in tests/test_search_corpus.py."""

from __future__ import annotations

import pytest

from deepresearch.extractive.literals import holds, holds_option, literals, options, words
from deepresearch.extractive.literals import page_shares as literal_shares
from deepresearch.extractive.screening import document_relevance, passages_of, rank_passages


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Where do version strings like v2.1-14-g2414721 come from?", ["g2414721"]),
        ("What does AH00558 mean in my error log?", ["AH00558"]),
        (
            "Why SQLITE_BUSY, and is json_extract() slower with utf8mb4?",
            ["SQLITE_BUSY", "json_extract", "utf8mb4"],
        ),
        ("How do RequestReadTimeout and MinRate work on macOS?", ["RequestReadTimeout", "MinRate", "macOS"]),
        (
            'Git says "fatal: refusing to merge unrelated histories"',
            ["fatal: refusing to merge unrelated histories"],
        ),
        ("What does the 'git gc' command do?", ["git gc"]),
        (
            "How do asyncio.gather and __init__ differ, and what is pm.max_children?",
            ["__init__"],  # a dotted name is none (see literals._IDENTIFIER)
        ),
        ("Why does `git rev-parse HEAD` print a hash?", ["git rev-parse HEAD"]),
        # quotes pair in their order: a short first one does not swallow the second
        ('Is "-S" the same as the "pickaxe search"?', ["pickaxe search"]),
        # not literals: a stressed single word, apostrophes, plain words, short or digit-only tokens, options,
        # quantities and ordinals, "e.g."
        ("Is the 'master' branch special in Apache's and users' setups?", []),
        ("Does IPv6 work with HTTP/2 on port 8080 with -S and --all?", []),
        ("Can I give it 512MB, wait 1500ms and read the 100th line of 1990s logs, e.g. these?", []),
    ],
)
def test_literals(question: str, expected: list[str]) -> None:
    assert literals(question) == expected


def test_a_literal_is_held_as_a_run_of_words() -> None:
    text = words("Run it and you get v1.0.4-14-g2414721: fatal: Refusing to merge unrelated histories.")
    assert holds(text, words("g2414721"))
    assert holds(text, words("fatal: refusing to merge unrelated histories"))
    assert not holds(text, words("refusing unrelated"))
    assert not holds(text, words("g241472"))
    assert not holds(text, ())


def _sources(describe_title: str) -> list[dict[str, object]]:
    protocol = (
        "## Versions\n\nThe version strings of the protocol come in parts; each part of a version string "
        "means a step.\n"
    )
    sources: list[dict[str, object]] = [
        {"id": f"S{n}", "n": n, "title": f"lamp-protocol-{n}", "text": protocol} for n in range(1, 4)
    ]
    sources.append(
        {
            "id": "S4",
            "n": 4,
            "title": describe_title,
            "text": "## Examples\n\nOn a lamp 14 changes past its label you get v1.0.4-14-g2414721.\n",
        }
    )
    return sources


def test_the_page_that_holds_a_pasted_identifier_is_the_relevant_one() -> None:
    # the search ranked the protocol pages first, on the question's other words; the page that holds the
    # identifier the user pasted is the one about it
    question = "Where do version strings like v2.1-14-g2414721 come from and what do their parts mean?"
    found = {1: 1.0, 2: 1.0, 3: 1.0, 4: 0.5}
    passages = passages_of(_sources("lamp-describe"))
    relevance = document_relevance(question, passages, "version strings", set(), found)
    assert relevance[4] == 1.0 > relevance[1], relevance
    # the same pages for the question without the identifier: the pages repeating its words win
    plain = "Where do version strings come from and what do their parts mean?"
    relevance = document_relevance(plain, passages, "version strings", set(), found)
    assert relevance[4] < relevance[1], relevance


def test_an_identifier_a_page_is_titled_with_is_left_to_the_title() -> None:
    # the page titled "mod_g2414721" is the page about it by its title: a page that merely mentions the
    # module gains nothing from the literal then, where it gains when no page is titled with it
    question = "What does mod_g2414721 write, and what do the parts of its version strings mean?"

    def shares(title: str) -> dict[int, float]:
        sources = _sources("lamp-describe")
        sources[3]["text"] = "## Examples\n\nThe mod_g2414721 module writes one line per step.\n"
        sources.append({"id": "S5", "n": 5, "title": title, "text": "## Summary\n\nIt logs.\n"})
        return literal_shares(question, passages_of(sources))

    assert shares("mod_g2414721") == {}
    assert shares("lamp logs") == {4: 1.0}


def test_options_are_held_as_options() -> None:
    assert options("Should I use -S or -G, or --pickaxe-all?") == ["--pickaxe-all", "-G", "-S"]
    assert holds_option("-S<string>: look for differences", "-S")
    assert holds_option("feed it back into -S, and keep going", "-S")
    assert not holds_option("--Sign the tag; TLS-S is another thing", "-S")
    assert not holds_option("-Sx", "-S")


def _manual(filler: int, option_pages: int) -> list[dict[str, object]]:
    """A lamp's manual: a page on finding the change that added a wick call (the question's words), the
    option entries for -S and -G on `option_pages` pages (in words of their own), and `filler` pages."""
    sources: list[dict[str, object]] = [
        {
            "id": "S1",
            "n": 1,
            "title": "Lamp user manual",
            "text": "## Finding a change\n\nTo find the change that added a particular wick call, bisect the "
            "history of the lamp: each step halves the changes left to look at.\n",
        }
    ]
    for n in range(2, 2 + option_pages):
        sources.append(
            {
                "id": f"S{n}",
                "n": n,
                "title": f"lamp-log {n}",
                "text": "## Options\n\n-S<string>:\n\nLook for differences that change the number of "
                "occurrences of the string.\n\n-G<regex>:\n\nLook for differences whose patch text has lines "
                "matching the regex.\n",
            }
        )
    for n in range(2 + option_pages, 2 + option_pages + filler):
        sources.append(
            {
                "id": f"S{n}",
                "n": n,
                "title": f"lamp-wick {n}",
                "text": f"## Wicks\n\nWick {n} burns slowly.\n",
            }
        )
    return sources


def test_a_passage_that_holds_the_options_asked_about_is_on_the_topic() -> None:
    # the option entries do not say "wick call", the topic: they are still evidence on the sub-question that
    # names their options - unless the options are on so many passages that they tell nothing
    question = "How can I find the change that added a particular wick call, and should I use -S or -G?"
    sub_questions = ["How can I find the change that added a particular wick call?", "Should I use -S or -G?"]

    def evidence(filler: int, option_pages: int) -> set[int]:
        ranked = rank_passages(
            question, sub_questions, passages_of(_manual(filler, option_pages)), 8, "a particular wick call"
        )
        return {p["n"] for _, p in ranked[1]}

    assert 2 in evidence(filler=60, option_pages=1)
    assert 2 not in evidence(filler=10, option_pages=1)  # one passage in 12 holds them: too many to tell
