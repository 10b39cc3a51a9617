"""LangGraph's Agent Protocol at the server's root, beside /api: assistants, threads, runs and their
streams, so the official SDKs, LangGraph Studio and agent-chat-ui drive deepresearch unchanged
(docs/agent-protocol.md). One lifecycle underneath: a thread is a research of RunService."""

from __future__ import annotations

from fastapi import FastAPI

from deepresearch.api.agent_protocol.assistants import assistants, info
from deepresearch.api.agent_protocol.runs import runs
from deepresearch.api.agent_protocol.threads import threads


def mount_agent_protocol(app: FastAPI) -> None:
    for router in (info, assistants, threads, runs):
        app.include_router(router)
