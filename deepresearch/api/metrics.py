"""GET /metrics: the runner in Prometheus's text format (prometheus-client).

Gauges read from the database at scrape time describe every run on it (any replica): runs by status and
the oldest waiting run's age. Counters and histograms count what THIS process did, from the events it
appends (scrape every replica): tool calls made and answered from receipts, tokens and cost, stage
durations; and the event streams it serves. Access: open on loopback like /api; wherever tokens are
required, an admin token (it sums up every user's activity and costs) - see docs/security.md."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Annotated, get_args

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from deepresearch.api.access import request_principal
from deepresearch.api.errors import error_responses
from deepresearch.service.auth import Principal
from deepresearch.service.contracts import RunStatus
from deepresearch.service.runs import RunService
from deepresearch.service.views import RunTally, RunViews
from deepresearch.store import EventRecord

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
STAGE_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)


class RunMetrics:
    """The registry of one app: collectors over the database (read through the service's views), and
    counters fed by `observe`."""

    def __init__(self, views: RunViews, open_streams: Callable[[], int]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.database = _DatabaseCollector(views, open_streams)
        self.registry.register(self.database)
        self.tool_calls = Counter(
            "deepresearch_tool_calls",
            "External calls and file writes by tool; reused = answered from a receipt, not made.",
            ["tool", "reused"],
            registry=self.registry,
        )
        self.tokens = Counter(
            "deepresearch_llm_tokens",
            "Model tokens spent by calls made (not reused).",
            registry=self.registry,
        )
        self.cost = Counter(
            "deepresearch_cost_usd", "Cost of calls made, as configured per token.", registry=self.registry
        )
        self.saved_tokens = Counter(
            "deepresearch_llm_tokens_saved", "Tokens of calls answered from receipts.", registry=self.registry
        )
        self.stage_seconds = Histogram(
            "deepresearch_stage_duration_seconds",
            "Wall time of each business stage executed here, from its start to its checkpoint.",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self._stage_started: dict[tuple[str, str], float] = {}

    def observe(self, event: EventRecord) -> None:
        """Count one event this process appended (RunService.on_event)."""
        data = event.data
        if event.type == "tool_call" and data.get("title") and "parent_call_id" not in data:
            self._stage_started[(event.run_id, str(data.get("call_id")))] = time.monotonic()
        elif event.type == "tool_result" and "parent_call_id" in data:  # a sub-tool call (None: no stage)
            reused = bool(data.get("reused"))
            self.tool_calls.labels(tool=str(data.get("tool_name")), reused=str(reused).lower()).inc()
            tokens, cost = int(data.get("tokens") or 0), float(data.get("cost_usd") or 0.0)
            (self.saved_tokens if reused else self.tokens).inc(tokens)
            if not reused:
                self.cost.inc(cost)
        elif event.type == "tool_result" and "langgraph_checkpoint_id" in data:
            started = self._stage_started.pop((event.run_id, str(data.get("call_id"))), None)
            if started is not None and event.stage:
                self.stage_seconds.labels(stage=event.stage).observe(time.monotonic() - started)
        elif event.type == "end":  # a stage cut short by a stop never ends: forget its start
            for key in [k for k in self._stage_started if k[0] == event.run_id]:
                del self._stage_started[key]

    async def render(self) -> bytes:
        await self.database.refresh()
        return generate_latest(self.registry)


class _DatabaseCollector(Collector):
    def __init__(self, views: RunViews, open_streams: Callable[[], int]) -> None:
        self.views = views
        self.open_streams = open_streams
        self.snapshot = RunTally({})

    def collect(self) -> Iterable[Metric]:
        runs = GaugeMetricFamily("deepresearch_runs", "Runs in the database by status.", labels=["status"])
        for status in RUN_STATUSES:
            runs.add_metric([status], self.snapshot.by_status.get(status, 0))
        yield runs
        yield GaugeMetricFamily(
            "deepresearch_oldest_waiting_run_age_seconds",
            "How long the run waiting longest for a person has waited (0: none waits).",
            value=self.snapshot.oldest_wait_seconds or 0.0,
        )
        yield GaugeMetricFamily(
            "deepresearch_sse_clients", "Event streams this process serves now.", value=self.open_streams()
        )

    async def refresh(self) -> None:
        """Read the database's numbers (prometheus-client collects synchronously, the database is async)."""
        self.snapshot = await self.views.tally()


async def metrics_principal(
    request: Request, principal: Annotated[Principal, Depends(request_principal)]
) -> Principal:
    if request.app.state.access.token_required and not principal.admin:
        raise HTTPException(
            403, "/metrics needs an admin token on this server (deepresearch token create NAME --admin)"
        )
    return principal


ops_metrics = APIRouter(tags=["ops"])


@ops_metrics.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "Prometheus text format.",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 403),
    },
    dependencies=[Depends(metrics_principal)],
)
async def metrics(request: Request) -> Response:
    """Runs by status, the oldest waiting run's age, tool calls made and reused, tokens, cost, stage
    durations and event streams, in Prometheus's text format."""
    metrics: RunMetrics = request.app.state.metrics
    return Response(await metrics.render(), media_type=CONTENT_TYPE)


def install_metrics(service: RunService, open_streams: Callable[[], int]) -> RunMetrics:
    """Metrics for this service: told of every event it appends (after any sink it already has)."""
    metrics = RunMetrics(service.views, open_streams)
    earlier = service.on_event

    async def observe(event: EventRecord) -> None:
        metrics.observe(event)
        if earlier is not None:
            maybe = earlier(event)
            if maybe is not None:
                await maybe

    service.on_event = observe
    return metrics
