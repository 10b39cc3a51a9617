"""Pydantic schemas of the structured LLM outputs (validated; repaired and re-asked once on failure)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator


def _clean_list(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in values if v and v.strip()))


class ResearchPlan(BaseModel):
    sub_questions: list[str] = Field(min_length=1, max_length=8)
    queries: list[str] = Field(min_length=1, max_length=20)
    rationale: str = ""

    _clean = field_validator("sub_questions", "queries")(_clean_list)


class ScreenedPassage(BaseModel):
    passage_id: str
    relevance: float = Field(ge=0, le=1)
    reason: str = ""


class ScreeningResult(BaseModel):
    relevant: list[ScreenedPassage] = Field(default_factory=list)


class Reflection(BaseModel):
    sufficient: bool
    knowledge_gaps: list[str] = Field(default_factory=list)
    follow_up_queries: list[str] = Field(default_factory=list)

    _clean = field_validator("knowledge_gaps", "follow_up_queries")(_clean_list)


class Finding(BaseModel):
    sub_question: str = ""
    statement: str = Field(min_length=1)
    citations: list[int] = Field(default_factory=list)
    confidence: Literal["high", "medium", "low"] = "medium"


class ReviewerFindings(BaseModel):
    findings: list[Finding] = Field(default_factory=list)
    disagreements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)


class Critique(BaseModel):
    issues: list[str] = Field(default_factory=list)
    unsupported_claims: list[str] = Field(default_factory=list)
    missing_perspectives: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
