"""The question's answering sections (issue [quality] part 2): the sections that answer the question, ranked
as whole sections, are evidence on it, and their first sentences are findings in reading order whatever
words they use. On small real inputs (invented domains); the figures over whole manuals are measured by
bench/quality (bench/quality/JOURNAL.md, session 12)."""

from __future__ import annotations

from typing import Any

import pytest

from deepresearch.extractive.asking.planning import keyword_plan
from deepresearch.extractive.bm25 import SIDE, Scorer
from deepresearch.extractive.reading.sentences import quotes
from deepresearch.extractive.reading.text import content_tokens
from deepresearch.extractive.screening import ANSWER_PASSAGES, rank_sources
from deepresearch.report.digest import FINDINGS_PER_SUB_QUESTION, extractive_report_body
from deepresearch.report.findings import ANSWER_SENTENCES, extractive_review
from tests._report_helpers import QUESTION, WORDS
from tests._report_helpers import finding as _finding

LIMITS = "What are the limitations of a lighthouse lens?"


def _paragraph(*sentences: str) -> str:
    return " ".join(sentences) + "\n\n"


# one section explains the answer over five long paragraphs, in words the question mostly does not use
LENS_GUIDE = (
    "## Concentrating the light\n\n"
    + _paragraph(
        "A lighthouse lens surrounds the lamp with rings of glass.",
        "Each ring is a slice of a much larger lens, cut thin so that the whole assembly stays light.",
        "The rings sit in a brass frame that holds them at fixed angles around the flame.",
        *["The frame is cleaned every morning by the keeper, who polishes each ring by hand."] * 6,
    )
    + _paragraph(
        "Prisms above and below the central band bend the rays that would escape upwards or downwards.",
        "They return those rays to the horizontal plane, where ships can see them.",
        *["Bronze clips hold every prism in place through storms and the heat of the flame."] * 6,
    )
    + _paragraph(
        "The result is a beam many times brighter than the bare flame.",
        "Rotating the assembly turns the beam into the flashes that sailors count.",
        *["Clockwork under the floor turns the table once every half minute without pause."] * 6,
    )
    + _paragraph(
        "A red sector of glass in front of the lens marks the shoals to the north.",
        "Ships that see red know they must steer away from the rocks at once.",
        *["The red glass is replaced whenever salt spray has clouded its surface."] * 6,
    )
    + _paragraph(
        "A white sector of glass to the south marks the deep channel into the harbour.",
        "Ships that see white may hold their course into the port.",
        *["The white glass is checked for cracks after every winter storm."] * 6,
    )
    + "## History\n\nThe first such lenses were installed along rocky coasts in the nineteenth century.\n"
)
KEEPERS_LOG = (
    "## Supplies\n\nLamp oil, wicks and brass polish were delivered to the lighthouse by boat every month.\n"
)
SOURCES = [
    {"id": "S1", "n": 1, "title": "Beacon handbook", "text": LENS_GUIDE},
    {"id": "S2", "n": 2, "title": "Keeper's log", "text": KEEPERS_LOG},
]


def test_the_section_that_answers_is_evidence_on_the_question_with_its_first_passages() -> None:
    main, limits = rank_sources(QUESTION, [QUESTION, LIMITS], SOURCES, [4])[0]
    answers = [p for _, p in main if p.get("answer")]
    assert answers, [(p["source_id"], p["headings"]) for _, p in main]
    assert {p["answer"] for p in answers} >= {1}
    best = [p for p in answers if p["answer"] == 1]
    assert {p["headings"][-1] for p in best} == {"Concentrating the light"}
    assert len(best) == ANSWER_PASSAGES  # its first passages, not the whole section (it has five)
    # ... four of them: the answer goes on past the first three passages (the second of two reasons a
    # page gives, session 28), but not to the end of a long section
    assert any("A red sector of glass" in p["text"] for p in best), [p["text"] for p in best]
    assert not any("A white sector of glass" in p["text"] for p in best), [p["text"] for p in best]
    assert not any(p.get("answer") for _, p in limits)  # only the question itself has answering sections


def test_the_first_sentences_of_an_answering_section_are_findings_in_its_words() -> None:
    # a passage that repeats the question's words ranks first; the answering section ranks well below it, and
    # only its first sentence names the lens: the explanation goes on in other words
    dense = (
        "A lighthouse lens and its lamp concentrate light; the lens, the lamp and the light are inspected."
    )
    answer = (
        "A lighthouse lens surrounds the lamp with rings of glass. Each ring is a slice of a much larger "
        "disc, cut thin so that the whole assembly stays light. Prisms above and below the central band bend "
        "the rays that would escape upwards. They return those rays to the horizontal plane, where ships "
        "can see them. Bronze clips hold every prism in place through storms. A felt pad under each clip "
        "keeps the glass from cracking in frost. The whole frame turns on a bath of mercury once a minute. "
        "A brass curtain shades the glass from the sun by day. Spare mantles wait in a tin by the door. "
        "A logbook on the sill records each night's weather. Oil for the lamp is carried up in two cans. "
        "The stair has one hundred and twelve steps of cast iron. A bell by the gallery door calls the "
        "relief keeper. The keeper winds the clockwork at dusk."
    )
    evidence = [
        {"n": n, "title": f"Keeper's log {n}", "passage": dense.replace("inspected", word), "bm25": 2.0}
        for n, word in ((2, "inspected"), (3, "cleaned"), (4, "repaired"), (5, "painted"))
    ]
    evidence = [e | {"headings": ["Inspections"]} for e in evidence]
    evidence += [{"n": 1, "title": "Beacon handbook", "passage": answer, "headings": ["Lens"], "bm25": 0.8}]
    evidence = [e | {"sub_question_index": 0, "sub_question": QUESTION, "lead": False} for e in evidence]
    marked = [e | {"answer": 1} if e["n"] == 1 else e for e in evidence]
    findings = extractive_review("fact_reviewer", [QUESTION], marked, QUESTION)["findings"]
    answered = [f["statement"] for f in findings if f.get("answer") == 1]
    assert len(answered) == ANSWER_SENTENCES, answered
    assert any(s.startswith("Each ring is a slice") for s in answered)  # no word of the question
    assert not any("clockwork" in s for s in answered)  # past the first ANSWER_SENTENCES quotes
    assert any(s.startswith("Spare mantles") for s in answered)  # the eighth: the explanation goes on
    assert any(s.startswith("A bell by the gallery") for s in answered)  # the twelfth
    # the same evidence without the mark: the explanation is not quoted
    plain = extractive_review("fact_reviewer", [QUESTION], evidence, QUESTION)["findings"]
    assert not any(f["statement"].startswith("Each ring is a slice") for f in plain)


def test_an_answering_section_is_listed_in_reading_order_whatever_the_budget() -> None:
    # more than the summary takes and the sub-question's budget together
    regular = [_finding(f"Station {WORDS[i % 12]} records {i}x values.", 1, 0.9, i) for i in range(16)]
    regular.append(_finding("Lenses were first ground by hand in small workshops.", 2, 0.8, 40))
    answers = [
        _finding(text, 2, score, 50 + i, answer=1, answering=True)
        for i, (text, score) in enumerate(
            (
                ("A lighthouse lens surrounds the lamp with rings of glass.", 0.4),
                ("Prisms bend the rays that would escape upwards.", 0.2),
                ("The rays leave as one horizontal beam.", 0.3),
            )
        )
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [QUESTION]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": [{"sub_question": QUESTION}],
        "findings": {
            "fact_reviewer": {"findings": regular + answers},
            "implication_reviewer": {"findings": []},
            "risk_reviewer": {"findings": []},
        },
    }
    body = extractive_report_body(state)
    findings = body.split("## Findings")[1].split("## Disagreements and risks")[0]
    places = [findings.find(f["statement"][:-1]) for f in answers]
    assert all(place >= 0 for place in places) and places == sorted(places), findings
    # the other quotes still fill the sub-question's budget beside them
    assert findings.count("[1]") == FINDINGS_PER_SUB_QUESTION[1], findings


def test_the_best_pages_opening_section_is_its_first_answering_section() -> None:
    # the overview says what the page is about in words the question does not use; it still answers first
    guide = (
        "## Overview\n\nThe beacon's optics turn a small flame into a beam seen thirty miles out.\n\n"
        + LENS_GUIDE
    )
    sources = [{"id": "S1", "n": 1, "title": "Beacon handbook", "text": guide}, SOURCES[1]]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    ranks = {p["headings"][-1]: p["answer"] for _, p in main if p.get("answer")}
    assert ranks.get("Overview") == 1, ranks
    assert ranks.get("Concentrating the light") == 2, ranks
    # without the overview, the section that answers best is the first
    plain = rank_sources(QUESTION, [QUESTION], SOURCES, [4])[0][0]
    assert {p["headings"][-1]: p["answer"] for _, p in plain if p.get("answer")}[
        "Concentrating the light"
    ] == 1


def test_a_table_of_contents_is_no_answering_section() -> None:
    # a manual's table of contents names every section and says nothing: not the best page's opening (its
    # overview is), not one of its first sections read whatever their words, and not the lead of a second
    # page, though it names the question's words there
    guide = (
        "## Table of Contents\n\nOverview.\n\nConcentrating the light.\n\nHistory.\n\n"
        "## Overview\n\nThe beacon's optics turn a small flame into a beam seen thirty miles out.\n\n"
        + LENS_GUIDE
    )
    catalogue = (
        "## Contents\n\nLighthouse lens orders by size.\n\n## Lens orders\n\nSmaller lens orders light "
        "harbours and rivers; a first-order lens is the widest of them.\n\n"
    )
    sources = [
        {"id": "S1", "n": 1, "title": "Beacon handbook", "text": guide},
        {"id": "S3", "n": 3, "title": "Lens catalogue", "text": catalogue},
        SOURCES[1],
    ]
    main = rank_sources(QUESTION, [QUESTION], sources, [1])[0][0]
    ranks = {p["headings"][-1]: p["answer"] for _, p in main if p.get("answer")}
    assert "Table of Contents" not in ranks and ranks.get("Overview") == 1, ranks
    leads = [(p["source_id"], p["headings"][-1]) for _, p in main if p.get("lead")]
    assert ("S1", "History") in leads and ("S3", "Lens orders") in leads, leads
    assert not {h for _, h in leads} & {"Table of Contents", "Contents"}, leads


def test_the_best_pages_first_sections_are_evidence_whatever_words_they_use() -> None:
    # a guide says what to do before and around the answer in sections that share no word with the question
    # ("Configuring your server to permit SSI" is the third section of Apache's SSI tutorial, "Options
    # +Includes" its first step): the best page's first four sections the ranking did not take are read
    guide = (
        "## Overview\n\nThe beacon's optics turn a small flame into a beam seen thirty miles out.\n\n"
        + LENS_GUIDE.split("## History")[0]
        + "## Before the first watch\n\nThe keeper trims the wick to a flat edge and fills the reservoir.\n\n"
        + "## Winter duties\n\nIce on the gallery rail is chipped away before dusk, and storm panes shut.\n\n"
        + "## History\n\nThe first such lenses were installed along rocky coasts long ago.\n\n"
        + "## Paint schedule\n\nThe tower's stripes are repainted every fifth summer by a hired crew.\n"
    )
    sources = [{"id": "S1", "n": 1, "title": "Beacon handbook", "text": guide}, SOURCES[1]]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    leads = [p["headings"][-1] for _, p in main if p.get("lead") and p["source_id"] == "S1"]
    assert {"Overview", "Before the first watch", "Winter duties", "History"} <= set(leads), leads
    assert "Paint schedule" not in leads  # the fifth: a page's later sections are its reference part


def test_the_eight_best_sections_of_the_pages_that_answer_are_answering_sections() -> None:
    # a guide answers further down than its best three or four sections: the HTTP/2 guide's "MPM
    # Configuration" is where page loads that stall under prefork are explained; each section here names
    # the question once, and the shorter a section, the better it ranks
    duties = ["Records", "Gallery", "Paint", "Supplies", "Keepers", "Fog", "Clockwork", "Signals", "Storms"]
    overview = "## Overview\n\nThe beacon's optics turn a small flame into a beam seen thirty miles out.\n\n"
    guide = overview + "".join(
        f"## {duty}\n\nThe lighthouse lens and the lamp's light matter for {duty.lower()} work. "
        + " ".join(f"{duty} duties fill the keeper's day number {k}." for k in range(rank + 1))
        + "\n\n"
        for rank, duty in enumerate(duties)
    )
    sources = [{"id": "S1", "n": 1, "title": "Beacon handbook", "text": guide}, SOURCES[1]]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    ranks = {p["headings"][-1]: p["answer"] for _, p in main if p.get("answer")}
    assert ranks.get("Overview") == 1 and ranks.get("Records") == 2, ranks
    assert ranks.get("Signals") == 9, ranks  # the eighth best section: four or six would stop short
    assert "Storms" not in ranks, ranks  # the ninth is not


def _side_state(engine: str) -> dict[str, Any]:
    plan = keyword_plan(QUESTION, 4)
    aspect = "What is a lighthouse lens?"
    assert aspect in plan.aspects, plan  # the extractive planner's own side question
    findings = [
        _finding("The lens gathers the lamp's light into one horizontal beam.", 1, 0.9, 0),
        _finding("Prisms above the central band bend the upward rays back down.", 1, 0.9, 1),
        {**_finding("Harbour fees are due from every vessel that moors at the pier.", 2, 0.9, 2)},
        {**_finding("A lighthouse lens is a stack of glass rings in a brass frame.", 3, 0.9, 3)},
        {**_finding("The lamp burned colza oil before paraffin replaced it.", 1, 0.9, 4)},
    ]
    for finding in findings[2:]:
        finding["sub_question"] = aspect
    return {
        "question": QUESTION,
        "engine": engine,
        # as the planner gives it: the topic, and the share of the corpus's pages holding each word
        "plan": {"sub_questions": plan.sub_questions, "topic": plan.topic, "rarity": {"lighthouse": 0.2}},
        "sources": [
            {"n": 1, "url": "corpus://a.html", "title": "Beacon handbook"},
            {"n": 2, "url": "corpus://b.html", "title": "Harbour regulations"},
            {"n": 3, "url": "corpus://c.html", "title": "Lighthouse lens catalogue"},
        ],
        "evidence": [{"sub_question": sq} for sq in plan.sub_questions],
        "findings": {"fact_reviewer": {"findings": findings}},
    }


def test_a_side_question_quotes_the_answers_sources_or_a_page_titled_with_what_it_asks() -> None:
    body = extractive_report_body(_side_state("extractive"))
    assert "paraffin replaced it [1]" in body  # a source the question itself quotes
    assert "in a brass frame [3]" in body  # a page titled with what the side question asks about
    assert "Harbour fees" not in body, body  # found only through the side question: a digression
    # a model's plan (or a person's) has no such side questions: every quote stays
    assert "Harbour fees are due" in extractive_report_body(_side_state("llm"))


def test_a_subordinate_clause_sets_a_condition_and_counts_less_than_what_is_asked() -> None:
    # "when I can fit the electric lamp in the tower" says when the question holds; the sentence that names
    # the lamp and the tower most must not outrank the one on the lantern oil the question is about
    question = "Why should I avoid lantern oil when I can fit the electric lamp in the tower?"
    side = "The electric lamp in the tower is fitted by the harbour office every spring."
    asked = "Lantern oil smokes the glass and must be carried up the stairs every night."
    evidence = [
        {"n": 1, "title": "Keeper's handbook", "passage": f"{asked} {side}", "headings": ["Lighting"]}
        | {"bm25": 1.0, "sub_question_index": 0, "sub_question": question, "lead": False}
    ]
    findings = extractive_review("fact_reviewer", [question], evidence, question)["findings"]
    score = {f["statement"]: f["score"] for f in findings}
    assert score[asked] > score[side], score
    # with no clause of its own to outweigh, a condition is what is asked ("What happens when ...?")
    when = "What happens when the electric lamp in the tower fails?"
    evidence = [e | {"sub_question": when} for e in evidence]
    findings = extractive_review("fact_reviewer", [when], evidence, when)["findings"]
    score = {f["statement"]: f["score"] for f in findings}
    assert score[side] > score.get(asked, 0.0), score
    # only what the asker can already do sets the scene: a condition on the thing itself, or on what the
    # asker does, is what the question is about, and keeps its weight
    scorer = Scorer(quotes(f"{asked} {side}", 1))
    lamp = content_tokens("electric")[0]
    full = scorer.weights("Why does lantern oil smoke when the electric lamp in the tower is fitted?", "")
    mine = scorer.weights("Why does lantern oil smoke when I use the electric lamp in the tower?", "")
    scene = scorer.weights(question, "")
    assert full.own[lamp] == mine.own[lamp] == scorer.idf(lamp), (full, mine)
    assert scene.own[lamp] == SIDE * scorer.idf(lamp), scene


def test_every_sub_question_read_for_has_its_section() -> None:
    # a sub-question with passages but no quote of its own got no heading while the run said "3/3
    # sub-questions covered" and the open questions still named it
    lens, lamp, fog = "How does the lens work?", "How is the lamp lit?", "What does the fog do?"
    findings = [
        {**_finding("The lens bends the rays into one beam.", 1, 0.9, 1), "sub_question": lens},
        {**_finding("The keeper lights the lamp at dusk.", 2, 0.7, 3), "sub_question": lamp},
    ]
    state: dict[str, Any] = {
        "engine": "extractive",
        "plan": {"sub_questions": [lens, lamp, fog]},
        "sources": [{"n": 1, "url": "corpus://a.html"}, {"n": 2, "url": "corpus://b.html"}],
        "evidence": [{"sub_question": q} for q in (lens, lamp, fog)],
        "findings": {"fact_reviewer": {"findings": findings}},
    }
    body = extractive_report_body(state)
    summary = body.split("## Findings")[0]
    assert "The lens bends the rays" in summary, body  # the question's one quote went to the summary
    assert "The keeper lights the lamp" not in summary, body  # ... a sub-question's stays under it
    sections = body.split("## Findings")[1].split("## Disagreements and risks")[0]
    for heading in (lens, lamp, fog):
        assert f"### {heading}" in sections, sections
    assert sections.split(f"### {lens}")[1].split("###")[0].strip() == "Its answers are quoted above."
    assert "The keeper lights the lamp at dusk" in sections.split(f"### {lamp}")[1].split("###")[0]
    assert sections.split(f"### {fog}")[1].strip() == "The passages read for it quote no answer to it."


def test_on_a_page_of_questions_only_the_best_ones_section_answers() -> None:
    # borgbackup's FAQ answered "How can a cron job give borg the password?" with its own entry, then with
    # "What's the expected backup performance?" and six more entries that each answer another question;
    # a guide's next sections go on with the same answer, an FAQ's next entries do not
    faq = (
        "## Lamp questions\n\nAnswers the keepers asked for.\n\n"
        "## How does a lighthouse lens concentrate the light of the lamp?\n\n"
        "Rings of glass around the lamp bend its light into one beam.\n\n"
        "## How often is the lighthouse lens cleaned?\n\n"
        "The lens of the lighthouse is polished every morning, and the lamp's soot is wiped off.\n\n"
        "## Can a lighthouse lens crack in the cold?\n\n"
        "A lens of the lighthouse can crack when a cold gust meets the glass the lamp has heated.\n"
    )
    sources = [{"id": "S1", "n": 1, "title": "Keepers' FAQ", "text": faq}, SOURCES[0] | {"id": "S2", "n": 2}]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    answering = {p["headings"][-1] for _, p in main if p.get("answer") and p["n"] == 1}
    assert "How does a lighthouse lens concentrate the light of the lamp?" in answering, answering
    assert not answering & {
        "How often is the lighthouse lens cleaned?",
        "Can a lighthouse lens crack in the cold?",
    }


def test_release_notes_answer_less_than_the_page_on_the_question() -> None:
    # borgbackup's changelog was the best page for "Why isn't the space freed after I deleted archives?": it
    # names every word of the manual once, in passing ("1.1.11 removes WSL autodetection")
    releases = "".join(
        f"## Version 1.{minor}.0 (2020-0{minor}-01)\n\nThe lighthouse lens concentrate fix for the lamp "
        f"light of release {minor}; lens light lamp concentrate changes.\n\n"
        for minor in range(1, 6)
    )
    sources = [
        {"id": "S1", "n": 1, "title": "Change log", "text": releases},
        SOURCES[0] | {"id": "S2", "n": 2},
    ]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    pages = {p["n"]: p["page"] for _, p in main}
    assert pages[2] == 1.0 and pages.get(1, 0.0) < 0.8, pages  # the guide is the best page, the log no answer
    assert not any(p.get("answer") for _, p in main if p["n"] == 1)


@pytest.mark.parametrize(
    ("title", "heading"),
    [
        # celery's "Change history for Celery 2.1": a release's sections are its "Fixes" and "News"
        ("Lamp history", lambda minor: f"## 1.{minor}.4\n\n### Fixes\n\n"),
        # ... and a page titled as a history is one whatever its sections are named
        ("Change history for Lamp 1.0", lambda minor: f"## Lens fixes {minor}\n\n"),
    ],
)
def test_release_notes_under_a_releases_sub_headings_answer_less(title: str, heading: Any) -> None:
    releases = f"# {title}\n\n" + "".join(
        heading(minor) + "The lighthouse lens concentrate fix for the lamp "
        f"light of release {minor}; lens light lamp concentrate changes.\n\n"
        for minor in range(1, 6)
    )
    sources = [
        {"id": "S1", "n": 1, "title": title, "text": releases},
        SOURCES[0] | {"id": "S2", "n": 2},
    ]
    main = rank_sources(QUESTION, [QUESTION], sources, [4])[0][0]
    pages = {p["n"]: p["page"] for _, p in main}
    assert pages[2] == 1.0 and pages.get(1, 0.0) < 1.0, pages  # as relevant, the log would be the best page


def test_an_explanation_goes_on_into_the_next_passage_of_its_section() -> None:
    # bind9-doc: the answer "The solution to this is to add 2147483647 ..." opens the second passage of its
    # section, after the sentences that name the question's words
    question = "How do I get the wick of my lantern back to its normal length without breaking the glass?"
    first = (
        "A lantern wick that was set too long burns the glass of the lantern. Keepers often set the wick "
        "of a lantern to its normal length by turning it down at once, which cracks the glass."
    )
    cure = "The cure for this is to soak the cord in brine for a night, then trim it with the shears."
    filler = "Harbour fees are collected at the office on the quay by the clerk every month."
    evidence = [
        {"n": 1, "passage": first, "passage_id": "S1.4", "bm25": 2.0},
        {"n": 1, "passage": cure, "passage_id": "S1.5", "bm25": 0.5},
        {"n": 2, "passage": filler, "passage_id": "S2.1", "bm25": 0.4, "headings": ["Fees"]},
    ]
    evidence = [
        {"title": "Keeper's handbook", "headings": ["Wicks"], "sub_question_index": 0, "lead": False}
        | e
        | {"sub_question": question}
        for e in evidence
    ]
    statements = [
        f["statement"] for f in extractive_review("fact_reviewer", [question], evidence, question)["findings"]
    ]
    assert cure in statements, statements
    # ... only from the passage that goes on in the same section: not from another section's
    other = [e | {"headings": ["Cords"]} if e["passage_id"] == "S1.5" else e for e in evidence]
    statements = [
        f["statement"] for f in extractive_review("fact_reviewer", [question], other, question)["findings"]
    ]
    assert cure not in statements, statements
