"""What the LLM client hands back: responses, usage, and the errors it raises (see llm_client.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class LLMUsage:
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cost_usd + other.cost_usd,
        )


ZERO_USAGE = LLMUsage(0, 0, 0, 0.0)


@dataclass(frozen=True, slots=True)
class LLMResponse:
    text: str
    model: str
    usage: LLMUsage
    attempts: int
    finish_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "model": self.model,
            "usage": self.usage.to_dict(),
            "attempts": self.attempts,
            "finish_reason": self.finish_reason,
        }


@dataclass
class StructuredResult(Generic[T]):
    value: T
    responses: list[LLMResponse] = field(default_factory=list)  # first answer (+ the re-ask, if any)
    problems: list[str] = field(default_factory=list)
    """Why earlier answers were unusable (one entry per unusable answer; empty: the first one was fine)."""

    @property
    def usage(self) -> LLMUsage:
        return sum((r.usage for r in self.responses), ZERO_USAGE)


class LLMError(Exception):
    """A chat completion could not be obtained; the message says where, why and what to do."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        endpoint: str = "",
        model: str = "",
        attempts: int = 0,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.model = model
        self.attempts = attempts

    @property
    def request_rejected(self) -> bool:
        """The server refused this particular request (too long for the context window, a parameter it
        does not take), not the configuration: another request - or another method - may well work."""
        return self.status in (400, 413, 422)


class StructuredOutputError(LLMError):
    """The model's answer could not be turned into the requested schema, even after one re-ask."""

    def __init__(
        self,
        message: str,
        *,
        schema_name: str,
        raw_excerpt: str,
        responses: list[LLMResponse] | None = None,
        problems: list[str] | None = None,
        endpoint: str = "",
        model: str = "",
    ) -> None:
        super().__init__(message, endpoint=endpoint, model=model, attempts=len(responses or []))
        self.schema_name = schema_name
        self.raw_excerpt = raw_excerpt
        # Kept so callers can still account the tokens the failed answers cost.
        self.responses = list(responses or [])
        self.problems = list(problems or [])

    @property
    def request_rejected(self) -> bool:
        return False
