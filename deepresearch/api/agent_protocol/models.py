"""The Agent Protocol's bodies and answers, as LangGraph's SDKs send and read them (langgraph_sdk.schema):
assistants, threads, their states, runs. Fields the SDKs send that this server does not act on are
accepted (and listed in docs/agent-protocol.md); the ones whose meaning it could not honour are refused
with a 422 by the routes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

RunStatus = Literal["pending", "running", "error", "success", "timeout", "interrupted"]
ThreadStatus = Literal["idle", "busy", "interrupted", "error"]
MultitaskStrategy = Literal["reject", "interrupt", "rollback", "enqueue"]
StreamMode = Literal[
    "values",
    "messages",
    "messages-tuple",
    "updates",
    "events",
    "tasks",
    "checkpoints",
    "debug",
    "custom",
    "tools",
    "lifecycle",
]
Json = dict[str, Any]


class _Open(BaseModel):
    # the SDKs add fields over versions: a newer SDK's extra field must not break a call
    model_config = ConfigDict(extra="ignore")


# --- assistants ----------------------------------------------------------------------------------
class Assistant(BaseModel):
    assistant_id: str
    graph_id: str
    config: Json = Field(default_factory=dict)
    context: Json = Field(default_factory=dict)
    created_at: str
    updated_at: str
    metadata: Json = Field(default_factory=dict)
    version: int = 1
    name: str
    description: str | None = None


class AssistantSearch(_Open):
    metadata: Json | None = None
    graph_id: str | None = None
    name: str | None = None
    limit: int = Field(10, ge=1, le=1000, strict=True)
    offset: int = Field(0, ge=0, strict=True)


class GraphSchema(BaseModel):
    graph_id: str
    input_schema: Json | None = None
    output_schema: Json | None = None
    state_schema: Json | None = None
    config_schema: Json | None = None
    context_schema: Json | None = None


class GraphDrawing(BaseModel):
    """LangGraph's drawable graph (Graph.to_json): what Studio draws."""

    nodes: list[Json]
    edges: list[Json]


class ServerInfo(BaseModel):
    version: str
    langgraph_py_version: str | None = None
    flags: dict[str, bool] = Field(default_factory=dict)
    metadata: Json = Field(default_factory=dict)


# --- threads -------------------------------------------------------------------------------------
class Interrupt(BaseModel):
    value: Any
    id: str


class Thread(BaseModel):
    thread_id: str
    created_at: str
    updated_at: str
    metadata: Json
    status: ThreadStatus
    values: Json | None = None
    interrupts: dict[str, list[Interrupt]] = Field(default_factory=dict)


class ThreadCreate(_Open):
    thread_id: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")
    metadata: Json | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class ThreadPatch(_Open):
    metadata: Json | None = None


class ThreadSearch(_Open):
    metadata: Json | None = None
    ids: list[str] | None = Field(None, max_length=1000)
    status: ThreadStatus | None = None
    limit: int = Field(10, ge=1, le=1000, strict=True)
    offset: int = Field(0, ge=0, strict=True)
    sort_order: Literal["asc", "desc"] | None = None


class CheckpointRef(BaseModel):
    thread_id: str
    checkpoint_ns: str = ""
    checkpoint_id: str | None = None


class ThreadTask(BaseModel):
    id: str
    name: str
    error: str | None = None
    interrupts: list[Interrupt] = Field(default_factory=list)
    checkpoint: CheckpointRef | None = None
    state: Json | None = None
    result: Json | None = None


class ThreadState(BaseModel):
    values: Json
    next: list[str]
    checkpoint: CheckpointRef
    metadata: Json
    created_at: str | None
    parent_checkpoint: CheckpointRef | None = None
    tasks: list[ThreadTask] = Field(default_factory=list)
    interrupts: list[Interrupt] = Field(default_factory=list)


class HistoryRequest(_Open):
    limit: int = Field(10, ge=1, le=1000, strict=True)
    before: Json | str | None = None
    metadata: Json | None = None
    checkpoint: Json | None = None


class StateUpdate(_Open):
    """A fork: the research continues from `checkpoint_id` (or the latest) with these values patched in."""

    values: Json | None = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: Json | None = None


class StateUpdated(BaseModel):
    checkpoint: CheckpointRef


# --- runs ----------------------------------------------------------------------------------------
class Run(BaseModel):
    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str
    updated_at: str
    status: RunStatus
    metadata: Json
    multitask_strategy: MultitaskStrategy
    kwargs: Json = Field(default_factory=dict)


class AgentRunCreate(_Open):
    assistant_id: str = Field(min_length=1, max_length=200)
    input: Json | None = None
    command: Json | None = None
    metadata: Json | None = None
    config: Json | None = None
    context: Json | None = None
    stream_mode: StreamMode | list[StreamMode] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    checkpoint_id: str | None = Field(None, max_length=128)
    checkpoint: Json | None = None
    multitask_strategy: MultitaskStrategy = "reject"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] | None = None
    on_completion: Literal["delete", "keep"] | None = None
    interrupt_before: str | list[str] | None = None
    interrupt_after: str | list[str] | None = None
    webhook: str | None = None
    after_seconds: float | None = None

    def modes(self) -> list[str]:
        return [self.stream_mode] if isinstance(self.stream_mode, str) else list(self.stream_mode)


class ResearchInput(BaseModel):
    """A run's `input`: the question and the options of POST /api/runs (`null` continues the thread). Chat
    clients (agent-chat-ui) send `messages` instead: the last human message is the question."""

    model_config = ConfigDict(extra="forbid")

    question: str | None = Field(None, min_length=1, description="The question (a new thread's first run).")
    messages: list[Json] | None = Field(None, max_length=100, description="Chat clients: the question.")
    options: Json | None = Field(None, description="Per-run options, as in POST /api/runs.")

    @model_validator(mode="after")
    def _a_question(self) -> ResearchInput:
        if self.question is None:
            human = [
                m
                for m in self.messages or []
                if m.get("type") in ("human", "user") or m.get("role") == "user"
            ]
            content = human[-1].get("content") if human else None
            if isinstance(content, list):  # content blocks: their text
                content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            if not isinstance(content, str) or not content.strip():
                raise ValueError("the input needs a question (or a human message holding it)")
            self.question = content
        return self


# --- the protocol's bare lists, numbers and maps, as named models (every route has its model) ------------
class AssistantList(RootModel[list[Assistant]]):
    pass


class Count(RootModel[int]):
    pass


class Subgraphs(RootModel[dict[str, GraphSchema]]):
    pass


class ThreadList(RootModel[list[Thread]]):
    pass


class ThreadStateList(RootModel[list[ThreadState]]):
    pass


class RunList(RootModel[list[Run]]):
    pass


class StateValues(RootModel[dict[str, Any]]):
    """The thread's state values once the run ended (`__interrupt__` while it waits for a person,
    `__error__` when it failed)."""
