"""What the OpenAPI document says beyond the routes: the SSE event models (the events route refers to
RunEvent) and the JSON body of every error response."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import TypeAdapter

from deepresearch.api.errors import DESCRIPTIONS
from deepresearch.service.contracts import EVENT_TYPES, RunEvent


def document_api(app: FastAPI) -> None:
    """Put the event models into the OpenAPI document's components (the SSE route refers to RunEvent),
    and give every error response its JSON body."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            events = TypeAdapter(RunEvent).json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(events.pop("$defs", {}))
            components["RunEvent"] = events
            # one SSE message (OpenAPI 3.1: the per-message schema; `itemSchema` from 3.2 on)
            components["SseMessage"] = {
                "type": "object",
                "required": ["event", "id", "data"],
                "properties": {
                    "event": {"type": "string", "enum": list(EVENT_TYPES)},
                    "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The event's seq."},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": "#/components/schemas/RunEvent"},
                    },
                },
            }
            # error bodies are JSON whatever the route's own media type (report: text/markdown)
            error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorPublic"}}}
            optional_auth = not app.state.access.token_required
            for operations in schema["paths"].values():
                for operation in operations.values():
                    _document_operation(operation, optional_auth)
                    for code, response in operation["responses"].items():
                        if code[0] in "45":
                            response["content"] = error_body
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _document_operation(operation: dict[str, Any], optional_auth: bool) -> None:
    """What every operation of a kind answers, whatever its route declares: a body that cannot be parsed
    (400: not JSON, not UTF-8) or is too large (413, refused before it is read) and invalid input (422);
    and, on a server that requires no token (loopback), that a token is optional - the empty security
    requirement `{}` says so in OpenAPI (a token that is given is still checked: 401 if wrong)."""
    if "requestBody" in operation:
        for code in (400, 413, 422):
            operation["responses"].setdefault(str(code), {"description": DESCRIPTIONS[code]})
    if optional_auth and operation.get("security") and {} not in operation["security"]:
        operation["security"].append({})
