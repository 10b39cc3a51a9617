"""Typed contracts: what the run service returns and the HTTP runner sends, and every event of the log.

The service's read models are these pydantic models, so the CLI, the routes and the OpenAPI document all
share one definition. Events are documented here too (`EVENT_MODELS`): the SSE route lists them in its
OpenAPI entry, and tests validate every streamed event against them.
"""

from __future__ import annotations

from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from deepresearch.graph.plan_edit import PlanReview
from deepresearch.options import ResearchOptions

RunStatus = Literal[
    "queued", "running", "waiting_for_input", "cancelled", "interrupted", "failed", "completed"
]
StageStatus = Literal["pending", "running", "done", "failed"]
ReceiptStatus = Literal["started", "succeeded", "failed"]


class PublicModel(BaseModel):
    """A response model: a field the server does not declare is an error (extra="forbid")."""

    model_config = ConfigDict(extra="forbid")


# --- errors --------------------------------------------------------------------------------------
class FieldError(PublicModel):
    loc: list[str | int] = Field(description="Where: body / query / header / path, then the field.")
    msg: str
    type: str


class ErrorPublic(PublicModel):
    """Every 4xx and 5xx answer has this shape."""

    detail: str = Field(description="What is wrong and, where there is one, how to fix it.")
    errors: list[FieldError] | None = Field(None, description="Per field, for validation errors (422).")


# --- runs ----------------------------------------------------------------------------------------
class StageUsage(BaseModel):
    tokens: int = 0
    cost_usd: float = 0.0


class FallbackPublic(BaseModel):
    step: str = Field(description="The LLM step, e.g. `plan`, `screen: sub-question 2`, `report`.")
    reason: str = Field(description="Why the model's answer could not be used.")


class UsagePublic(BaseModel):
    model_config = ConfigDict(extra="ignore")

    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = Field(0, description="External calls made (not served from a receipt).")
    reused_calls: int = Field(0, description="Calls answered from a receipt instead of being made again.")
    tokens_saved: int = 0
    cost_saved_usd: float = 0.0
    by_stage: dict[str, StageUsage] = Field(default_factory=dict)
    model_answers: int = Field(0, description="Answers the model gave (re-asks included).")
    unusable_answers: int = Field(0, description="Answers unusable by shape or meaning.")
    fallbacks: list[FallbackPublic] = Field(
        default_factory=list, description="LLM steps that used their extractive method instead."
    )


class PendingInputPublic(PublicModel):
    """What a run `waiting_for_input` waits for; answer with POST /api/runs/{run_id}/input."""

    kind: Literal["plan_review"]
    plan: PlanReview
    since: str = Field(description="When the run began to wait.")
    waiting_seconds: float = Field(0.0, description="How long it has waited, when this was read.")


class ForkedFromPublic(PublicModel):
    run_id: str = Field(description="The run this one was forked from (left untouched).")
    checkpoint_id: str = Field(description="The checkpoint of that run it started from.")


class RunPublic(PublicModel):
    run_id: str
    thread_id: str = Field(description="The run's LangGraph thread.")
    question: str
    options: ResearchOptions
    status: RunStatus
    engine: Literal["llm", "extractive"]
    created_at: str
    updated_at: str
    current_stage: str | None
    error: str | None
    artifact_dir: str | None
    cancel_requested: bool
    started_at: str | None
    finished_at: str | None
    usage: UsagePublic
    version: int = Field(description="Bumped by every change of the run record.")
    owner: str = Field(description="The user the run belongs to (`local`: the CLI, or no token needed).")
    lease_owner: str | None = Field(None, description="The process executing the run (host:pid:id), if any.")
    lease_expires_at: str | None = Field(None, description="Until when that process holds the run.")
    attempts: int = Field(0, description="Executions started since the run was last started or resumed.")
    pending_input: PendingInputPublic | None = Field(None, description="Set while the run waits for you.")
    forked_from: ForkedFromPublic | None = Field(None, description="A fork: where it started from.")
    follow_up_of: str | None = Field(None, description="A follow-up: the run whose sources it started with.")
    queued_at: str | None = Field(None, description="When the run last entered the queue.")
    queue_position: int | None = Field(
        None,
        description="While the run waits for a runner (queued, not yet claimed): its place, 1 goes next.",
    )
    title: str | None = Field(None, description="The name the user gave the run; null: its question.")
    resumes: int = Field(0, description="Times a person resumed the run (continue or fork).")
    forks: int = Field(0, description="Of those, resumes from an older checkpoint (each a new branch).")
    download_stem: str = Field(
        "deepresearch-report", description="The file name its downloads carry (from its title or question)."
    )


class RunsPublic(PublicModel):
    runs: list[RunPublic]
    limit: int
    offset: int
    next_offset: int | None = Field(description="Offset of the next page; null on the last page.")


class StagePublic(PublicModel):
    key: str
    title: str
    status: StageStatus
    tool_name: str
    summary: str
    checkpoint_id: str | None
    tokens: int
    cost_usd: float


class ArtifactPublic(PublicModel):
    path: str = Field(description="Relative to the run's artifact folder.")
    size: int


class LLMPublic(PublicModel):
    """The configured model and how its server takes structured output (negotiated once, remembered)."""

    endpoint: str
    model: str
    structured_output: str | None = Field(
        description="json_schema, json_object_schema, json_object or prompt; null until first negotiated."
    )
    detail: str | None = Field(description="What the negotiation found (refused modes, say).")
    checked_at: str | None


class RunDetailPublic(RunPublic):
    llm: LLMPublic | None = Field(description="The model of llm runs (the server's current settings).")
    stages: list[StagePublic]
    checkpoint_count: int
    artifacts: list[ArtifactPublic]
    report_path: str | None = Field(description="Artifact path of the Markdown report, once written.")
    active_here: bool = Field(description="This process is executing the run right now.")


class ResumedPublic(RunPublic):
    resumed_from: str = Field(description="The checkpoint id resumed from, or `latest`.")


class CancelPublic(PublicModel):
    run_id: str
    status: RunStatus
    cancel_requested: bool


class ArtifactsPublic(PublicModel):
    run_id: str
    artifact_dir: str | None
    artifacts: list[ArtifactPublic]


# --- checkpoints and receipts --------------------------------------------------------------------
class LangGraphRef(PublicModel):
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


class FrameworkRef(PublicModel):
    langgraph: LangGraphRef


class CheckpointFields(PublicModel):
    checkpoint_id: str
    fork_of: str | None = Field(description="Set on the first checkpoint of a fork: the one it forked from.")
    stage: str
    title: str
    created_at: str
    next: list[str]
    summary: str
    parent_checkpoint_id: str | None
    framework_ref: FrameworkRef


class CheckpointPublic(CheckpointFields):
    status: str = Field(description="`active` while the run executes, else the run's status.")
    resumable: bool


class CheckpointsPublic(PublicModel):
    run_id: str
    checkpoints: list[CheckpointPublic]


class ReceiptPublic(PublicModel):
    receipt_key: str
    args_hash: str
    tool_name: str
    stage: str | None
    status: ReceiptStatus
    args: Any
    error: str | None
    tokens: int
    cost_usd: float
    created_at: str
    updated_at: str


class ReceiptsPublic(PublicModel):
    run_id: str
    receipts: list[ReceiptPublic]


class DuplicateRisk(PublicModel):
    level: Literal["none", "possible"]
    calls_in_doubt: list[ReceiptPublic]
    explanation: str


class PreviewPublic(PublicModel):
    """What resuming from a checkpoint would skip, run and reuse, and the risk of a duplicate call."""

    run_id: str
    checkpoint_id: str
    stage: str
    fork: bool = Field(description="True unless this is the run's latest checkpoint.")
    skipped_stages: list[str]
    stages_to_run: list[str]
    may_loop_back_to_search: bool
    receipts_reused: list[ReceiptPublic]
    receipts_reused_count: int
    duplicate_risk: DuplicateRisk


# --- session -------------------------------------------------------------------------------------
class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    token: str = Field(
        min_length=1, max_length=200, description="An API token (`deepresearch token create NAME`)."
    )


class SessionPublic(PublicModel):
    user: str = Field(description="Whose runs this client sees and starts.")
    admin: bool = Field(description="Sees every user's runs.")
    token_required: bool = Field(description="This server answers API calls only with a token.")
    collections: list[str] = Field(description="Document collections a run may search (options.corpus).")


class CollectionPublic(PublicModel):
    name: str = Field(description="What a run names in options.corpus.")
    kind: Literal["server", "uploaded"] = Field(description="The operator's folder, or your uploads.")
    documents: int | None = Field(description="Documents in an uploaded collection (null: a server folder).")


class StoragePublic(PublicModel):
    bytes: int = Field(description="Bytes of all your uploaded documents.")
    max_bytes: int = Field(description="DEEPRESEARCH_MAX_STORAGE_BYTES_PER_USER.")
    collections: int = Field(description="Your uploaded collections.")
    max_collections: int = Field(description="DEEPRESEARCH_MAX_COLLECTIONS_PER_USER.")


class CollectionsPublic(PublicModel):
    collections: list[CollectionPublic]
    storage: StoragePublic = Field(description="How much of your upload quota is used.")


class DocumentPublic(PublicModel):
    name: str
    size: int = Field(description="Bytes.")


class DocumentsPublic(PublicModel):
    collection: str
    documents: list[DocumentPublic]


class PrunePublic(PublicModel):
    deleted: list[str] = Field(description="The runs deleted, with their events, checkpoints and files.")
    database_bytes: int
    workspace_bytes: int


# --- the event log (GET /api/runs/{id}/events: one SSE message per event, `id` = seq) -------------
class _Event(BaseModel):
    # New optional fields may appear in a later release: clients must ignore what they do not know.
    model_config = ConfigDict(extra="allow")

    seq: int = Field(description="1, 2, 3… per run, no gaps; the SSE `id`, for Last-Event-ID.")
    run_id: str
    ts: str
    stage: str | None


class RunStatusEvent(_Event):
    """An execution (start, resume, fork) begins (`running`) or the run stops."""

    type: Literal["run_status"]
    status: RunStatus
    engine: str | None = None
    resumed: bool | None = None
    from_checkpoint: str | None = None
    orphaned: bool | None = Field(None, description="Stopped by a cancel while no process ran it.")


class ToolCallEvent(_Event):
    """A stage starts (no `parent_call_id`, has `title`) or one of its sub-tool calls starts."""

    type: Literal["tool_call"]
    tool_name: str
    call_id: str
    receipt_key: str | None = None
    parent_call_id: str | None = Field(None, description="The stage's call id, on sub-tool calls.")
    title: str | None = None
    label: str | None = None
    args: Any = None
    reused: bool | None = Field(None, description="Answered from a receipt: nothing is called.")


class ToolResultEvent(_Event):
    """A sub-tool call ends, or (after its `checkpoint`) a stage ends."""

    type: Literal["tool_result"]
    tool_name: str
    call_id: str
    ok: bool
    parent_call_id: str | None = None
    receipt_key: str | None = None
    reused: bool | None = None
    error: str | None = None
    cancelled: bool | None = Field(None, description="The stage paused at a tool boundary (not a failure).")
    tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    artifact_path: str | None = None
    langgraph_checkpoint_id: str | None = None
    summary: str | None = None


class CheckpointEvent(_Event, CheckpointFields):
    """A business safety point: one of the seven stages finished and is durable. Count these."""

    model_config = ConfigDict(extra="allow")

    type: Literal["checkpoint"]
    resumable: bool
    indexed: bool = Field(True, description="Always true: listed by GET /api/runs/{id}/checkpoints.")


class GraphCheckpointEvent(_Event):
    """LangGraph's own checkpoints (the input, the reflection loop, finalize): not safety points."""

    type: Literal["graph_checkpoint"]
    checkpoint_id: str
    next: list[str]


class MessageEvent(_Event):
    type: Literal["message"]
    text: str
    replica: str | None = Field(None, description="The process that wrote it (takeovers, cancels).")
    queued: bool | None = Field(None, description="True: the run waits for a free slot on its runner.")
    ahead: int | None = Field(None, description="With `queued`: runs waiting before this one there.")
    indexed: int | None = Field(None, description="Indexing the run's documents: files done so far ...")
    total: int | None = Field(None, description="... of this many (DEEPRESEARCH_INDEX_PROGRESS_SECONDS).")


class ReportDeltaEvent(_Event):
    """A piece of the report as the model writes it (the artifact is written once, when it is complete
    and checked). Concatenate ``delta`` in ``offset`` order; a new ``attempt`` (the re-ask) starts over."""

    type: Literal["report_delta"]
    step: str
    attempt: int
    offset: int
    delta: str


class InputRequestedEvent(_Event):
    """The run stopped to wait for a person (plan review): it holds no process while it waits. The
    `end` of this execution follows with status `waiting_for_input`."""

    type: Literal["input_requested"]
    kind: Literal["plan_review"]
    plan: PlanReview
    since: str


class ErrorEvent(_Event):
    type: Literal["error"]
    message: str = Field(description="What went wrong and what to do, in plain words.")
    resumable: bool
    detail: str | None = Field(None, description="The raw failure behind the message, for a folded view.")


class EndEvent(_Event):
    """The last event of an execution; the stream closes after it once the run has stopped."""

    type: Literal["end"]
    status: RunStatus
    error: str | None
    usage: UsagePublic
    report_path: str | None = Field(
        description="The Markdown report's artifact path (GET /api/runs/{run_id}/artifacts/{path}) once "
        "completed, as in the run detail."
    )


EVENT_MODELS: tuple[type[_Event], ...] = (
    RunStatusEvent,
    ToolCallEvent,
    ToolResultEvent,
    CheckpointEvent,
    GraphCheckpointEvent,
    MessageEvent,
    ReportDeltaEvent,
    InputRequestedEvent,
    ErrorEvent,
    EndEvent,
)
RunEvent = Annotated[reduce(or_, EVENT_MODELS), Field(discriminator="type")]
"""Any event of the log, told apart by its `type`."""
EVENT_TYPES: tuple[str, ...] = tuple(m.model_fields["type"].annotation.__args__[0] for m in EVENT_MODELS)  # type: ignore[union-attr]


# --- steering: forks and follow-ups (docs/steering.md) --------------------------------------------
class ForkPreviewPublic(PublicModel):
    """What a fork of this checkpoint with this patch would keep, run again and reuse."""

    run_id: str = Field(description="The run forked from (it is left untouched).")
    checkpoint_id: str
    stage: str = Field(description="The checkpoint's stage.")
    kept_through: str = Field(description="The last stage whose results the fork keeps.")
    stages_to_run: list[str]
    changes: list[str] = Field(description="The patch, in words.")
    receipts_reusable: int = Field(
        description="Recorded external calls (search, fetch, model) the fork answers from the original's "
        "receipts whenever it makes the same call with the same arguments: it pays only for what changed."
    )


class ForkedPublic(RunPublic):
    preview: ForkPreviewPublic
