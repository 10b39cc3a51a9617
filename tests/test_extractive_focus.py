"""Which sources a report quotes (report/focus.py and digest.py's _stray, issue [quality] part 2): the page
that answers is quoted from its answering sections, a second page that explains the question there too, and
a page that only digresses is left out. On findings as the reviewers give them (tests/_report_helpers.py);
the figures over whole manuals are measured by bench/quality (bench/quality/JOURNAL.md, sessions 16-25)."""

from __future__ import annotations

from typing import Any

from deepresearch.report.digest import extractive_report_body
from tests._report_helpers import QUESTION, WORDS
from tests._report_helpers import answered_body as _answered_body
from tests._report_helpers import answering_page as _answering_page
from tests._report_helpers import finding as _finding
from tests._report_helpers import two_source_body as _two_source_body


def test_a_page_quoted_once_or_twice_beside_the_page_that_answers_is_left_out() -> None:
    # one strong sentence of a page about something else made it worth quoting (its best quote is the
    # report's best); beside a page quoted six times it is a digression, and its citation cites a page
    # that does not answer
    page = [
        _finding(f"Station {word} keeps a lens of {word} glass.", 1, 0.7, i)
        for i, word in enumerate(WORDS[:6])
    ]
    aside = [_finding("Harbour pilots were paid by the tide in the old port.", 2, 0.95, 20)]

    def body(engine: str, title: str) -> str:
        rarity = {"lighthouse": 0.2, "concentrate": 0.01, "lamp's": 0.3}
        state: dict[str, Any] = {
            "engine": engine,
            "question": QUESTION,
            "plan": {
                "sub_questions": [QUESTION],
                "topic": "a lighthouse lens",
                "rarity": rarity,
            },
            "sources": [
                {"n": 1, "url": "corpus://a.html", "title": "Beacon handbook"},
                {"n": 2, "url": "corpus://b.html", "title": title},
            ],
            "evidence": [{"sub_question": QUESTION}],
            "findings": {"fact_reviewer": {"findings": page + aside}},
        }
        return extractive_report_body(state).split("## Sources")[0]

    left = body("extractive", "Harbour regulations")
    assert "Harbour pilots" not in left and "[2]" not in left, left
    assert "Station amber keeps a lens of amber glass [1]." in left, left
    # twice beside six times is still in passing; twice beside five is not
    twice = [*aside, _finding("The old port charged pilots a fee per mooring.", 2, 0.9, 21)]
    assert "[2]" not in _two_source_body(page + twice).split("## Sources")[0]
    assert "Harbour pilots" in _two_source_body(page[:5] + twice)
    # a page titled with the topic's word is about it, however little it gives
    assert "Harbour pilots" in body("extractive", "Lighthouse keepers' pay"), body
    # ... and so is a page titled with a word of the question few pages hold, not with a common one
    assert "Harbour pilots" in body("extractive", "How ports concentrate trade")
    assert "Harbour pilots" not in body("extractive", "The lamp's fuel")
    # a model's sub-questions (or a person's) are all asked: a page quoted once answers one of them
    assert "Harbour pilots" in body("llm", "Harbour regulations")


def test_the_one_page_that_answers_is_quoted_when_its_opening_has_no_sentence() -> None:
    # a manual page's first answering section is its NAME line, nothing to quote; its other answering
    # sections are quoted, at middling scores, beside a page of strong quotes found by the sub-questions'
    # words: the page that alone holds the answering sections must not be dropped as a digression
    page = [
        _finding(
            "The label is the nearest one reachable from the lamp.", 1, 0.5, 0, answer=2, answering=True
        ),
        _finding("The count is the number of changes since the label.", 1, 0.45, 1, answer=3, answering=True),
    ]
    other = [
        _finding(f"Protocol {word} lists its version string first.", 2, 0.9, 10 + i)
        for i, word in enumerate(WORDS[:6])
    ]
    body = _answered_body(page + other, (1,))
    assert "nearest one reachable from the lamp [1]." in body, body
    # ... and so is the page of the first answering section when another page holds some too (git-sparse-
    # checkout(1) beside technical/sparse-checkout.txt)
    body = _answered_body(page + other, (1, 2))
    assert "nearest one reachable from the lamp [1]." in body, body
    # holding answering sections below the first is not enough by itself: the weak page is left out
    body = _answered_body(page + other, (2, 1))
    assert "[1]" not in body.split("## Sources")[0], body


def test_a_second_page_that_answers_weighs_with_its_answering_sections() -> None:
    # the second page's own answering section is most of what it gives: with it, the page weighs enough
    # beside the first; without it, its one weaker quote elsewhere would make it look like a digression
    first = _answering_page(0.7)
    second = [
        _finding(text, 2, 0.7, 20 + i, answer=2, answering=True)
        for i, text in enumerate(
            (
                "A fog signal sounds when the beam cannot be seen.",
                "Its horn is driven by compressed air from a tank below.",
                "The keeper starts it as soon as the far buoy disappears.",
            )
        )
    ]
    second.append(_finding("Fog signals were first driven by steam engines.", 2, 0.2, 30))
    body = _two_source_body(first + second)
    assert "far buoy disappears [2]." in body and "steam engines [2]." in body, body


def test_a_page_that_answers_in_its_answering_sections_outweighs_a_digression() -> None:
    # the page that answers gives most of its quotes from its answering sections; they do not weigh by their
    # own place, but they count in what "the strongest source" weighs: a page with two middling quotes
    # elsewhere is a digression beside it, not the strongest of the rest
    texts = (
        "A lighthouse lens surrounds the lamp with rings of glass.",
        "Each ring is a slice of a much larger disc, cut thin.",
        "Prisms above and below the central band bend the upward rays.",
        "They return those rays to the horizontal plane.",
        "Bronze clips hold every prism in place through storms.",
        "The whole frame turns on a bath of mercury once a minute.",
    )
    page = [_finding(text, 1, 0.7, i, answer=1, answering=True) for i, text in enumerate(texts)]
    page.append(_finding("The beam of a first-order lens is seen twenty miles out.", 1, 0.8, 10))
    digression = [
        _finding("Harbour pilots were paid by the tide in the old port.", 2, 0.5, 20),
        _finding("The pier was lengthened twice before the war.", 2, 0.45, 21),
    ]
    body = _two_source_body(page + digression)
    assert all(text[:-1] in body for text in texts) and "twenty miles out [1]." in body, body
    assert "Harbour pilots" not in body and "[2]" not in body.split("## Sources")[0], body


def test_a_short_page_read_whole_as_answering_sections_is_still_quoted() -> None:
    # every quote of the best page (a short page) lies in its answering sections, so none weighs in the
    # choice of sources; a digression elsewhere is quoted by score - the best page must not vanish
    page = [
        _finding(
            "A lighthouse lens surrounds the lamp with rings of glass.", 1, 0.5, 0, answer=1, answering=True
        ),
        _finding("Prisms bend the rays that would escape upwards.", 1, 0.6, 1, answering=True),
    ]
    digression = [_finding("Lamp oil was delivered to the lighthouse by boat every month.", 2, 0.9, 2)]
    body = _two_source_body(page + digression)
    assert "rings of glass [1]." in body and "escape upwards [1]." in body, body


def test_a_second_page_that_explains_the_question_in_its_answering_sections_is_quoted() -> None:
    # the Logging HOWTO's "Advanced Logging Tutorial" (the fifth and sixth answering sections, after four
    # of the cookbook's) says how loggers, handlers and formatters work together: several of its quotes
    # there are as strong as any, and it is quoted; a page with one strong sentence there is not
    first = _answering_page(0.6)
    explains = [
        _finding("The lens gathers the lamp's light into one horizontal beam.", 2, 0.78, 20, answer=5),
        _finding("Its prisms bend the rays that would escape upwards.", 2, 0.72, 21, answer=5),
        _finding("The keeper winds the clock at dusk.", 2, 0.4, 22, answer=6),
    ]
    explains = [f | {"answering": True} for f in explains]
    body = _two_source_body(first + explains).split("## Sources")[0]
    assert "one horizontal beam [2]." in body and "escape upwards [2]." in body, body
    weak = [explains[2] | {"statement": f"The {word} keeper winds the clock."} for word in WORDS[:3]]
    once = [explains[0], *weak]
    body = _two_source_body(first + once).split("## Sources")[0]
    assert "[2]" not in body, body


def test_a_report_whose_only_quotes_are_an_answering_sections_quotes_them() -> None:
    answers = [
        _finding(
            "A lighthouse lens surrounds the lamp with rings of glass.", 1, 0.4, 0, answer=1, answering=True
        )
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}],
        "evidence": [{"sub_question": QUESTION}],
        "findings": {"fact_reviewer": {"findings": answers}},
    }
    assert "rings of glass [1]." in extractive_report_body(state)
    # ... and when that one quote is on a page below the first answering section's (whose opening has no
    # sentence), no rule keeps its page, and the report still quotes it rather than nothing
    state["findings"]["fact_reviewer"]["findings"] = [answers[0] | {"answer": 3, "citations": [2]}]
    state["sources"].append({"n": 2, "url": "corpus://b.html"})
    state["evidence"] = [{"sub_question": QUESTION, "n": 1, "answer": 1}]
    assert "rings of glass [2]." in extractive_report_body(state)


def test_when_every_quote_is_an_answering_one_a_page_needs_several_strong_ones() -> None:
    # every quote read in an answering section (handler.html's footer example among the SSI tutorial's):
    # strength is measured against the best of them, and one strong sentence is still a digression
    page = [
        _finding(f"Station {word} keeps a lens of {word} glass.", 1, 0.6, i, answer=2, answering=True)
        for i, word in enumerate(WORDS[:4])
    ]
    aside = [_finding("Handlers attach a footer script to every html file.", 2, 0.9, 20, answer=3)]
    aside += [
        _finding(f"The {word} handler is built into the server.", 2, 0.3, 21 + i, answer=3)
        for i, word in enumerate(WORDS[:3])
    ]
    body = _answered_body(page + [f | {"answering": True} for f in aside], (1, 2))
    assert "Station amber keeps a lens of amber glass [1]." in body, body
    assert "[2]" not in body.split("## Sources")[0], body


def test_the_pages_kept_for_their_answering_sections_are_no_strays() -> None:
    # quoted once or twice beside a page quoted seven times, but kept for the answering sections: the page
    # of the first one (git-sparse-checkout(1), whose first section is its NAME line) ...
    statements = (
        "Protocol version two sends capabilities before any ref.",
        "A client asks for the ls-refs command to list references.",
        "Servers advertise the fetch command with its features.",
        "Each request ends with a flush packet.",
        "Delimiter packets separate the sections of a request.",
        "Object formats other than SHA-1 are announced as a capability.",
        "The session ends when the client closes the connection.",
    )
    other = [_finding(text, 2, 0.9, 10 + i) for i, text in enumerate(statements)]
    first = [
        _finding("The label is the nearest one reachable from the lamp.", 1, 0.5, 0, answer=2, answering=True)
    ]
    body = _answered_body(first + other, (1, 2)).split("## Sources")[0]
    assert "nearest one reachable from the lamp [1]." in body and body.count("[2]") == 7, body
    # ... and a page that explains the question there in two strong sentences
    explains = [
        _finding("The lens gathers the lamp's light into one horizontal beam.", 1, 0.85, 1, answer=5),
        _finding("Its prisms bend the rays that would escape upwards.", 1, 0.8, 2, answer=5),
    ]
    body = _answered_body([f | {"answering": True} for f in explains] + other, (2, 1))
    assert "one horizontal beam [1]." in body and "escape upwards [1]." in body, body


def test_a_sentence_two_reviewers_chose_is_one_strong_sentence() -> None:
    strong = _finding(
        "Handlers attach a footer script to every html file.", 2, 0.9, 20, answer=3, answering=True
    )
    weak = [
        _finding(f"The {word} handler is built into the server.", 2, 0.3, 21 + i, answer=3, answering=True)
        for i, word in enumerate(WORDS[:2])
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": [{"sub_question": QUESTION, "n": 1, "answer": 1}],
        "findings": {
            "fact_reviewer": {"findings": [*_answering_page(0.6), strong, *weak]},
            "implication_reviewer": {"findings": [strong]},
        },
    }
    body = extractive_report_body(state).split("## Sources")[0]
    assert "Station amber keeps a lens of amber glass [1]." in body, body
    assert "[2]" not in body, body
