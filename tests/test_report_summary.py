"""The extractive report's summary (report/digest.py `_summary`): the quotes that answer the question most
directly - on the question itself, not on a side question the planner added - valued by their score, the
words of the question they name and how early their passage comes in the evidence, until the summary holds
SUMMARY_CHARS characters. Invented lighthouse material."""

from __future__ import annotations

from typing import Any

import pytest

from deepresearch.report.digest import (
    CORROBORATE,
    NO_ANSWER_QUOTED,
    NOT_ANSWERED,
    NOTHING_QUOTED,
    ONE_SOURCE,
    QUOTED_ABOVE,
    READ_ABOVE,
    RISK,
    SEARCH_AGAIN,
    SUMMARY_CHARS,
    SUMMARY_CLAIMS,
    extractive_report_body,
)
from tests._report_helpers import QUESTION, finding

ASPECT = "What is a lighthouse lens?"


def summary_of(findings: list[dict[str, Any]], sub_questions: list[str], engine: str = "extractive") -> str:
    state: dict[str, Any] = {
        "engine": engine,
        "question": QUESTION,
        "plan": {"sub_questions": sub_questions},
        "sources": [{"n": n, "url": f"corpus://{n}.html"} for n in (1, 2, 3)],
        "evidence": [{"sub_question": q} for q in sub_questions],
        "findings": {"fact_reviewer": {"findings": findings}},
    }
    return extractive_report_body(state).split("## Findings")[0]


def test_a_side_questions_quotes_stay_under_it() -> None:
    # the planner's "What is X?" quote scores best, and still explains X, not what was asked
    findings = [
        finding("A lighthouse lens is a Fresnel lens of many rings.", 1, 0.95, 0) | {"sub_question": ASPECT},
        finding("The lens bends the lamp's light into one beam of parallel rays.", 1, 0.7, 0),
        finding("Prisms above the lens send the rays that would escape upwards to the horizon.", 1, 0.6, 1),
    ]
    summary = summary_of(findings, [QUESTION, ASPECT])
    assert "Fresnel lens of many rings" not in summary, summary
    assert "one beam of parallel rays" in summary and "escape upwards" in summary, summary


def test_a_quote_that_names_the_question_from_an_early_passage_leads() -> None:
    # the first scores a little better; the second names the lens, the lamp and the light, and its passage
    # is the evidence's first
    findings = [
        finding("Each ring of glass is ground by hand in the workshop.", 2, 0.8, 5),
        finding("The lens concentrates the lamp's light into a beam.", 1, 0.75, 0),
        finding("Keepers polish the glass every morning with a soft cloth.", 3, 0.7, 9),
    ]
    summary = summary_of(findings, [QUESTION])
    assert quoted(summary)[0].startswith("- The lens concentrates the lamp's light"), summary


def test_the_summary_stops_at_its_length() -> None:
    # quotes of 150 characters or more: the third brings the summary past SUMMARY_CHARS, a fourth is not taken
    long = [
        "The lens turns on a bath of mercury, so that a keeper can turn its tons of glass by hand, and the "
        "clockwork beneath it is wound every four hours through the night.",
        "Prisms above and below the central drum catch the rays that would escape towards the sky or the sea "
        "and send them out level with the horizon, where ships can see them.",
        "A first-order lens stands taller than a keeper and weighs several tons; it was made for the coast's "
        "main lights, where the beam must reach ships twenty miles out at sea.",
        "Coloured screens set before the lens give a light its own colour, so that a navigator can tell one "
        "harbour from the next along a coast where many lights burn each night.",
        "Keepers draw linen curtains around the lens by day, because the sun focused through its rings of "
        "glass could scorch the lamp's wick and crack the glass chimney inside.",
    ][:SUMMARY_CLAIMS]
    assert all(len(text) >= 150 for text in long) and 3 * 150 >= SUMMARY_CHARS > 2 * 150
    findings = [finding(text, 1, 0.9 - i / 100, i) for i, text in enumerate(long)]
    assert len(quoted(summary_of(findings, [QUESTION]))) == 3
    # short ones: SUMMARY_CLAIMS of them, however short
    cut = [text.split(",")[0].split(";")[0] + "." for text in long]
    cut += ["The lamp burns paraffin oil.", "The keeper trims the wick at dusk."]
    short = [finding(text, 1, 0.9 - i / 100, i) for i, text in enumerate(cut)]
    assert len(quoted(summary_of(short, [QUESTION]))) == SUMMARY_CLAIMS


def quoted(summary: str) -> list[str]:
    return [line for line in summary.splitlines() if line.startswith("- ")]


def test_a_models_sub_questions_are_all_asked() -> None:
    # a model's plan has no side questions of the planner: a quote on any sub-question may sum it up
    other = "Why do lighthouses flash?"
    findings = [
        finding("The lens bends the lamp's light into one beam of parallel rays.", 1, 0.7, 0),
        finding("Each light flashes its own rhythm so that ships can tell them apart.", 2, 0.9, 0)
        | {"sub_question": other},
    ]
    assert "its own rhythm" in summary_of(findings, [QUESTION, other], engine="llm")
    assert "its own rhythm" not in summary_of(findings, [QUESTION, other])


def test_a_limit_is_no_summary() -> None:
    # only the sub-question about limits was answered: the summary says the question was not
    limits = "What are the limitations of a lighthouse lens?"
    findings = [
        finding("A lens cannot be seen in thick fog beyond a mile.", 1, 0.9, 0) | {"sub_question": limits}
    ]
    summary = summary_of(findings, [QUESTION, limits])
    assert "cannot be seen in thick fog" not in summary and "did not answer the question directly" in summary


def test_a_weak_quote_that_repeats_the_question_does_not_lead() -> None:
    # it names every word of the question and comes first in the evidence, but scores a tenth of the best
    findings = [
        finding(
            "The lens bends the rays of the lamp into one beam that ships see far out at sea.", 1, 1.0, 7
        ),
        finding("A lighthouse lens concentrates the lamp's light.", 1, 0.1, 0),
    ]
    summary = summary_of(findings, [QUESTION])
    assert "one beam that ships see" in summary and "concentrates the lamp's light" not in summary, summary


LIMITS = "What are the limitations of a lighthouse lens?"


def limits_state(
    findings: dict[str, list[dict[str, Any]]],
    passage: str = "The lens bends the lamp's light into one beam of parallel rays.",
) -> dict[str, Any]:
    """A run on the question and its limits sub-question, both of which read ``passage``."""
    return {
        "engine": "extractive",
        "question": QUESTION,
        "plan": {"sub_questions": [QUESTION, LIMITS]},
        "sources": [{"n": n, "url": f"corpus://{n}.html"} for n in (1, 2)],
        "evidence": [
            {"sub_question": q, "sub_question_index": i, "passage": passage}
            for i, q in enumerate((QUESTION, LIMITS))
        ],
        "findings": {name: {"findings": found} for name, found in findings.items()},
    }


def limits_body(findings: dict[str, list[dict[str, Any]]]) -> str:
    # the limits sub-question read the passage the answer above is quoted from
    return extractive_report_body(limits_state(findings)).split("## Disagreements")[0]


def test_a_limits_section_says_its_answers_are_above_only_when_a_limit_is() -> None:
    # the Flask reports' "What are the limitations of ...?" said "Its answers are quoted above." where only
    # the answer to the question itself was, and no limit anywhere
    answer = "The lens bends the lamp's light into one beam of parallel rays."
    facts = [finding(answer, 1, 0.9, 0), finding(answer, 1, 0.9, 0) | {"sub_question": LIMITS}]
    body = limits_body({"fact_reviewer": facts})
    assert f"### {LIMITS}\n\n{NOT_ANSWERED}" in body, body
    # a stated limit quoted above (a risk reviewer's finding on the limits sub-question) is its answer: every
    # section's answers are above, and the report says so once
    limit = "A lens of this kind cannot bend the light of a lamp placed off its focal point."
    risks = [finding(limit, 2, 0.85, 1) | {"sub_question": LIMITS}]
    body = limits_body({"fact_reviewer": [*facts, finding(limit, 2, 0.85, 1)], "risk_reviewer": risks})
    assert "Every finding is in the summary above." in body and NOT_ANSWERED not in body, body
    assert QUOTED_ABOVE not in body  # said once for all, not per section


def test_a_section_whose_passages_were_quoted_under_another_says_so() -> None:
    # borgbackup's "Which of repokey and keyfile encryption should I choose?" said its passages "quote no
    # answer to it" while the report quoted them under the question before it
    choose = "Which of a lens and a mirror should the keeper choose?"
    answer = "A lens bends the lamp's light into one beam; a mirror only sends it back."
    other = "The gallery is painted white every spring by the keeper."
    state: dict[str, Any] = {
        "engine": "extractive",
        "question": QUESTION,
        "plan": {"sub_questions": [QUESTION, choose]},
        "sources": [{"n": 1, "url": "corpus://1.html"}],
        "evidence": [
            {"sub_question": QUESTION, "sub_question_index": 0, "passage": answer},
            {"sub_question": choose, "sub_question_index": 1, "passage": f"{answer} {other}"},
        ],
        "findings": {"fact_reviewer": {"findings": [finding(answer, 1, 0.9, 0)]}},
    }
    body = extractive_report_body(state)
    assert f"### {choose}\n\n{READ_ABOVE}" in body, body
    # passages that gave nothing above: no answer, as before
    state["evidence"][1]["passage"] = other
    assert f"### {choose}\n\n{NOT_ANSWERED}" in extractive_report_body(state)


def test_a_section_that_quotes_no_answer_is_no_open_question_of_one_source() -> None:
    # postfix-doc's report: "The passages read for it quote no answer to it." above "Only one source holds
    # evidence on: ..." and "Corroborate '...' with a second independent source."
    answer = "The lens bends the lamp's light into one beam of parallel rays."
    found = {"fact_reviewer": [finding(answer, 1, 0.9, 0)]}
    state = limits_state(found, passage="The keeper polishes the brass.") | {
        "critique": {
            "issues": [ONE_SOURCE.format(QUESTION), ONE_SOURCE.format(LIMITS)],
            "suggestions": [CORROBORATE.format(QUESTION), CORROBORATE.format(LIMITS)],
        },
    }
    body = extractive_report_body(state)
    assert f"### {LIMITS}\n\n{NOT_ANSWERED}" in body, body
    rest = body.split("## Open questions")[1]
    assert f"- {NO_ANSWER_QUOTED.format(LIMITS)}" in rest and ONE_SOURCE.format(LIMITS) not in rest, rest
    assert f"- {SEARCH_AGAIN.format(LIMITS)}" in rest and CORROBORATE.format(LIMITS) not in rest, rest
    # the question itself, answered by one source, is still an open question of one source
    assert f"- {ONE_SOURCE.format(QUESTION)}" in rest and f"- {CORROBORATE.format(QUESTION)}" in rest, rest


def test_a_report_that_quotes_nothing_says_so_under_risks() -> None:
    # a corpus that held only a code sample: "a limit stated in other words may still be quoted above" sat
    # under a report that quoted nothing
    body = extractive_report_body(limits_state({}))
    risks = body.split("## Disagreements and risks")[1].split("## Open questions")[0]
    assert NOTHING_QUOTED in risks and "quoted above" not in risks, risks


@pytest.mark.parametrize(
    "risk",
    [
        # diffutils (session 37): "a larger fuzz factor increases the odds of making a faulty patch" was
        # quoted above a risks section that said no quote held a warning word
        "A longer wick increases the odds of a faulty flame on a windy night.",
        "An open hatch lets the rain damage the lens on stormy nights.",
        "A program crash while the lamp is lit leaves the shutter open all night.",
        "A cracked chimney can leak fumes into the lamp room.",
    ],
)
def test_a_stated_harm_is_a_risk_the_risks_section_points_at(risk: str) -> None:
    assert RISK.search(risk)
    body = extractive_report_body(limits_state({"fact_reviewer": [finding(risk, 1, 0.9, 0)]}))
    risks = body.split("## Disagreements and risks")[1].split("## Open questions")[0]
    assert "None listed beyond what is quoted under" in risks, body


def test_a_tutorials_narration_does_not_lead_the_summary() -> None:
    # the Rust book's Summaries opened "In this section, we'll talk about ..." and "Let's try calling panic!
    # ..." over the answers its Findings quoted: narration says what the page does next
    findings = [
        finding("In this section, we'll look at how the lens and the lamp light the sea.", 1, 0.9, 0),
        finding("Let's try lighting the lamp behind the lens on a calm night.", 1, 0.85, 0),
        finding("The lens concentrates the lamp's light into one beam.", 1, 0.75, 1),
    ]
    summary = summary_of(findings, [QUESTION])
    first = next(line for line in summary.splitlines() if line.startswith("- "))
    assert "concentrates the lamp's light" in first, summary


def test_a_quote_under_a_label_that_names_the_question_leads() -> None:
    # zsh's "How do I make zsh share command history ...?": the Summary quoted how to turn SHARE_HISTORY off
    # while "This option both imports new commands from the history file ..." sat in Findings under the
    # label SHARE_HISTORY - the label names what the sentence is about
    findings = [
        finding("Keepers may wish to turn the clockwork off and wind it by hand on calm nights.", 2, 0.8, 0),
        finding("This option both turns the drum and grinds the rings around it.", 1, 0.7, 0)
        | {"section": "LENS_CONCENTRATE"},
    ]
    first = next(line for line in summary_of(findings, [QUESTION]).splitlines() if line.startswith("- "))
    assert "This option both turns the drum" in first, first


def test_a_quote_that_points_back_inside_it_is_no_summary_bullet() -> None:
    # Varnish's "Varnish and Drupal doesn't need to see those cookies and since ..." led a Summary without
    # the sentence that names the cookies; its Findings paragraph shows it after that sentence. "those files
    # that ...", "these options:" and "these are called ..." tell what they mean, and stay.
    findings = [
        finding("The keepers never clean those rings and since the lamp burns clean it stays.", 1, 0.9, 0),
        finding("The lens concentrates the lamp's light into one beam in every lighthouse.", 1, 0.8, 0),
        finding("Only those rings that face the sea concentrate the lamp's light.", 1, 0.7, 1),
        finding("Although these rings are called prisms, they bend the lamp's light like a lens.", 1, 0.7, 2),
    ]
    summary = summary_of(findings, [QUESTION])
    assert "those rings and since" not in summary, summary
    assert "one beam in every lighthouse" in summary and "those rings that face the sea" in summary, summary
    assert "these rings are called prisms" in summary, summary  # it names them


def test_a_comparisons_summary_leads_with_each_side() -> None:
    # Varnish's "What is the difference between purging and banning ...?": five Summary bullets on purging,
    # none of the bans its Findings quoted
    asked = "What is the difference between trimming and polishing a lens?"
    trimmed = [
        "Trimming a lens keeps the lamp's light in one beam.",
        "A keeper trims the wick of the lamp before the lens is lit.",
        "Trimming takes a quarter of an hour every evening at dusk.",
        "The trimmed flame burns without smoke behind the lens.",
        "An untrimmed wick blackens the glass of the lantern room.",
    ]
    findings = [finding(text, 1, 0.9 - i / 100, 0) for i, text in enumerate(trimmed)]
    findings += [finding("A keeper polishes the lens once a week with rouge.", 1, 0.6, 2)]
    findings = [f | {"sub_question": asked} for f in findings]
    state: dict[str, Any] = {
        "engine": "extractive",
        "question": asked,
        "plan": {"sub_questions": [asked], "topic": "trimming and polishing"},
        "sources": [{"n": 1, "url": "corpus://1.html"}],
        "evidence": [{"sub_question": asked}],
        "findings": {"fact_reviewer": {"findings": findings}},
    }
    bullets = quoted(extractive_report_body(state).split("## Findings")[0])
    assert "Trimming a lens keeps" in bullets[0] and "polishes the lens" in bullets[1], bullets
