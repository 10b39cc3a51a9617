"""The report streams into the event log as the model writes it; the artifact is written once, complete.

The scripted server streams like OpenAI (server-sent chunks, usage last) and counts the streams it sent
to the end, so a test can tell a stream that was stopped from one that finished.
"""

from __future__ import annotations

from pathlib import Path

from deepresearch.engine.core import open_engine
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import EventRecord
from tests.conftest import Servers

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
REPORT_KEY = "deepresearch:report:v1"


def _deltas(events: list[EventRecord]) -> list[EventRecord]:
    return [e for e in events if e.type == "report_delta"]


def _report_writes(events: list[EventRecord]) -> list[EventRecord]:
    return [
        e
        for e in events
        if e.type == "tool_result"
        and e.data.get("tool_name") == "workspace.write"
        and e.data.get("label") == "write: deepresearch-report.md"
    ]


async def test_the_report_is_streamed_then_written_once(servers: Servers, tmp_path: Path) -> None:
    servers.llm.stream_chunk_chars = 25
    settings = servers.settings(tmp_path, llm=True)
    events: list[EventRecord] = []
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        final = await engine.execute(run.run_id, on_event=events.append)
        receipts = await engine.store.list_receipts(run.run_id, REPORT_KEY, "succeeded")
    assert final.status == "completed", final.error
    deltas = _deltas(events)
    assert len(deltas) >= 2 and {d.data["attempt"] for d in deltas} == {1}
    assert [d.data["offset"] for d in deltas] == sorted(d.data["offset"] for d in deltas)
    (answer,) = next(r for r in receipts if r.tool_name == "llm.complete").result["answers"]
    assert "".join(d.data["delta"] for d in deltas) == answer
    assert servers.llm.streams_finished == 1
    (write,) = _report_writes(events)
    assert deltas[-1].seq < write.seq  # written once, after the whole answer arrived
    assert final.usage["by_stage"]["write_report"]["tokens"] > 0  # usage came with the stream


async def test_cancel_mid_stream_leaves_no_half_artifact_and_asks_again(
    servers: Servers, tmp_path: Path
) -> None:
    servers.llm.stream_chunk_chars, servers.llm.stream_delay = 20, 0.1
    settings = servers.settings(tmp_path, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        cancel = CancelSignal(run.run_id, engine.store)
        events: list[EventRecord] = []

        def cancel_on_first_piece(event: EventRecord) -> None:
            events.append(event)
            if event.type == "report_delta":
                cancel.request("test cancel mid-stream")

        first = await engine.execute(run.run_id, cancel=cancel, on_event=cancel_on_first_piece)
        assert first.status == "cancelled", first.error
        assert _deltas(events) and _report_writes(events) == []
        assert not (settings.workspace_dir / (run.artifact_dir or "") / "deepresearch-report.md").exists()
        assert servers.llm.calls_by_prompt()["report/v1"] == 1 and servers.llm.streams_finished == 0
        (report_call,) = [
            r
            for r in await engine.store.list_receipts(run.run_id, REPORT_KEY)
            if r.tool_name == "llm.complete"
        ]
        assert report_call.status == "failed" and "while the model was writing" in (report_call.error or "")

        servers.llm.stream_delay = 0.0
        resumed: list[EventRecord] = []
        final = await engine.execute(run.run_id, on_event=resumed.append)
    assert final.status == "completed", final.error
    assert servers.llm.calls_by_prompt()["report/v1"] == 2 and servers.llm.streams_finished == 1
    assert len(_report_writes(resumed)) == 1
    assert (settings.workspace_dir / (final.artifact_dir or "") / "deepresearch-report.md").exists()
