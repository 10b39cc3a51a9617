"""Turning what a language model wrote into JSON: strip reasoning, find the JSON, repair it.

Models (local ones especially) wrap JSON in prose, markdown fences and ``<think>`` blocks, use Python
literals, leave trailing commas, or are cut off mid-object. :func:`parse_json_loosely` undoes that in
increasing order of invasiveness, so a well-formed answer is never "repaired" into something else.
"""

from __future__ import annotations

import ast
import json
import re
from contextlib import suppress
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
# An opening fence with an optional language tag; the closing fence may be missing (truncated output).
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_PY_LITERAL_WORD = re.compile(r"\b(True|False|None)\b")
# ast.literal_eval is safe (no code runs) but recursive; do not hand it megabytes.
_LITERAL_EVAL_MAX_CHARS = 200_000


def strip_think(text: str | None) -> str:
    """Remove reasoning a model put into its visible answer.

    Handles complete ``<think>...</think>`` blocks, a closing tag without an opener (chat templates that
    put ``<think>`` in the prompt, so the answer starts mid-thought) and an opener that is never closed
    (output cut off while still thinking: everything after it is reasoning, not answer).
    """
    if not text:
        return ""
    out = _THINK_BLOCK.sub("", text)
    close = out.lower().rfind(_THINK_CLOSE)
    if close != -1:
        out = out[close + len(_THINK_CLOSE) :]
    opened = out.lower().find(_THINK_OPEN)
    if opened != -1:
        out = out[:opened]
    return out.strip()


def parse_json_loosely(text: str) -> Any:
    """Parse the JSON in a model's answer, repairing what can be repaired.

    Order: strict parse of the whole answer; strict parse of the JSON found in code fences or as the
    outermost object/array inside prose; cheap textual fixes (trailing commas, True/None); Python
    literal syntax (single quotes); finally the ``json_repair`` package (truncated objects, unquoted
    keys, ...). Raises ``ValueError`` when nothing JSON-like can be recovered; prose without any
    ``{``/``[`` is never turned into an empty object.
    """
    cleaned = strip_think(text)
    if not cleaned:
        raise ValueError("the answer is empty (nothing left after removing <think> reasoning)")
    with suppress(ValueError):  # json.JSONDecodeError is a ValueError
        return json.loads(cleaned)

    candidates = _candidates(cleaned)
    if not candidates:
        raise ValueError(f"no JSON object or array found in the answer: {_excerpt(cleaned)!r}")
    for candidate in candidates:
        with suppress(ValueError):
            return json.loads(candidate)
    for candidate in candidates:
        with suppress(ValueError):
            return json.loads(_fix_outside_strings(candidate))
        literal = _python_literal(candidate)
        if literal is not None:
            return literal
    # json_repair always returns *something*; prefer the longest candidate so a bracketed aside in the
    # prose ("[see below]") does not win over the truncated object that follows it.
    for candidate in sorted(candidates, key=len, reverse=True):
        repaired = _json_repair(candidate)
        if repaired is not None:
            return repaired
    raise ValueError(f"could not recover JSON from the answer: {_excerpt(cleaned)!r}")


def describe_validation_error(exc: ValidationError, *, limit: int = 8) -> str:
    """A compact, model-readable summary of a pydantic error (no input values, no doc URLs)."""
    errors = exc.errors(include_url=False)
    parts = []
    for error in errors[:limit]:
        location = ".".join(str(part) for part in error["loc"]) or "(top level)"
        parts.append(f"{location}: {error['msg']}")
    if len(errors) > limit:
        parts.append(f"... and {len(errors) - limit} more")
    return f"{len(errors)} validation error(s) for {exc.title}: " + "; ".join(parts)


def validate_loosely(text: str, schema: type[T], context: object = None) -> T:
    """Parse ``text`` with :func:`parse_json_loosely` and validate it (``context``: the validation context
    of the schema's checks by meaning); ``ValueError`` with a readable message (never a raw pydantic
    error) when either step fails."""
    value = parse_json_loosely(text)
    # Small models often answer a one-field schema ({"queries": [...]}) with just the list.
    fields = list(schema.model_fields)
    if isinstance(value, list) and len(fields) == 1:
        value = {fields[0]: value}
    try:
        return schema.model_validate(value, context=context)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None


def reask_prompt(schema: type[BaseModel], problem: str) -> str:
    """The follow-up user message after an unusable answer: what was wrong, and the exact schema."""
    return (
        f"Your previous answer could not be used (JSON parsing or validation failed): {problem}\n\n"
        f"Reply again with ONLY the JSON for {schema.__name__}: one JSON value matching this JSON schema, "
        "with no prose, no markdown code fences and no comments.\n\n"
        f"JSON schema:\n{json.dumps(schema.model_json_schema(), ensure_ascii=False)}"
    )


def reask_text_prompt(name: str, problem: str) -> str:
    """The follow-up user message after an unusable free-text answer (the report)."""
    return (
        f"Your previous answer could not be used as the {name}: {problem}\n\n"
        "Write it again, complete, following every rule of the first message."
    )


def _candidates(text: str) -> list[str]:
    """JSON-looking spans: fenced blocks first (the model marked them), then the outermost object and
    array in the text, in order of appearance. Deduplicated."""
    found: list[str] = []
    for match in _FENCE.finditer(text):
        body = match.group(1).strip()
        found.extend(_outermost_spans(body))
    found.extend(_outermost_spans(text))
    return list(dict.fromkeys(span for span in found if span))


def _outermost_spans(text: str) -> list[str]:
    """The span of the first object and of the first array, unless one lies inside the other (a list
    inside a truncated object must not be mistaken for the answer)."""
    spans: list[str] = []
    covered_until = -1
    for start in sorted(pos for pos in (text.find("{"), text.find("[")) if pos != -1):
        if start < covered_until:
            continue
        span = _balanced_span(text, start)
        spans.append(span)
        covered_until = start + len(span)
    return spans


def _balanced_span(text: str, start: int) -> str:
    """From an opening bracket to its matching close, skipping brackets inside strings. Without a
    match (truncated output) the span runs to the end of the text, for json_repair to close."""
    depth = 0
    quote: str | None = None
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return text[start:].rstrip()


def _fix_outside_strings(candidate: str) -> str:
    """Drop trailing commas and translate Python literals, leaving double-quoted strings untouched."""
    pieces: list[str] = []
    segment_start = 0
    index = 0
    while index < len(candidate):
        if candidate[index] != '"':
            index += 1
            continue
        pieces.append(_fix_segment(candidate[segment_start:index]))
        end = index + 1
        while end < len(candidate) and candidate[end] != '"':
            end += 2 if candidate[end] == "\\" else 1
        pieces.append(candidate[index : end + 1])
        index = segment_start = end + 1
    pieces.append(_fix_segment(candidate[segment_start:]))
    return "".join(pieces)


def _fix_segment(segment: str) -> str:
    segment = _TRAILING_COMMA.sub(r"\1", segment)
    return _PY_LITERAL_WORD.sub(lambda m: _PY_LITERALS[m.group(1)], segment)


def _python_literal(candidate: str) -> dict[str, Any] | list[Any] | None:
    """Single-quoted / True / None answers are valid Python literals; ast.literal_eval runs no code."""
    if len(candidate) > _LITERAL_EVAL_MAX_CHARS:
        return None
    try:
        value = ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict | list):
        return None
    try:
        # Round-trip proves the value is plain JSON (no tuples-as-keys, sets, bytes, complex numbers).
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return None


def _json_repair(candidate: str) -> dict[str, Any] | list[Any] | None:
    try:
        value = json_repair.loads(candidate)
    except (ValueError, RecursionError):
        return None
    expected: type = dict if candidate.startswith("{") else list
    if not isinstance(value, expected):
        # e.g. "{I cannot help}" comes back as a list of strings: not a repair, a guess.
        return None
    if not value and re.sub(r"\s", "", candidate) not in ("{}", "[]"):
        # A truncated "{" or bracketed prose repaired to {} would validate against all-default schemas.
        return None
    return value


def _excerpt(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


__all__ = [
    "describe_validation_error",
    "parse_json_loosely",
    "reask_prompt",
    "reask_text_prompt",
    "strip_think",
    "validate_loosely",
]
