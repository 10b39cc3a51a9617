"""Structured output, negotiated with the server: what to send so the model answers in the schema.

Servers differ, and each family (deepresearch.llm.family) has its own grammar-constrained form:

- OpenAI and LM Studio: ``response_format`` of type ``json_schema`` (strict);
- vLLM: ``json_schema`` too, else its own ``guided_json`` body field (older releases);
- llama.cpp (llama-server and llama-cpp-python's server): ``json_object`` with a ``schema``, turned into a
  grammar (llama-cpp-python refuses ``json_schema`` with an HTTP 500, "Input should be 'text' or
  'json_object'");
- Ollama: ``json_schema``, which its OpenAI layer hands to its native ``format`` (a top-level ``format`` is
  ignored there);
- older or unknown servers: ``json_object`` (JSON, shape free) or nothing.

The client starts at the first mode of its server family's ladder and steps down only when the server
refuses the parameter it was sent (a capability, not a count of errors), once per (endpoint, model); the
mode that worked is remembered in the database (table ``llm_capabilities``), with the family and why, so
later runs ask the right way at once. Whatever the mode, the answer is still parsed loosely and validated:
constrained decoding guarantees shape, never meaning.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel

OutputMode = Literal["json_schema", "guided_json", "json_object_schema", "json_object", "prompt"]
LADDER: tuple[OutputMode, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
"""The ladder of a server whose family is unknown."""
_EVERY: tuple[OutputMode, ...] = ("json_schema", "guided_json", "json_object_schema", "json_object", "prompt")
LADDERS: dict[str, tuple[OutputMode, ...]] = {
    "openai": ("json_schema", "json_object", "prompt"),
    "vllm": ("json_schema", "guided_json", "json_object", "prompt"),
    "llama.cpp": ("json_object_schema", "json_object", "prompt"),
    "ollama": ("json_schema", "json_object", "prompt"),
    "lmstudio": ("json_schema", "prompt"),  # LM Studio refuses json_object
    "unknown": LADDER,
}
DESCRIPTIONS: dict[str, str] = {
    "json_schema": "response_format json_schema (strict): constrained by the schema",
    "guided_json": "guided_json (vLLM): constrained by the schema",
    "json_object_schema": "response_format json_object with a schema (llama.cpp server): constrained",
    "json_object": "response_format json_object: JSON, shape not enforced",
    "prompt": "prompt only: the schema is in the prompt; answers are repaired and validated",
}
# JSON-schema keywords OpenAI's strict mode refuses; the client validates them itself after decoding.
_STRICT_UNSUPPORTED = frozenset(
    {"default", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern"}
)
_FORMAT_WORDS = (
    "response_format",
    "json_schema",
    "schema",
    "json_object",
    "grammar",
    "format",
    "guided_json",
)
# how a server says a value is not one it takes (pydantic, FastAPI, Go and C++ servers' wordings)
_REFUSAL_WORDS = ("input should be", "validation", "not supported", "unsupported", "invalid", "must be")


def request_fields(mode: OutputMode, schema: type[BaseModel]) -> dict[str, Any]:
    """The body fields that ask for ``schema`` in ``mode`` (empty: ask in the prompt only)."""
    if mode == "guided_json":
        return {"guided_json": copy.deepcopy(_json_schema(schema))}
    fmt = response_format(mode, schema)
    return {} if fmt is None else {"response_format": fmt}


def response_format(mode: OutputMode, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The ``response_format`` to send in ``mode`` (None: send none)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": strict_schema(schema), "strict": True},
        }
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": copy.deepcopy(_json_schema(schema))}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema in the form strict mode accepts: every property required, no extra properties, none of
    the keywords it refuses."""
    return copy.deepcopy(_strict_cached(schema))


# Building a JSON schema walks the model's core schema (~1 ms per call, on the event loop, for every LLM
# request); the schemas are fixed classes, so each is built once. Callers get copies: a body may be mutated.
@functools.cache
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


@functools.cache
def _strict_cached(schema: type[BaseModel]) -> dict[str, Any]:
    return _strict(_json_schema(schema))  # type: ignore[no-any-return]


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _strict(value) for key, value in node.items() if key not in _STRICT_UNSUPPORTED}
    if isinstance(out.get("properties"), dict):
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def rejects_format(detail: str, status: int = 400) -> bool:
    """Does an error body say the structured-output parameter is what the server refused? A 400/422
    that names it does; a 500 must also read like a validation error (llama-cpp-python's server answers
    an unknown response_format type so), or a crash that happens to mention a schema would step down."""
    lowered = detail.lower()
    names_it = any(word in lowered for word in _FORMAT_WORDS)
    if status in (400, 422):
        return names_it
    return status == 500 and names_it and any(word in lowered for word in _REFUSAL_WORDS)


def ladder_of(family: str) -> tuple[OutputMode, ...]:
    return LADDERS.get(family, LADDER)


def step_down(mode: OutputMode, family: str = "unknown") -> OutputMode | None:
    """The next mode of the family's ladder (a remembered mode not on it: the rest of the full ladder)."""
    ladder = ladder_of(family)
    if mode not in ladder:
        ladder = _EVERY
    index = ladder.index(mode)
    return ladder[index + 1] if index + 1 < len(ladder) else None


def is_mode(value: str) -> TypeGuard[OutputMode]:
    return value in DESCRIPTIONS
