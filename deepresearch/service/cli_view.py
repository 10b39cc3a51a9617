"""The terminal progress view: stages, sub-tool calls and tokens, live (rich) or as plain lines."""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from deepresearch.search.health import is_unreachable
from deepresearch.store import EventRecord, RunRecord
from stages import REPORT_STAGES

_ICONS = {"pending": "·", "running": "▶", "done": "✔", "failed": "✖"}


class ProgressView:
    def __init__(self, run: RunRecord, *, live: bool, console: Console | None = None) -> None:
        self.run = run
        # not live (--plain, a pipe, a log): one line per event, never wrapped at the console's width
        self.console = console or Console(highlight=False, soft_wrap=not live)
        self.live_enabled = live
        self.stages: dict[str, dict[str, Any]] = {
            s.key: {"status": "pending", "note": "", "title": s.title} for s in REPORT_STAGES
        }
        self.recent: deque[str] = deque(maxlen=8)
        self.tokens = 0
        self.calls = 0
        self.reused = 0
        self.notes: list[str] = []
        self._live: Live | None = None

    def __enter__(self) -> ProgressView:
        if self.live_enabled:
            self._live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(None, None, None)
            self._live = None

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._print(f"! {text}")
        self._refresh()

    def on_event(self, event: EventRecord) -> None:
        data, stage = event.data, event.stage or ""
        is_sub_tool = "parent_call_id" in data
        line: str | None = None
        if event.type == "tool_call" and not is_sub_tool and stage in self.stages:
            self.stages[stage]["status"] = "running"
            line = f"▶ {self.stages[stage]['title']}"
        elif event.type == "tool_result" and not is_sub_tool and stage in self.stages:
            info = self.stages[stage]
            if data.get("ok"):
                info["status"], info["note"] = "done", data.get("summary", "")
                line = f"✔ {info['title']}: {info['note']}"
            else:
                info["status"], info["note"] = "failed", str(data.get("error") or "")
                line = f"✖ {info['title']}: {info['note']}"
        elif event.type == "tool_result" and is_sub_tool:
            reused = bool(data.get("reused"))
            self.calls += 0 if reused else 1
            self.reused += 1 if reused else 0
            self.tokens += 0 if reused else int(data.get("tokens") or 0)
            status = "reused receipt" if reused else ("ok" if data.get("ok") else "failed")
            if data.get("ok") and data.get("fallback"):  # the step's extractive method gave the value
                status = f"{status}, fell back" if reused else "fell back"
            self.recent.append(f"{data.get('label', data.get('tool_name'))} — {status}{_detail(data)}")
            line = f"    {self.recent[-1]}"
        elif event.type == "message" and data.get("text") and stage not in self.stages:
            line = f"  {data['text']}"
        elif event.type == "error" and not self._shown(str(data.get("message"))):
            # a stage's failure is the run's error too: the stage line has said it already
            line = f"✖ {data.get('message')}"
        if line:
            self._print(line)
        self._refresh()

    def _shown(self, message: str) -> bool:
        return any(i["status"] == "failed" and i["note"] == message for i in self.stages.values())

    def summary(self, run: RunRecord) -> None:
        """This execution's calls (a resume makes only the missing ones), then the whole run's totals."""
        usage = run.usage or {}
        # an extractive run calls no model: "0 tokens (saved by receipts: 0)" would say nothing
        tokens = (
            f", {usage.get('tokens', 0)} tokens (saved by receipts: {usage.get('tokens_saved', 0)})"
            if self._model_run(run)
            else ""
        )
        self.console.print(
            f"Status: {run.status} · this time: {self.calls} tool calls made, {self.reused} answered from "
            f"receipts · whole run: {usage.get('calls', 0)} calls{tokens}"
        )

    @staticmethod
    def _model_run(run: RunRecord) -> bool:
        return run.engine != "extractive" or bool((run.usage or {}).get("tokens"))

    # --- rendering ---------------------------------------------------------------------------------
    def _print(self, line: str) -> None:
        if self._live is None:
            self.console.print(Text(line))

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Group:
        table = Table.grid(padding=(0, 1))
        for info in self.stages.values():
            style = {"done": "green", "running": "bold cyan", "failed": "red"}.get(info["status"], "dim")
            table.add_row(
                Text(_ICONS[info["status"]], style=style),
                Text(info["title"], style=style),
                Text(info["note"], style="dim"),
            )
        recent = Text("\n".join(f"  {line}" for line in self.recent) or "  (no tool calls yet)", style="dim")
        tokens = f"tokens: {self.tokens} · " if self._model_run(self.run) else ""
        footer = Text(
            f"engine: {self.run.engine} · calls: {self.calls} · reused: {self.reused} · "
            f"{tokens}Ctrl-C pauses at the nearest checkpoint",
            style="italic",
        )
        parts: list[Any] = [table, recent, footer]
        parts += [Text(f"! {n}", style="yellow") for n in self.notes[-2:]]
        return Group(*parts)


def _source_failure(name: str, message: str) -> str:
    if is_unreachable(message):
        return f"{name} unreachable"
    first = message.splitlines()[0] if message else "failed"
    return f"{name} failed: {first[:80]}{'…' if len(first) > 80 else ''}"


def _detail(data: dict[str, Any]) -> str:
    output = data.get("output") or {}
    if data.get("error"):
        return f": {data['error']}"
    if "results" in output:
        # a source that failed beside one that answered is no failed call, but "ok, 0 results" alone would
        # hide that the web was never searched (no network): each failed source is named
        failed = "".join(
            f"; {_source_failure(name, str(text))}" for name, text in (output.get("failures") or {}).items()
        )
        count = output["results"]
        return f", {count} result{'' if count == 1 else 's'}{failed}"
    if "bytes" in output:  # a short page is no "0 KB" (read as empty)
        size = int(output["bytes"])
        return f", {size} bytes" if size < 1024 else f", {size // 1024} KB"
    if output.get("ok") is False:
        return f": {output.get('error')}"
    if isinstance(data.get("fallback"), dict):
        tokens = f", {output['tokens']} tokens" if output.get("tokens") else ""
        return f"{tokens} (extractive instead: {str(data['fallback'].get('reason', ''))[:120]})"
    if output.get("tokens"):
        return f", {output['tokens']} tokens"
    return ""
