"""The Agent Protocol's assistants: this server has one, the research graph (`deepresearch`, also its
assistant id), with its drawable graph, its schemas and its two subgraphs; and GET /info, which
agent-chat-ui and Studio ask first."""

from __future__ import annotations

from typing import Annotated, Any, get_type_hints

import langgraph.version
from fastapi import APIRouter, Depends, Query

from deepresearch.api.access import ServiceDep, request_principal
from deepresearch.api.agent_protocol.lifecycle import ASSISTANT_ID, GRAPH_ID, check_assistant
from deepresearch.api.agent_protocol.models import (
    Assistant,
    AssistantList,
    AssistantSearch,
    Count,
    GraphDrawing,
    GraphSchema,
    ResearchInput,
    ServerInfo,
    Subgraphs,
)
from deepresearch.api.errors import error_responses
from deepresearch.graph.state import ReportState
from deepresearch.options import OptionsPatch

CREATED = "2026-01-01T00:00:00+00:00"
"""The assistant is the graph's default configuration: it exists as long as the server does."""

assistants = APIRouter(
    prefix="/assistants",
    tags=["agent protocol"],
    dependencies=[Depends(request_principal)],
    responses=error_responses(401),
)
info = APIRouter(tags=["agent protocol"])
_NOT_FOUND = error_responses(404, 422)


def the_assistant() -> Assistant:
    return Assistant(
        assistant_id=ASSISTANT_ID,
        graph_id=GRAPH_ID,
        created_at=CREATED,
        updated_at=CREATED,
        name=GRAPH_ID,
        description="Deep research: plans, searches, fetches, screens, analyses and writes a cited report.",
        metadata={"created_by": "system"},
    )


def _matches(assistant: Assistant, search: AssistantSearch) -> bool:
    if search.graph_id and search.graph_id != assistant.graph_id:
        return False
    if search.name and search.name.lower() not in assistant.name.lower():
        return False
    return all(assistant.metadata.get(k) == v for k, v in (search.metadata or {}).items())


@assistants.post("/search", response_model=AssistantList, responses=error_responses(403, 422))
async def search_assistants(body: AssistantSearch) -> list[Assistant]:
    found = [a for a in [the_assistant()] if _matches(a, body)]
    return found[body.offset : body.offset + body.limit]


@assistants.post("/count", response_model=Count, responses=error_responses(403, 422))
async def count_assistants(body: AssistantSearch) -> int:
    return int(_matches(the_assistant(), body))


@assistants.get("/{assistant_id}", response_model=Assistant, responses=_NOT_FOUND)
async def get_assistant(assistant_id: str) -> Assistant:
    check_assistant(assistant_id)
    return the_assistant()


@assistants.get("/{assistant_id}/graph", response_model=GraphDrawing, responses=_NOT_FOUND)
async def get_graph(
    assistant_id: str, service: ServiceDep, xray: Annotated[bool | int, Query()] = False
) -> GraphDrawing:
    """The graph as LangGraph draws it: the stages, review_plan, reflection and finalize_report and their
    edges; with `xray` the search and analysis subgraphs' nodes too."""
    check_assistant(assistant_id)
    drawing = service.engine.drawing(xray)
    return GraphDrawing(nodes=list(drawing["nodes"]), edges=list(drawing["edges"]))


def _state_schema() -> dict[str, Any]:
    # the state's keys, each as LangGraph's state holds it (JSON objects and lists of them)
    keys = sorted(get_type_hints(ReportState, include_extras=False))
    return {"title": "ReportState", "type": "object", "properties": {key: {} for key in keys}}


def _schemas() -> GraphSchema:
    input_schema = ResearchInput.model_json_schema()
    input_schema["properties"]["options"] = OptionsPatch.model_json_schema()  # type: ignore[attr-defined]
    return GraphSchema(
        graph_id=GRAPH_ID,
        input_schema=input_schema,
        output_schema=_state_schema(),
        state_schema=_state_schema(),
        config_schema={"title": "Config", "type": "object", "properties": {}},
        context_schema=None,
    )


@assistants.get("/{assistant_id}/schemas", response_model=GraphSchema, responses=_NOT_FOUND)
async def get_schemas(assistant_id: str) -> GraphSchema:
    """Input: the question and the options of POST /api/runs; state and output: the research's state."""
    check_assistant(assistant_id)
    return _schemas()


@assistants.get("/{assistant_id}/subgraphs", response_model=Subgraphs, responses=_NOT_FOUND)
async def get_subgraphs(assistant_id: str, service: ServiceDep) -> dict[str, GraphSchema]:
    check_assistant(assistant_id)
    return {name: GraphSchema(graph_id=GRAPH_ID) for name in service.engine.subgraph_names()}


@assistants.get("/{assistant_id}/subgraphs/{namespace}", response_model=Subgraphs, responses=_NOT_FOUND)
async def get_subgraph(assistant_id: str, namespace: str, service: ServiceDep) -> dict[str, GraphSchema]:
    check_assistant(assistant_id)
    names = service.engine.subgraph_names(namespace)
    return {name: GraphSchema(graph_id=GRAPH_ID) for name in names}


@info.get("/info", response_model=ServerInfo)
async def server_info() -> ServerInfo:
    """What agent-chat-ui and Studio ask first. The flags say which optional parts this server has."""
    return ServerInfo(
        version="deepresearch",
        langgraph_py_version=langgraph.version.__version__,
        flags={"assistants": True, "crons": False, "langsmith": False, "store": False},
        metadata={"graph_id": GRAPH_ID, "assistant_id": ASSISTANT_ID},
    )
