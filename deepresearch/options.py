"""A run's options: every bound and default is written here once.

Settings (the server's defaults, config.py), the HTTP input models, the CLI and the workbench (via
/research/config.json) all derive from these types. Pure types: nothing here reads the environment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    model_validator,
)

ReviewerName = Literal["fact_reviewer", "implication_reviewer", "risk_reviewer"]
DEFAULT_REVIEWERS: tuple[str, ...] = ReviewerName.__args__  # type: ignore[attr-defined]
KNOWN_REVIEWERS = frozenset(DEFAULT_REVIEWERS)


def _known_reviewers(value: list[str]) -> list[str]:
    unknown = [name for name in value if name not in KNOWN_REVIEWERS]
    if unknown:
        raise ValueError(f"unknown reviewer(s) {unknown}; choose from {', '.join(DEFAULT_REVIEWERS)}")
    return list(dict.fromkeys(value))


MaxResearchLoops = Annotated[int, Field(ge=1, le=10, description="Depth: search/reflect rounds.")]
QueriesPerRound = Annotated[int, Field(ge=1, le=20, description="Breadth: queries per round.")]
ResultsPerQuery = Annotated[int, Field(ge=1, le=50, description="Search results kept per query.")]
SourcesToFetch = Annotated[
    int,
    Field(
        ge=1, le=100, description="Sources fetched per round (documents of the corpus: up to twice as many)."
    ),
]
Reviewers = Annotated[
    list[ReviewerName],
    Field(min_length=1, max_length=len(DEFAULT_REVIEWERS), description="Reviewers of the analysis."),
    AfterValidator(_known_reviewers),
]


STORED: dict[str, bool] = {"stored": True}
"""Validation context for options read back from the database (see RunBudget)."""


class RunBudget(BaseModel):
    """Per-run limits, enforced before every new external call. None = unlimited. A run that reaches one
    stops at its latest checkpoint with the reason; resume it with a higher limit."""

    # strict: a JSON 0 is not `false`, 43.0 is not a count (what the schema says is what is accepted)
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    max_llm_tokens: int | None = Field(None, ge=1, description="LLM tokens for the whole run.")
    max_search_calls: int | None = Field(None, ge=1, description="Search calls.")
    max_fetches: int | None = Field(None, ge=1, description="Page fetches.")
    deadline_seconds: float | None = Field(None, gt=0, description="Wall-clock limit from the run's start.")

    @model_validator(mode="before")
    @classmethod
    def _stored_infinity_is_no_limit(cls, data: Any, info: ValidationInfo) -> Any:
        # Runs stored before input was checked for finiteness may hold Infinity (or NaN): read back, that
        # is what it always meant, no limit. New input with it is still refused.
        if info.context and info.context.get("stored") and isinstance(data, dict):
            return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in data.items()}
        return data


CORPUS_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
CorpusName = Annotated[str, Field(pattern=CORPUS_NAME_PATTERN)]


class ResearchOptions(BaseModel):
    """Per-run shape of the research. Stored in the graph state, so a resume keeps the same shape."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_research_loops: MaxResearchLoops = 2
    queries_per_round: QueriesPerRound = 4
    results_per_query: ResultsPerQuery = 5
    sources_to_fetch: SourcesToFetch = 8
    reviewers: Reviewers = Field(default_factory=lambda: list(DEFAULT_REVIEWERS))
    requires_critic_review: bool = Field(True, description="Run the critic before the report.")
    corpus: CorpusName | None = Field(
        None,
        description="A document collection this server offers (GET /research/config.json lists them).",
    )
    corpus_dir: str | None = Field(
        None, description="A folder of documents on the server: from the CLI only (API clients use corpus)."
    )
    corpus_only: bool = Field(False, description="Search only the corpus, never the web.")
    review_plan: bool = Field(
        False, description="Stop after planning until a person approves, edits or rejects the plan."
    )
    webhook_url: str | None = Field(
        None,
        max_length=2048,
        description="Also call this URL (POST, signed) when the run starts waiting, completes or fails.",
    )
    budget: RunBudget = Field(default_factory=RunBudget)

    @model_validator(mode="after")
    def _corpus_only_needs_corpus(self) -> ResearchOptions:
        if self.corpus_only and not (self.corpus_dir or self.corpus):
            raise ValueError("corpus_only needs a document collection (corpus; CLI: --corpus DIR)")
        return self


OPTION_DEFAULTS = ResearchOptions()

SHAPE_OPTIONS: tuple[str, ...] = (
    "max_research_loops",
    "queries_per_round",
    "results_per_query",
    "sources_to_fetch",
    "reviewers",
    "requires_critic_review",
)
"""The options whose server default is a setting (DEEPRESEARCH_<NAME>)."""


def _patch_model() -> type[BaseModel]:
    """ResearchOptions with every field optional (omitted = keep the base value), same bounds."""
    fields: dict[str, Any] = {}
    for name, info in ResearchOptions.model_fields.items():
        annotation: Any = info.annotation
        if name == "budget":
            # a budget patch is merged limit by limit; a null limit removes that limit
            fields[name] = (RunBudget | None, Field(None, description=info.description))
            continue
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]  # type: ignore[valid-type]
        fields[name] = (annotation | None, Field(None, description=info.description))
    return create_model(
        "OptionsPatch",
        __config__=ConfigDict(extra="forbid", allow_inf_nan=False, strict=True),
        __doc__="Per-run options; anything omitted (or null) keeps the base value. Bounds as in "
        "ResearchOptions.",
        **fields,
    )


OptionsPatch = _patch_model()


def merge_options(base: Mapping[str, Any], patch: BaseModel | Mapping[str, Any] | None) -> ResearchOptions:
    """`patch` over `base` (a run's stored options or the server's defaults), validated.

    Options left out or null keep the base value; a budget is merged limit by limit, and a limit set to
    null is removed. Raises ValidationError naming the bad field."""
    if patch is None:
        return ResearchOptions.model_validate(dict(base), context=STORED)
    checked = patch if isinstance(patch, OptionsPatch) else OptionsPatch.model_validate(dict(patch))
    values = {**base, **checked.model_dump(exclude_none=True, exclude={"budget"})}
    budget = getattr(checked, "budget", None)
    if budget is not None:
        values["budget"] = {**(base.get("budget") or {}), **budget.model_dump(exclude_unset=True)}
    # the patch is checked strictly above; what is left unchecked comes from the (stored) base
    return ResearchOptions.model_validate(values, context=STORED)


def option_limits() -> dict[str, dict[str, float]]:
    """The numeric bounds of every option (JSON Schema keywords), for clients such as the workbench."""
    limits: dict[str, dict[str, float]] = {}
    keywords = ("minimum", "maximum", "exclusiveMinimum", "minItems", "maxItems")
    for model in (ResearchOptions, RunBudget):
        for name, prop in model.model_json_schema()["properties"].items():
            variants = [prop, *prop.get("anyOf", [])]
            found = {k: v for variant in variants for k, v in variant.items() if k in keywords}
            if found:
                limits[name] = found
    return limits
