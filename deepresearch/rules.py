"""The rules every front end shares, and the errors that say a request cannot be carried out: what a
question may be, which options a patch sets. (The run service applies them; HTTP and the CLI translate the
errors into a 4xx or an exit code.)"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

Patch = BaseModel | Mapping[str, Any]
"""Options to change: an OptionsPatch, or a mapping validated as one."""


class InvalidInput(ValueError):
    """The request cannot be carried out as given (HTTP 422, CLI exit 2); the message names the fix.

    `field` is the dotted name of the bad input (``question``, ``options.corpus_dir``) when there is one."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message


class RunConflict(Exception):
    """The run is in a state that does not allow this (HTTP 409)."""


class TooManyRequests(Exception):
    """A per-user limit was reached (HTTP 429 with Retry-After); the message names the limit's setting."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CheckpointNotFound(LookupError):
    """The checkpoint does not belong to this run (HTTP 404)."""


class ArtifactNotFound(LookupError):
    """No such artifact in the run's folder (HTTP 404)."""


# The rule for a question, as a regular expression that Python, JSON Schema validators and pydantic's
# engine all read the same way (so the OpenAPI document states it too): no control characters
# but tab and newlines, and at least one character that is neither a space nor invisible (zero-width,
# format and separator characters).
_CONTROL = r"\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F"
_INVISIBLE = r"\s\x00-\x1F\x7F-\x9F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202F\u205F-\u206F\u3000\uFEFF"
QUESTION_PATTERN = rf"^[^{_CONTROL}]*[^{_INVISIBLE}][^{_CONTROL}]*$"
_QUESTION = re.compile(QUESTION_PATTERN)
_CONTROLS = re.compile(rf"[{_CONTROL}]")


def question_problem(question: str, max_chars: int) -> str | None:
    """What is wrong with a question (already stripped), or None: the one rule for the CLI and HTTP."""
    if not question:
        return "the question is empty"
    if len(question) > max_chars:
        return f"at most {max_chars} characters (got {len(question)})"
    if any("\ud800" <= ch <= "\udfff" for ch in question):
        return "contains an unpaired surrogate (not valid Unicode text)"
    if not _QUESTION.match(question):
        return "contains control characters" if _CONTROLS.search(question) else "has no visible characters"
    return None


def check_question(question: str, max_chars: int) -> str:
    """The question, stripped; InvalidInput when it is empty, invisible, too long or not storable text."""
    question = question.strip()
    if problem := question_problem(question, max_chars):
        raise InvalidInput(problem, "question")
    return question


def patched(patch: Patch | None, name: str) -> bool:
    """The patch sets option `name` to a value (null or omitted keeps the base value)."""
    if patch is None:
        return False
    if isinstance(patch, BaseModel):
        return getattr(patch, name, None) is not None
    return patch.get(name) is not None


def download_stem(title: str) -> str:
    """A file name for a run's downloads, from its topic (its title or question): its first eight words,
    letters and digits only, joined by '-' (the report's downloads and the workbench's file links)."""
    words = re.findall(r"[A-Za-z0-9]+", title)[:8]
    return "-".join(words).lower()[:80] or "deepresearch-report"
