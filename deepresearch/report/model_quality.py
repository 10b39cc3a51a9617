"""What the model did in a run, told plainly: answers received, answers unusable, steps that fell back.

Read from the graph state's ``model_answers`` (one entry per LLM step, written by the nodes) and put into
the report header and research-state.json, so a report never passes a fallback off as the model's work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ModelQuality:
    steps: int = 0
    answers: int = 0
    unusable: int = 0
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    """[{step, stage, reason}] in the order the steps ran."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "answers": self.answers,
            "unusable": self.unusable,
            "fallbacks": self.fallbacks,
        }

    @property
    def report_fell_back(self) -> bool:
        return any(item["step"] == "report" for item in self.fallbacks)


def summarize(model_answers: dict[str, Any] | None) -> ModelQuality:
    entries = model_answers or {}
    return ModelQuality(
        steps=len(entries),
        answers=sum(int(e.get("answers", 0)) for e in entries.values()),
        unusable=sum(int(e.get("unusable", 0)) for e in entries.values()),
        fallbacks=[
            {"step": step, "stage": str(e.get("stage", "")), "reason": str(e["fallback"])}
            for step, e in entries.items()
            if e.get("fallback")
        ],
    )


def engine_label(quality: ModelQuality) -> str:
    """The header's engine line for an llm run."""
    if quality.report_fell_back:
        return (
            "Engine: **llm**, but the report text is **extractive** — the model's report was unusable, "
            "so it was composed from quoted, cited sentences; every citation was checked against its source."
        )
    return (
        "Engine: **llm** — written by a language model from the fetched sources; every citation was "
        "checked against its source."
    )


def header_lines(quality: ModelQuality) -> list[str]:
    """Blockquote lines for the report header (an llm run only)."""
    line = f"> Model answers: {quality.answers} in {quality.steps} step(s), {quality.unusable} unusable; "
    if not quality.fallbacks:
        return [">", line + "no step fell back to an extractive method."]
    steps = ", ".join(item["step"] for item in quality.fallbacks)
    return [
        ">",
        line + f"{len(quality.fallbacks)} step(s) used their extractive method instead: {steps} "
        "(reasons in research-state.json).",
    ]
