"""Every prompt the engine sends, versioned. Bump a prompt's version when its wording changes: the version is
part of the receipt hash, so an old recorded answer is never reused for a new prompt.

Each system prompt carries a marker line ``deepresearch prompt <id>`` so logs and test servers can tell
which prompt a request belongs to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    system: str
    user: str

    def messages(self, **values: Any) -> list[dict[str, str]]:
        values = {"json_rule": JSON_RULE, **values}
        system = f"deepresearch prompt {self.id}\n{_fill(self.system.strip(), values)}"
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": _fill(self.user.strip(), values)},
        ]


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def _fill(template: str, values: dict[str, Any]) -> str:
    """Replace {name} placeholders only; JSON examples with braces and user text stay untouched."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"prompt placeholder {{{name}}} has no value")
        return str(values[name])

    return _PLACEHOLDER.sub(replace, template)


JSON_RULE = "Answer with one JSON object only, no prose, no code fences."

PLAN = Prompt(
    "plan/v1",
    """You are a research planner. Break the user's question into focused sub-questions and write web
search queries that together cover them: definitions, evidence and numbers, competing views, risks.
Queries are short (3-10 words), specific, and each one useful on its own. {json_rule}
Schema: {"sub_questions": [string], "queries": [string], "rationale": string}""",
    """Question: {question}

Write at most {max_sub_questions} sub-questions and exactly {queries_per_round} search queries.""",
)

SCREEN = Prompt(
    "screen/v1",
    """You screen evidence for a research report. For the sub-question, keep only passages that contain
concrete information answering it (facts, figures, mechanisms, named positions). Score relevance 0..1.
{json_rule}
Schema: {"relevant": [{"passage_id": string, "relevance": number, "reason": string}]}""",
    """Research question: {question}
Sub-question: {sub_question}

Passages:
{passages}""",
)

REFLECT = Prompt(
    "reflect/v1",
    """You review the evidence gathered so far for a research question. Decide whether it is sufficient
to answer every sub-question with at least two independent sources. If not, name the gaps and write
follow-up web search queries (at most {max_queries}) that would fill them. {json_rule}
Schema: {"sufficient": boolean, "knowledge_gaps": [string], "follow_up_queries": [string]}""",
    """Question: {question}
Sub-questions:
{sub_questions}

Evidence coverage (sub-question: passages from distinct sources):
{coverage}

Queries already run:
{queries_done}""",
)

REVIEWER_ROLES: dict[str, str] = {
    "fact_reviewer": "You are the fact reviewer: state what the evidence establishes, with numbers and "
    "mechanisms, sub-question by sub-question.",
    "implication_reviewer": "You are the implication reviewer: state what the evidence means in practice - "
    "consequences, decisions it supports, conditions under which it holds.",
    "risk_reviewer": "You are the risk reviewer: state risks, limitations, trade-offs and where sources "
    "disagree or evidence is thin.",
}

REVIEW = Prompt(
    "review/v1",
    """{role}
Use only the numbered evidence below. Every finding cites the source numbers [n] it rests on; never cite a
number that is not listed; never use outside knowledge. {json_rule}
Schema: {"findings": [{"sub_question": string, "statement": string, "citations": [int],
"confidence": "high"|"medium"|"low"}], "disagreements": [string], "open_questions": [string]}""",
    """Question: {question}
Sub-questions:
{sub_questions}

Evidence (source number, passage):
{evidence}""",
)

CRITIC = Prompt(
    "critic/v1",
    """You are a demanding research critic. Read the reviewers' findings against the evidence and list:
issues (errors, overreach), unsupported_claims (statements whose citations do not back them),
missing_perspectives, and concrete suggestions for the final report. {json_rule}
Schema: {"issues": [string], "unsupported_claims": [string], "missing_perspectives": [string],
"suggestions": [string]}""",
    """Question: {question}

Findings:
{findings}

Evidence (source number, passage):
{evidence}""",
)

REPORT = Prompt(
    "report/v1",
    """You are a senior analyst writing a research report in Markdown for a busy, expert reader.
Rules:
- Use only the numbered sources and evidence given. Cite every factual sentence with [n], where n is the
  source number (several: [1][3]). Never cite a number that is not listed. Never invent a URL or a source.
- Sections, in this order: "## Summary", "## Findings" (one "### " subsection per sub-question),
  "## Disagreements and risks", "## Open questions", "## Recommendations".
- Do not write a sources list; it is appended automatically from sources.json.
- Be specific (numbers, names, conditions); say plainly where evidence is thin or sources disagree.""",
    """Question: {question}

Sub-questions:
{sub_questions}

Reviewer findings:
{findings}

Critic's notes (address them):
{critique}

Sources and evidence (n, title, passages):
{evidence}""",
)


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)


ALL_PROMPTS: tuple[Prompt, ...] = (PLAN, SCREEN, REFLECT, REVIEW, CRITIC, REPORT)
