"""What one LLM client sends: the structured-output mode for its server's family, and the request shape.

The mode starts where the settings fix it, where the database remembers it (``llm_capabilities``), or - the
first time - at the top of the ladder of the server's family, found out once by asking the server
(deepresearch.llm.family). A refusal of the structured-output parameter steps down that ladder; a refusal
of ``max_tokens`` or ``temperature`` (OpenAI's reasoning models) switches them off. Each switch goes one way
only, so the adaptation cannot loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

from pydantic import BaseModel

from config import Settings
from deepresearch.llm.family import ServerFamily
from deepresearch.llm.modes import OutputMode, ladder_of, rejects_format, request_fields, step_down

logger = logging.getLogger(__name__)

Negotiated = Callable[[OutputMode, str], Awaitable[None]]
"""Told the mode once a server accepted it, with the notes (family, refusals) to remember."""
Detect = Callable[[], Awaitable[ServerFamily]]


class Negotiation:
    def __init__(
        self, settings: Settings, output_mode: OutputMode | None, on_negotiated: Negotiated | None
    ) -> None:
        fixed = settings.structured_output_mode
        self.mode: OutputMode = fixed or output_mode or ladder_of("unknown")[0]
        self.family: ServerFamily | None = None
        # settled: the server accepted this mode (or the setting fixes it, or the database remembers it);
        # until then a refusal of the structured-output parameter steps down, and the notes say what was
        # refused
        self.settled = fixed is not None or output_mode is not None
        self._known = self.settled  # the mode needs no finding out: no family probe
        self.notes: list[str] = [] if fixed is None else ["fixed by DEEPRESEARCH_LLM_STRUCTURED_OUTPUT"]
        self._on_negotiated = on_negotiated
        self._probe_lock = asyncio.Lock()
        self.use_max_completion_tokens = False
        self.send_temperature = True

    async def prepare(self, detect: Detect) -> None:
        """Before the first structured request of a client whose mode is not known: ask the server what
        it is (once, however many requests start together) and start at the top of its family's ladder."""
        if self._known:
            return
        async with self._probe_lock:
            if self._known:
                return
            family = await detect()
            self.family, self.mode, self._known = family, ladder_of(family.name)[0], True
            self.notes.insert(0, family.describe())
            logger.info("LLM endpoint is %s; structured output starts as %s", family.describe(), self.mode)

    def params(
        self,
        model: str,
        messages: list[dict[str, str]],
        max_tokens: int,
        temperature: float,
        schema: type[BaseModel] | None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "messages": cast(Any, messages)}
        params["max_completion_tokens" if self.use_max_completion_tokens else "max_tokens"] = max_tokens
        if self.send_temperature:
            params["temperature"] = temperature
        if schema is not None:
            fields = request_fields(self.mode, schema)
            if "response_format" in fields:
                params["response_format"] = fields.pop("response_format")
            if fields:  # a server's own body fields (vLLM's guided_json): past the SDK's typed parameters
                params["extra_body"] = fields
        return params

    def adapt(self, detail: str, status: int, structured: bool, sent_mode: OutputMode) -> bool:
        """Does the refusal name a parameter that can be switched off, or a structured-output mode with
        a lower rung? Then switch (once) and say so; the caller asks again."""
        lowered = detail.lower()
        if status in (400, 422) and not self.use_max_completion_tokens and "max_completion_tokens" in lowered:
            self.use_max_completion_tokens = True
            change = "using max_completion_tokens instead of max_tokens"
        elif (
            status in (400, 422)
            and self.send_temperature
            and "temperature" in lowered
            and "support" in lowered
        ):
            self.send_temperature = False
            change = "no longer sending temperature"
        elif structured and sent_mode != "prompt" and rejects_format(detail, status):
            family = self.family.name if self.family else "unknown"
            lower = step_down(sent_mode, family)
            if sent_mode == self.mode and lower is not None:  # parallel calls step down once
                self.mode, self.settled = lower, False
                self.notes.append(f"{sent_mode} refused ({detail[:160]})")
            change = f"structured output as {self.mode} from now on"
        else:
            return False
        logger.warning("LLM server rejected a parameter (HTTP %s: %s); %s", status, detail, change)
        return True

    async def accepted(self, sent_mode: OutputMode) -> None:
        """A structured request in ``sent_mode`` was answered: the mode is settled (and remembered)."""
        if self.settled or sent_mode != self.mode:
            return
        self.settled = True
        refused = any(" refused (" in note for note in self.notes)
        notes = "; ".join(self.notes if refused else [*self.notes, "accepted at the first try"])
        logger.info("LLM structured output settled as %s (%s)", self.mode, notes)
        if self._on_negotiated is not None:
            await self._on_negotiated(self.mode, notes)
