"""Before a run: what this server can reach (search providers, the model) and how the model takes
structured output. Read models for ``GET /api/providers/health``, ``/readyz`` and the run detail."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from config import Settings
from deepresearch.llm.health import probe_model
from deepresearch.llm.wire import endpoint_of
from deepresearch.search.health import UNREACHABLE_ADVICE, probe_providers
from deepresearch.service.contracts import LLMPublic, PublicModel
from deepresearch.store import RunStore


# --- read models of GET /healthz, /readyz and /api/providers/health ---------------------------------
class HealthPublic(PublicModel):
    status: Literal["ok"]


class SearchProviderHealth(PublicModel):
    name: str
    configured: bool
    reachable: bool | None = Field(description="null: not configured, so not probed.")
    detail: str


class ModelHealth(PublicModel):
    endpoint: str
    model: str
    status: Literal["ok", "unreachable", "unauthorized", "not_found", "unknown_model", "error"]
    message: str = Field(description="Plain words naming the setting to fix.")
    detail: str = Field(description="The raw answer or error, for a folded view.")
    structured_output: str | None = Field(description="The negotiated mode, null until found out.")


class ProvidersHealthPublic(PublicModel):
    """What a run could reach from this server right now (checked on request, nothing is searched)."""

    web_search: Literal["reachable", "unreachable", "not_configured"]
    search: list[SearchProviderHealth]
    corpus_dir: str | None = Field(description="The server's default documents folder, if any.")
    llm: ModelHealth | None = Field(description="null: no model configured (extractive engine).")
    advice: list[str] = Field(description="What to do, in plain words; empty when all is well.")


class ReadyPublic(PublicModel):
    status: Literal["ready"]
    engine: Literal["llm", "extractive"]
    llm: LLMPublic | None = None


# API clients choose a collection (options.corpus); a server folder (corpus_dir) is the CLI's alone
DOCUMENTS_ONLY = (
    "To research your documents only, start the run with corpus_only and a document collection "
    "(options.corpus, one of GET /api/collections; the command line: --corpus DIR --corpus-only)."
)


async def llm_public(settings: Settings, store: RunStore) -> LLMPublic | None:
    """The configured model and its negotiated structured-output mode (None: no model configured)."""
    if not settings.llm_configured:
        return None
    endpoint, model = endpoint_of(settings), settings.openai_model_name.strip()
    known = await store.get_llm_capability(endpoint, model)
    return LLMPublic(
        endpoint=endpoint,
        model=model,
        structured_output=settings.structured_output_mode or (known.mode if known else None),
        detail=known.detail if known else None,
        checked_at=known.checked_at if known else None,
    )


async def providers_health(settings: Settings, store: RunStore) -> ProvidersHealthPublic:
    probes = await probe_providers(settings)
    configured = [p for p in probes if p.configured]
    reachable = [p for p in configured if p.reachable]
    advice: list[str] = []
    if not configured:
        web = "not_configured"
        advice.append(f"No web search provider is configured. {UNREACHABLE_ADVICE} {DOCUMENTS_ONLY}")
    elif not reachable:
        web = "unreachable"
        advice.append(
            "No web search provider is reachable from this server: "
            f"{', '.join(p.name for p in configured)} could not be reached. {UNREACHABLE_ADVICE} "
            + DOCUMENTS_ONLY
        )
    else:
        web = "reachable"
    llm: ModelHealth | None = None
    if settings.engine_mode == "llm":
        probe = await probe_model(settings)
        known = await llm_public(settings, store)
        llm = ModelHealth(
            endpoint=probe.endpoint,
            model=probe.model,
            status=probe.status,
            message=probe.message,
            detail=probe.detail,
            structured_output=known.structured_output if known else None,
        )
        if probe.status != "ok":
            advice.append(
                f"{probe.message} Runs would fail at their first model call; fix it, or run with "
                "DEEPRESEARCH_ENGINE=extractive."
            )
    return ProvidersHealthPublic(
        web_search=web,
        search=[
            SearchProviderHealth(name=p.name, configured=p.configured, reachable=p.reachable, detail=p.detail)
            for p in probes
        ],
        corpus_dir=str(settings.corpus_dir.resolve()) if settings.corpus_dir else None,
        llm=llm,
        advice=advice,
    )
