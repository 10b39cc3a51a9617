"""Pydantic schemas of the structured LLM outputs, validated by shape AND by meaning.

Shape errors (a missing field, a string for a list) and meaning errors (a plan with no usable query, a
screening answer naming passages that were never shown, a finding citing a source number that is not
listed) are both validation errors: the client repairs what it can, re-asks once with the reasons, and the
stage then falls back to its extractive method (see tools.py). The checks by meaning run only when the
validation context is an :class:`AnswerContext` (a model's answer): values read back from a receipt or
built by an extractive method are checked by shape alone. The checks of single items (placeholders,
punctuation, echoes of the schema, duplicates, off-topic items) are in deepresearch.graph.meaning: an item
that fails is dropped, and an answer with too little left is unusable, with the dropped items as reasons.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from deepresearch.graph import meaning
from deepresearch.graph.meaning import ItemRule

logger = logging.getLogger(__name__)

_CITATION = re.compile(r"\[(\d{1,3})\]")
# the sections a report must not leave empty, and how many words make them not empty
_SECTIONS_WITH_TEXT = ("## Summary", "## Findings")
_MIN_SECTION_WORDS = 5
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
    topic: str | None = None
    """What the answer must be about (the question; for reflection, with the sub-questions): an item with
    no content word in common with it is off topic. None: not checked."""
    dropped: dict[str, list[str]] = field(default_factory=dict, compare=False, hash=False)
    """Filled by the checks: per field, the items of the latest answer that were dropped, and why."""


def _context(info: ValidationInfo) -> AnswerContext | None:
    return info.context if isinstance(info.context, AnswerContext) else None


class _Checked(BaseModel):
    """A schema whose string lists are checked item by item (rules per field, in ``ITEM_RULES``)."""

    ITEM_RULES: ClassVar[dict[str, ItemRule]] = {}

    @classmethod
    def _screen(cls, values: list[str], info: ValidationInfo) -> list[str]:
        context, name = _context(info), info.field_name or ""
        if context is None:
            return meaning.shape_only(values)
        topic = meaning.topic_words(context.topic) if context.topic else None
        kept, dropped = meaning.screen(values, cls.ITEM_RULES[name], meaning.schema_words(cls), topic)
        context.dropped[name] = dropped
        if dropped:
            logger.info("%s.%s: dropped %s", cls.__name__, name, "; ".join(dropped))
        return kept


def _no_usable(name: str, context: AnswerContext) -> str:
    dropped = context.dropped.get(name) or []
    why = f" (dropped: {'; '.join(dropped[:6])})" if dropped else ""
    return f"{name} has no usable item{why}"


class ResearchPlan(_Checked):
    sub_questions: list[str] = Field(min_length=1, max_length=8)
    queries: list[str] = Field(min_length=1, max_length=20)
    rationale: str = ""

    ITEM_RULES: ClassVar[dict[str, ItemRule]] = {
        "sub_questions": ItemRule(min_words=2, on_topic=True),
        "queries": ItemRule(on_topic=True),
    }

    @field_validator("sub_questions", "queries")
    @classmethod
    def _items(cls, values: list[str], info: ValidationInfo) -> list[str]:
        return cls._screen(values, info)

    @model_validator(mode="after")
    def _usable(self, info: ValidationInfo) -> ResearchPlan:
        context = _context(info)
        if context is None:
            return self
        problems = [
            _no_usable(name, context) for name in ("sub_questions", "queries") if not getattr(self, name)
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


class Reflection(_Checked):
    sufficient: bool
    knowledge_gaps: list[str] = Field(default_factory=list)
    follow_up_queries: list[str] = Field(default_factory=list)

    ITEM_RULES: ClassVar[dict[str, ItemRule]] = {
        "knowledge_gaps": ItemRule(min_words=2, on_topic=True),
        "follow_up_queries": ItemRule(on_topic=True),
    }

    @field_validator("knowledge_gaps", "follow_up_queries")
    @classmethod
    def _items(cls, values: list[str], info: ValidationInfo) -> list[str]:
        return cls._screen(values, info)

    @model_validator(mode="after")
    def _gaps_have_queries(self, info: ValidationInfo) -> Reflection:
        context = _context(info)
        if context is not None and not self.sufficient and not self.follow_up_queries:
            if context.dropped.get("follow_up_queries"):
                raise ValueError(_no_usable("follow_up_queries", context) + " but sufficient is false")
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
        # by shape only; placeholders and echoes drop the finding (ReviewerFindings), not the answer
        value = " ".join(value.split())
        if not value:
            raise ValueError("statement is empty")
        return value


_STATEMENT_RULE = ItemRule(min_words=3, statement=True)


class ReviewerFindings(_Checked):
    findings: list[Finding] = Field(default_factory=list)
    disagreements: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)

    ITEM_RULES: ClassVar[dict[str, ItemRule]] = {
        "disagreements": ItemRule(min_words=2),
        "open_questions": ItemRule(min_words=2),
    }

    @field_validator("disagreements", "open_questions")
    @classmethod
    def _items(cls, values: list[str], info: ValidationInfo) -> list[str]:
        return cls._screen(values, info)

    @model_validator(mode="after")
    def _cited(self, info: ValidationInfo) -> ReviewerFindings:
        context = _context(info)
        allowed = (context or AnswerContext()).citations
        if context is None or allowed is None:
            return self
        self._drop_findings(context, allowed)
        if self.findings:
            return self
        if context.dropped.get("findings"):
            raise ValueError(
                _no_usable("findings", context) + f"; cite only source numbers {sorted(allowed)}"
            )
        raise ValueError("findings is empty: state at least one finding from the evidence")

    def _drop_findings(self, context: AnswerContext, allowed: frozenset[int]) -> None:
        """Findings that say nothing (see meaning.problem: a placeholder, the schema's words, under three
        words, a question or a bare heading), repeat one, or rest on no listed source (no citation, or only
        numbers not in the evidence). A finding citing a listed and an unlisted source stays: the unlisted
        number is removed afterwards."""
        echoes = meaning.schema_words(ReviewerFindings)
        kept, dropped, seen = [], [], set()
        for finding in self.findings:
            key = meaning.normalized(finding.statement)
            why = meaning.problem(finding.statement, _STATEMENT_RULE, echoes, None)
            if why is None and key in seen:
                why = "a duplicate"
            elif why is None and not finding.citations:
                why = "cites nothing"
            elif why is None and not set(finding.citations) & allowed:
                why = f"cites {finding.citations}, not in the evidence"
            if why is None:
                seen.add(key)
                kept.append(finding)
            else:
                dropped.append(f"statement {finding.statement[:60]!r} {why}")
        context.dropped["findings"] = dropped
        if dropped:
            logger.info("ReviewerFindings.findings: dropped %s", "; ".join(dropped))
        self.findings = kept


_CRITIQUE_LISTS = ("issues", "unsupported_claims", "missing_perspectives", "suggestions")


class Critique(_Checked):
    issues: list[str] = Field(default_factory=list)
    unsupported_claims: list[str] = Field(default_factory=list)
    missing_perspectives: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)

    ITEM_RULES: ClassVar[dict[str, ItemRule]] = dict.fromkeys(_CRITIQUE_LISTS, ItemRule(min_words=2))

    @field_validator(*_CRITIQUE_LISTS)
    @classmethod
    def _items(cls, values: list[str], info: ValidationInfo) -> list[str]:
        return cls._screen(values, info)

    @model_validator(mode="after")
    def _says_something(self, info: ValidationInfo) -> Critique:
        said = self.issues or self.unsupported_claims or self.missing_perspectives or self.suggestions
        context = _context(info)
        if context is not None and not said:
            dropped = [d for name in _CRITIQUE_LISTS for d in context.dropped.get(name, [])]
            why = f" (dropped: {'; '.join(dropped[:6])})" if dropped else ""
            raise ValueError(f"every list is empty{why}: name at least one issue or suggestion")
        return self


class ReportDraft(BaseModel):
    """The report the model wrote (Markdown), checked for the required sections and citations."""

    markdown: str

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> ReportDraft:
        text = self.markdown
        missing = [s for s in REPORT_SECTIONS if not re.search(rf"^{re.escape(s)}\s*$", text, re.MULTILINE)]
        problems = [f"missing the sections {missing}"] if missing else []
        if _context(info) is not None:
            empty = [
                s
                for s in _SECTIONS_WITH_TEXT
                if s not in missing and _words_under(text, s) < _MIN_SECTION_WORDS
            ]
            if empty:
                problems.append(f"the sections {empty} say nothing (write sentences from the evidence)")
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


def _words_under(markdown: str, heading: str) -> int:
    """Words of prose under a ``## `` heading (its ``### `` subsections included), citations aside."""
    match = re.search(rf"^{re.escape(heading)}\s*$(.*?)(?=^## |\Z)", markdown, re.MULTILINE | re.DOTALL)
    if match is None:
        return 0
    body = re.sub(r"^#+ .*$", " ", match.group(1), flags=re.MULTILINE)
    return len(meaning.words(_CITATION.sub(" ", body)))
