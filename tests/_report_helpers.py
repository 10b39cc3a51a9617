"""The extractive report tests' shared material: a lighthouse question, findings as the reviewers give
them, and the report body composed of them (test_extractive_answers.py, test_extractive_focus.py)."""

from __future__ import annotations

from typing import Any

from deepresearch.report.digest import extractive_report_body

QUESTION = "How does a lighthouse lens concentrate the lamp's light?"
WORDS = (
    "amber",
    "basalt",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "granite",
    "harbour",
    "inlet",
    "jetty",
    "kelp",
    "lagoon",
)


def finding(text: str, n: int, score: float, order: int, **marks: Any) -> dict[str, Any]:
    """A fact reviewer's finding on QUESTION: a quote of source `n`, its score and place, and `marks`."""
    return {
        "sub_question": QUESTION,
        "statement": text,
        "citations": [n],
        "section": "",
        "score": score,
        "order": [order, 0],
    } | marks


def two_source_body(findings: list[dict[str, Any]]) -> str:
    """The report body of the fact reviewer's findings over two sources, a.html [1] and b.html [2]."""
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": [{"sub_question": QUESTION}],
        "findings": {"fact_reviewer": {"findings": findings}},
    }
    return extractive_report_body(state)


def answering_page(score: float) -> list[dict[str, Any]]:
    """The first page's findings: eight quotes of its first answering section scoring `score`, and one
    scored quote elsewhere (0.8, the report's best)."""
    page = [
        finding(f"Station {word} keeps a lens of {word} glass.", 1, score, i, answer=1, answering=True)
        for i, word in enumerate(WORDS[:8])
    ]
    return [*page, finding("The beam of a first-order lens is seen twenty miles out.", 1, 0.8, 10)]


def answered_body(findings: list[dict[str, Any]], answering_pages: tuple[int, ...]) -> str:
    """The report body when the question's answering sections were read on `answering_pages`, the first
    answering section on the first of them."""
    evidence = [
        {"sub_question": QUESTION, "n": n, "answer": rank} for rank, n in enumerate(answering_pages, 2)
    ]
    evidence.append({"sub_question": QUESTION, "n": answering_pages[0], "answer": 1})
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": evidence,
        "findings": {"fact_reviewer": {"findings": findings}},
    }
    return extractive_report_body(state)
