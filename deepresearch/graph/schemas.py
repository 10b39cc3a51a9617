"""Pydantic schemas of the structured LLM outputs, validated by shape AND by meaning.

Shape errors (a missing field, a string for a list) and meaning errors (a plan with no usable query, a
screening answer naming passages that were never shown, a finding citing a source number that is not
listed) are both validation errors: the client repairs what it can, re-asks once with the reasons, and the
stage then falls back to its extractive method (see tools.py). The checks by meaning run only when the
validation context is an :class:`AnswerContext` (a model's answer): values read back from a receipt or
built by an extractive method are checked by shape alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

# What small models copy from the schema in the prompt instead of answering.
_PLACEHOLDERS = frozenset({"string", "str", "...", "…", "n/a", "none", "null", "query", "sub-question"})
_CITATION = re.compile(r"\[(\d{1,3})\]")
REPORT_SECTIONS: tuple[str, ...] = (
    "## Summary",
    "## Findings",
    "## Disagreements and risks",
    "## Open questions",
    "## Recommendations",
)


@dataclass(frozen=True, slots=True)
class AnswerContext:
    """What the model was shown, for the checks by meaning. None = not checked."""

    passage_ids: frozenset[str] | None = None
    citations: frozenset[int] | None = None
    """The source numbers the model may cite."""


def _context(info: ValidationInfo) -> AnswerContext | None:
    return info.context if isinstance(info.context, AnswerContext) else None


def _clean_list(values: list[str]) -> list[str]:
    """Strip, drop empty and placeholder items, drop duplicates (case-insensitively), keep the order."""
    seen: dict[str, str] = {}
    for value in values:
        text = " ".join((value or "").split())
        if text and text.lower() not in _PLACEHOLDERS:
            seen.setdefault(text.lower(), text)
    return list(seen.values())


class ResearchPlan(BaseModel):
    sub_questions: list[str] = Field(min_length=1, max_length=8)
    queries: list[str] = Field(min_length=1, max_length=20)
    rationale: str = ""

    _clean = field_validator("sub_questions", "queries")(_clean_list)

    @model_validator(mode="after")
    def _usable(self, info: ValidationInfo) -> ResearchPlan:
        if _context(info) is None:
            return self
        problems = [
            f"{name} has no usable item (empty strings, placeholders and duplicates do not count)"
            for name in ("sub_questions", "queries")
            if not getattr(self, name)
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class ScreenedPassage(BaseModel):
    passage_id: str
    relevance: float = Field(ge=0, le=1)
    reason: str = ""


class ScreeningResult(BaseModel):
    relevant: list[ScreenedPassage] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known_passages(self, info: ValidationInfo) -> ScreeningResult:
        shown = (_context(info) or AnswerContext()).passage_ids
        if shown is None:
            return self
        if not self.relevant:
            raise ValueError(
                "relevant is empty; the passages shown were pre-ranked as on topic: keep the best one"
            )
        unknown = sorted({p.passage_id for p in self.relevant} - shown)
        if unknown:
            raise ValueError(
                f"passage ids {unknown} were not among the passages shown; use only: {sorted(shown)}"
            )
        return self


class Reflection(BaseModel):
    sufficient: bool
    knowledge_gaps: list[str] = Field(default_factory=list)
    follow_up_queries: list[str] = Field(default_factory=list)

    _clean = field_validator("knowledge_gaps", "follow_up_queries")(_clean_list)

    @model_validator(mode="after")
    def _gaps_have_queries(self, info: ValidationInfo) -> Reflection:
        if _context(info) is not None and not self.sufficient and not self.follow_up_queries:
            raise ValueError("sufficient is false but follow_up_queries is empty: name the queries to run")
        return self


class Finding(BaseModel):
    sub_question: str = ""
    statement: str = Field(min_length=1)
    citations: list[int] = Field(default_factory=list)
    confidence: Literal["high", "medium", "low"] = "medium"

    @field_validator("statement")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value or value.lower() in _PLACEHOLDERS:
            raise ValueError("statement is empty or a placeholder")
        return value


class ReviewerFindings(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    disagreements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)

    _clean = field_validator("disagreements", "open_questions")(_clean_list)

    @model_validator(mode="after")
    def _cited(self, info: ValidationInfo) -> ReviewerFindings:
        allowed = (_context(info) or AnswerContext()).citations
        if allowed is None:
            return self
        if not self.findings:
            raise ValueError("findings is empty: state at least one finding from the evidence")
        problems = []
        for index, finding in enumerate(self.findings):
            wrong = [n for n in finding.citations if n not in allowed]
            if wrong:
                problems.append(f"findings.{index} cites {wrong}, not in the evidence")
            elif not finding.citations:
                problems.append(f"findings.{index} cites nothing")
        if problems:
            raise ValueError("; ".join(problems) + f"; cite only source numbers {sorted(allowed)}")
        return self


class Critique(BaseModel):
    issues: list[str] = Field(default_factory=list)
    unsupported_claims: list[str] = Field(default_factory=list)
    missing_perspectives: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)

    _clean = field_validator("issues", "unsupported_claims", "missing_perspectives", "suggestions")(
        _clean_list
    )

    @model_validator(mode="after")
    def _says_something(self, info: ValidationInfo) -> Critique:
        said = self.issues or self.unsupported_claims or self.missing_perspectives or self.suggestions
        if _context(info) is not None and not said:
            raise ValueError("every list is empty: name at least one issue or suggestion")
        return self


class ReportDraft(BaseModel):
    """The report the model wrote (Markdown), checked for the required sections and citations."""

    markdown: str

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> ReportDraft:
        text = self.markdown
        missing = [s for s in REPORT_SECTIONS if not re.search(rf"^{re.escape(s)}\s*$", text, re.MULTILINE)]
        problems = [f"missing the sections {missing}"] if missing else []
        allowed = (_context(info) or AnswerContext()).citations
        if allowed is not None:
            cited = [int(n) for n in _CITATION.findall(text)]
            inside = [n for n in cited if n in allowed]
            # A stray [n] is removed by the citation check; a report that mostly cites nothing real is not
            # a report of this evidence.
            if not inside:
                problems.append(f"no citation of a listed source (cite with [n], n in {sorted(allowed)})")
            elif len(cited) - len(inside) > len(inside):
                problems.append(f"most citations are not listed sources (cite only {sorted(allowed)})")
        if problems:
            raise ValueError("; ".join(problems))
        return self
