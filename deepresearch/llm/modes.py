"""Structured output, negotiated with the server: what to send so the model answers in the schema.

Servers differ. OpenAI, vLLM, recent Ollama and llama.cpp's C++ server take ``response_format`` of type
``json_schema`` (constrained decoding); llama-cpp-python's server takes ``json_object`` with a ``schema``;
older servers take only ``json_object``; some take nothing. The client starts at the most capable mode and
steps down the ladder when the server rejects the parameter, once per (endpoint, model); the mode that
worked is remembered in the database (table ``llm_capabilities``), so later runs ask the right way at once.
Whatever the mode, the answer is still parsed loosely and validated: constrained decoding guarantees shape,
never meaning.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel

OutputMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
LADDER: tuple[OutputMode, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
DESCRIPTIONS: dict[str, str] = {
    "json_schema": "response_format json_schema (strict): constrained by the schema",
    "json_object_schema": "response_format json_object with a schema (llama.cpp server): constrained",
    "json_object": "response_format json_object: JSON, shape not enforced",
    "prompt": "prompt only: the schema is in the prompt; answers are repaired and validated",
}
# JSON-schema keywords OpenAI's strict mode refuses; the client validates them itself after decoding.
_STRICT_UNSUPPORTED = frozenset(
    {"default", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern"}
)
_FORMAT_WORDS = ("response_format", "json_schema", "schema", "json_object", "grammar", "format")


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


def rejects_format(detail: str) -> bool:
    """Does a 400/422 body say the structured-output parameter is what the server refused?"""
    lowered = detail.lower()
    return any(word in lowered for word in _FORMAT_WORDS)


def step_down(mode: OutputMode) -> OutputMode | None:
    index = LADDER.index(mode)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def is_mode(value: str) -> TypeGuard[OutputMode]:
    return value in LADDER
