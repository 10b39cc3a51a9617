"""What the research tools return, and how each result is kept in its receipt (to_dict / from_dict)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deepresearch.web.fetch import FetchedPage


@dataclass(slots=True)
class FetchOutcome:
    url: str
    page: FetchedPage | None
    error: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """What the receipt keeps: the page without its text when the text is stored by hash."""
        page = self.page.to_dict(with_text=self.page.text_sha256 is None) if self.page else None
        return {"url": self.url, "page": page, "error": self.error, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FetchOutcome:
        page = FetchedPage.from_dict(data["page"]) if data.get("page") else None
        return cls(url=data["url"], page=page, error=data.get("error"), reason=data.get("reason"))


@dataclass(frozen=True, slots=True)
class StepFallback:
    """A step whose model answer stayed unusable and which used its extractive method instead."""

    step: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"step": self.step, "reason": self.reason}


@dataclass(slots=True)
class LLMCallResult:
    value: Any
    tokens: int
    cost_usd: float
    model: str
    answers: list[str] = field(default_factory=list)
    """What the model answered (capped), first answer and re-ask."""
    unusable: int = 0
    """How many of those answers could not be used."""
    fallback: StepFallback | None = None

    def to_dict(self, value: Any) -> dict[str, Any]:
        return {
            "value": value,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "model": self.model,
            "answers": self.answers,
            "unusable": self.unusable,
            "fallback": self.fallback.to_dict() if self.fallback else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], value: Any) -> LLMCallResult:
        fallback = data.get("fallback")
        return cls(
            value,
            data["tokens"],
            data["cost_usd"],
            data["model"],
            list(data.get("answers", [])),
            int(data.get("unusable", 0)),
            StepFallback(fallback["step"], fallback["reason"]) if fallback else None,
        )

    def event_fields(self) -> dict[str, Any]:
        """What the call's tool_result event says about the model's answers."""
        fields: dict[str, Any] = {"answers": len(self.answers), "unusable": self.unusable}
        if self.fallback is not None:
            fields["fallback"] = self.fallback.to_dict()
        return fields

    def summary(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "model": self.model, **self.event_fields()}


@dataclass(frozen=True, slots=True)
class WrittenFile:
    relative_path: str
    sha256: str
    size: int
    written: bool
    """False when an identical file was already there (idempotent re-write skipped)."""

    def to_dict(self) -> dict[str, object]:
        return {"path": self.relative_path, "sha256": self.sha256, "size": self.size, "written": self.written}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WrittenFile:
        """A recorded write, read back: nothing was written this time."""
        return cls(data["path"], data["sha256"], data["size"], written=False)
