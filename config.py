"""Settings: one pydantic-settings object, validated at load, every knob an env var.

Nothing happens at import time: call :func:`load_settings` (or build ``Settings(...)``) where needed.
``.env`` is read only when ``load_settings(env_file=...)`` is asked to.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from deepresearch.options import (
    CORPUS_NAME_PATTERN,
    DEFAULT_REVIEWERS,
    OPTION_DEFAULTS,
    SHAPE_OPTIONS,
    MaxResearchLoops,
    QueriesPerRound,
    ResearchOptions,
    ResultsPerQuery,
    Reviewers,
    SourcesToFetch,
)


def _provider_names() -> tuple[str, ...]:
    # the providers are listed once, beside their code; imported here when settings are built, not at import
    from deepresearch.search.providers import PROVIDER_NAMES

    return PROVIDER_NAMES


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    """Every setting of the engine and the runner. Env var = ``DEEPRESEARCH_`` + upper-cased name,
    unless an alias is listed (OpenAI and provider keys keep their usual names)."""

    model_config = SettingsConfigDict(
        env_prefix="DEEPRESEARCH_",
        extra="ignore",
        populate_by_name=True,
        validate_default=True,
        env_ignore_empty=True,  # a copied .env.example with blank lines must mean "default", not ""
    )

    # --- storage -------------------------------------------------------------------------------
    home: Path = Field(Path(".deepresearch"), description="Directory for the embedded database.")
    database_url: str = Field(
        "",
        validation_alias=AliasChoices(
            "DEEPRESEARCH_DATABASE_URL", "KSADK_LANGGRAPH_CHECKPOINT_DSN", "database_url"
        ),
        description="sqlite:///path or a postgres:// DSN. Empty = sqlite file in `home`.",
    )
    database_pool_size: int = Field(
        10,
        ge=1,
        le=1000,
        description="PostgreSQL connections one process opens at most (store and checkpointer share them).",
    )
    database_pool_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=600,
        description="How long a request waits for a free PostgreSQL connection before it is answered 503.",
    )
    workspace_dir: Path = Field(Path("workspace"), description="Where run artifacts are written.")

    # --- LLM -----------------------------------------------------------------------------------
    engine: Literal["auto", "llm", "extractive"] = Field(
        "auto", description="auto = llm when a model is configured, else extractive."
    )
    openai_api_key: str = Field("", validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key"))
    openai_base_url: str = Field("", validation_alias=AliasChoices("OPENAI_BASE_URL", "openai_base_url"))
    openai_model_name: str = Field(
        "", validation_alias=AliasChoices("OPENAI_MODEL_NAME", "openai_model_name")
    )
    llm_timeout_seconds: float = Field(120.0, gt=0, le=3600)
    llm_max_retries: int = Field(4, ge=0, le=10)
    llm_retry_max_wait_seconds: float = Field(30.0, ge=0, le=600)
    llm_temperature: float = Field(0.2, ge=0, le=2)
    llm_max_output_tokens: int = Field(4096, ge=64, le=200_000)
    llm_structured_output: Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"] = (
        Field(
            "auto",
            description="How structured answers are asked for: auto = negotiated with the server once per "
            "endpoint and model (remembered in the database), or one mode fixed.",
        )
    )
    llm_json_mode: bool = Field(
        False, description="Legacy: true = DEEPRESEARCH_LLM_STRUCTURED_OUTPUT=json_object (if that is auto)."
    )
    llm_fallback: Literal["extractive", "fail"] = Field(
        "extractive",
        description="When a model's answer stays unusable after one re-ask: extractive = that step uses "
        "the extractive method (labelled) and the run goes on; fail = the stage fails (resumable).",
    )
    llm_max_concurrency: int | None = Field(
        None, ge=1, le=256, description="Requests at once to the LLM endpoint; unset: 1 if local, else 4."
    )
    llm_input_cost_per_mtok: float = Field(0.0, ge=0, description="USD per million prompt tokens.")
    llm_output_cost_per_mtok: float = Field(0.0, ge=0, description="USD per million output tokens.")

    # --- search --------------------------------------------------------------------------------
    search_providers: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(_provider_names()),
        description="Provider chain order; unconfigured providers are skipped.",
    )
    searxng_url: str = Field("", validation_alias=AliasChoices("SEARXNG_URL", "DEEPRESEARCH_SEARXNG_URL"))
    tavily_api_key: str = Field("", validation_alias=AliasChoices("TAVILY_API_KEY", "tavily_api_key"))
    brave_api_key: str = Field(
        "", validation_alias=AliasChoices("BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY", "brave_api_key")
    )
    web_search_url: str = Field("", description="Generic search endpoint: GET ?q=&max_results=.")
    duckduckgo_enabled: bool = True
    search_timeout_seconds: float = Field(20.0, gt=0, le=300)
    corpus_dir: Path | None = Field(None, description="Folder of .md/.txt/.html/.pdf to search.")
    corpus_only: bool = Field(False, description="Search only the local corpus, never the web.")

    # --- MCP (docs/mcp.md) -----------------------------------------------------------------------
    mcp_servers_file: Path | None = Field(
        None,
        description="JSON file of MCP servers (mcpServers format) whose tools runs search and fetch with.",
    )
    mcp_timeout_seconds: float = Field(
        60.0, gt=0, le=3600, description="Per call of a provider MCP server's tool (and per connection)."
    )
    mcp_research_timeout_seconds: float = Field(
        3600.0,
        gt=0,
        le=86_400,
        description="How long the MCP `research` tool waits for the report before answering with the run id.",
    )

    # --- fetch ---------------------------------------------------------------------------------
    fetch_allow_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="host[:port] allowed even if not public (intranet, tests)."
    )
    fetch_max_bytes: int = Field(5_000_000, ge=10_000, le=100_000_000)
    fetch_connect_timeout_seconds: float = Field(10.0, gt=0, le=120)
    fetch_read_timeout_seconds: float = Field(20.0, gt=0, le=300)
    fetch_total_timeout_seconds: float = Field(45.0, gt=0, le=600)
    fetch_max_redirects: int = Field(5, ge=0, le=10)
    fetch_concurrency: int = Field(4, ge=1, le=64)
    fetch_per_host_concurrency: int = Field(2, ge=1, le=16)
    fetch_user_agent: str = "deepresearch/0.1 (+self-hosted research agent)"
    source_max_chars: int = Field(20_000, ge=1_000, le=500_000, description="Text kept per source.")

    # --- research shape (defaults for each run; a run may override within bounds) ---------------
    max_research_loops: MaxResearchLoops = OPTION_DEFAULTS.max_research_loops
    queries_per_round: QueriesPerRound = OPTION_DEFAULTS.queries_per_round
    results_per_query: ResultsPerQuery = OPTION_DEFAULTS.results_per_query
    sources_to_fetch: SourcesToFetch = OPTION_DEFAULTS.sources_to_fetch
    reviewers: Annotated[Reviewers, NoDecode] = Field(default_factory=lambda: list(DEFAULT_REVIEWERS))
    requires_critic_review: bool = OPTION_DEFAULTS.requires_critic_review
    llm_concurrency: int = Field(4, ge=1, le=64)
    search_concurrency: int = Field(4, ge=1, le=64)

    # --- operations and fault injection -------------------------------------------------------
    stage_delay_seconds: float = Field(
        0.0,
        ge=0,
        le=3600,
        validation_alias=AliasChoices(
            "DEEPRESEARCH_STAGE_DELAY_SECONDS", "LONG_TASK_STAGE_DELAY_SECONDS", "stage_delay_seconds"
        ),
    )
    fail_stage: str = Field(
        "",
        validation_alias=AliasChoices("DEEPRESEARCH_FAIL_STAGE", "LONG_TASK_FAIL_STAGE", "fail_stage"),
        description="<stage>[:start|end] injects a failure (testing resume after failure).",
    )
    crash_after_checkpoint: str = Field(
        "",
        description="<stage>: the process kills itself (SIGKILL) when that stage's checkpoint is saved, "
        "before it is announced (testing recovery).",
    )
    log_level: str = "WARNING"

    # --- runner --------------------------------------------------------------------------------
    recover_runs_on_startup: bool = Field(
        True, description="Resume runs a dead process left running: at start-up, and serve's takeover scan."
    )
    shutdown_grace_seconds: float = Field(30.0, ge=0, le=3600, description="SIGTERM: wait for runs to stop.")
    lease_seconds: float = Field(
        6.0, ge=1, le=3600, description="A run's lease; its process renews it every third of this."
    )
    takeover_scan_seconds: float = Field(
        2.0, gt=0, le=3600, description="serve looks for runs whose process died this often."
    )
    max_attempts: int = Field(
        5, ge=1, le=1000, description="Executions of a run taken over automatically before it fails."
    )
    max_concurrent_runs: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Runs one process executes at once; more wait as `queued`, first in, first out.",
    )
    cancel_poll_seconds: float = Field(
        0.5,
        gt=0,
        le=60,
        description="How often a process looks for cancels of its runs asked on any replica.",
    )
    cpu_workers: int | None = Field(
        None,
        ge=0,
        le=64,
        description="Worker processes for HTML extraction, ranking and rendering (0: threads; "
        "unset: cores - 1, at least 2 and at most 4).",
    )
    sse_heartbeat_seconds: float = Field(15.0, gt=0, le=300, description="SSE comment ping interval.")
    max_question_chars: int = Field(2000, ge=10, le=100_000)
    max_request_bytes: int = Field(
        1_000_000, ge=10_000, le=100_000_000, description="Larger request bodies get 413, unparsed."
    )

    # --- security (docs/security.md) ----------------------------------------------------------
    require_token: bool = Field(
        False, description="Require an API token even on loopback (always required on other addresses)."
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names the server answers besides loopback's (DNS-rebinding guard); * = any.",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins (scheme://host[:port]) other pages may call the API from."
    )
    session_seconds: int = Field(
        43_200, ge=1, le=31_536_000, description="How long a workbench sign-in lasts (signing out ends it)."
    )
    corpus_roots: Annotated[dict[str, Path], NoDecode] = Field(
        default_factory=dict,
        description="Document collections API clients may search: name=folder[,name=folder...].",
    )
    max_runs_per_minute: int = Field(30, ge=1, le=100_000, description="Run starts per user per minute.")
    max_active_runs_per_user: int = Field(
        20, ge=1, le=100_000, description="Runs a user may have queued or running at once."
    )
    max_streams_per_client: int = Field(
        100, ge=1, le=100_000, description="Event streams a client may hold open at once (per process)."
    )
    max_upload_bytes: int = Field(
        20_000_000, ge=10_000, le=1_000_000_000, description="Largest document a user may upload."
    )
    max_documents_per_collection: int = Field(1000, ge=1, le=1_000_000)
    index_progress_seconds: float = Field(
        5.0, ge=0, le=3600, description="How often a long indexing of documents says how far it is."
    )
    document_parse_seconds: float = Field(
        30.0, gt=0, le=3600, description="Longest a document (PDF) may take to read, in a CPU worker."
    )
    document_max_pages: int = Field(2000, ge=1, le=1_000_000, description="Most pages a PDF may have.")
    max_storage_bytes_per_user: int = Field(
        1_000_000_000, ge=10_000, le=10**15, description="Bytes of documents one user may keep uploaded."
    )
    max_collections_per_user: int = Field(
        50, ge=1, le=100_000, description="Document collections one user may have."
    )
    webhook_url: str = Field(
        "", description="Called (POST, signed) whenever a run starts waiting, completes or fails."
    )
    webhook_secret: str = Field(
        "", description="HMAC-SHA256 key that signs webhook calls; no webhook is called without one."
    )
    webhook_allow_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="host[:port] a webhook may call although not public (intranet)."
    )
    webhook_max_attempts: int = Field(5, ge=1, le=20, description="Attempts per webhook call.")
    webhook_backoff_seconds: float = Field(
        2.0, gt=0, le=600, description="Wait before the 2nd attempt; doubled after each failure."
    )
    webhook_timeout_seconds: float = Field(10.0, gt=0, le=120, description="Per attempt.")
    webhook_max_pending: int = Field(
        1000, ge=1, le=100_000, description="Webhook calls waiting or retrying at once; more are dropped."
    )
    retention_days: float | None = Field(
        None, gt=0, le=36_500, description="serve prunes runs finished longer ago than this (unset: never)."
    )

    @field_validator(
        "search_providers",
        "fetch_allow_hosts",
        "webhook_allow_hosts",
        "reviewers",
        "allowed_hosts",
        "cors_origins",
        mode="before",
    )
    @classmethod
    def _csv(cls, value: object) -> object:
        return _split_csv(value)

    @field_validator("corpus_roots", mode="before")
    @classmethod
    def _named_folders(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        roots: dict[str, str] = {}
        for item in _split_csv(value):  # type: ignore[union-attr]
            name, sep, folder = item.partition("=")
            if not sep or not name.strip() or not folder.strip():
                raise ValueError(f"{item!r} is not name=folder")
            roots[name.strip()] = folder.strip()
        return roots

    @field_validator("corpus_roots")
    @classmethod
    def _collection_names(cls, value: dict[str, Path]) -> dict[str, Path]:
        for name in value:
            if not re.fullmatch(CORPUS_NAME_PATTERN, name):  # match() takes "name\n"
                raise ValueError(f"collection name {name!r}: letters, digits, '.', '_', '-' (at most 64)")
        return value

    @field_validator("search_providers")
    @classmethod
    def _known_providers(cls, value: list[str]) -> list[str]:
        known = _provider_names()
        unknown = [name for name in value if name not in known]
        if unknown:
            raise ValueError(f"unknown search provider(s) {unknown}; choose from {', '.join(known)}")
        return value

    @field_validator("mcp_servers_file")
    @classmethod
    def _mcp_servers_readable(cls, value: Path | None) -> Path | None:
        # read at load, so a broken file is reported by every command before any run depends on it
        if value is not None:
            from deepresearch.mcpclient.servers import load_servers

            load_servers(value)
        return value

    @field_validator("fail_stage")
    @classmethod
    def _fail_stage_shape(cls, value: str) -> str:
        if value and value.rsplit(":", 1)[-1] not in ("start", "end") and ":" in value:
            raise ValueError("fail_stage must be <stage>, <stage>:start or <stage>:end")
        return value

    @model_validator(mode="after")
    def _llm_mode_needs_model(self) -> Settings:
        if self.engine == "llm" and not self.llm_configured:
            raise ValueError(
                "DEEPRESEARCH_ENGINE=llm needs OPENAI_MODEL_NAME and OPENAI_BASE_URL or OPENAI_API_KEY"
            )
        return self

    # --- derived -------------------------------------------------------------------------------
    @property
    def llm_configured(self) -> bool:
        return bool(self.openai_model_name and (self.openai_base_url or self.openai_api_key))

    @property
    def engine_mode(self) -> Literal["llm", "extractive"]:
        if self.engine == "extractive":
            return "extractive"
        return "llm" if self.llm_configured else "extractive"

    @property
    def structured_output_mode(
        self,
    ) -> Literal["json_schema", "json_object_schema", "json_object", "prompt"] | None:
        """The structured-output mode the settings fix, or None to negotiate it with the server."""
        if self.llm_structured_output != "auto":
            return self.llm_structured_output
        return "json_object" if self.llm_json_mode else None

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.home / 'deepresearch.db'}"

    def default_option_values(self) -> dict[str, Any]:
        """Per-run defaults, not yet validated: a run's own options (e.g. --corpus) complete them."""
        values: dict[str, Any] = {name: getattr(self, name) for name in SHAPE_OPTIONS}
        return values | {
            "reviewers": list(self.reviewers),
            "corpus_dir": str(self.corpus_dir.resolve()) if self.corpus_dir else None,
            "corpus_only": self.corpus_only,
            "budget": {},
        }

    def default_options(self) -> ResearchOptions:
        return ResearchOptions.model_validate(self.default_option_values())


def describe_validation_error(exc: ValidationError, whole: str = "settings") -> str:
    """One line naming each bad field (or `whole` for a rule across fields) and what is wrong."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or whole}: {error_message(error)}"
        for error in exc.errors()
    )


def describe_settings_error(exc: ValidationError) -> str:
    """Like describe_validation_error, naming the environment variable that sets each bad field."""
    parts = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        if field in Settings.model_fields:
            where = f"{setting_variable(field)} ({where})"
        parts.append(f"{where}: {error_message(error)}")
    return "; ".join(parts)


def setting_variable(field: str) -> str:
    """The environment variable of a Settings field: its first alias, or DEEPRESEARCH_<FIELD>."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices) and alias.choices:
        return str(alias.choices[0])
    return alias if isinstance(alias, str) else f"DEEPRESEARCH_{field.upper()}"


def error_message(error: Any) -> str:
    """A pydantic error's message, without the "Value error, " its own validators' messages get."""
    return str(error["msg"]).removeprefix("Value error, ")


def load_settings(env_file: str | Path | None = None, **overrides: object) -> Settings:
    """Build validated settings from the environment (and an optional .env file)."""
    return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
