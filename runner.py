"""The HTTP runner (FastAPI on uvicorn). This build serves health and readiness; the run API
(start, stream, cancel, resume, checkpoints, receipts) is tracked by the [runner] issue."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Request

from config import Settings
from deepresearch.engine import ResearchEngine

logger = logging.getLogger(__name__)


def create_app(settings: Settings) -> FastAPI:
    from agent import open_engine

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_engine(settings) as engine:
            app.state.engine = engine
            yield

    app = FastAPI(title="deepresearch runner", version="0.1.0", lifespan=lifespan)

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz(engine: EngineDep) -> dict[str, str]:
        try:
            await engine.store.ping()
        except Exception as exc:  # the probe reports any database failure as not ready
            raise HTTPException(503, f"database not reachable: {type(exc).__name__}") from exc
        return {"status": "ready", "engine": engine.settings.engine_mode}

    return app


def get_engine(request: Request) -> ResearchEngine:
    return request.app.state.engine  # type: ignore[no-any-return]


EngineDep = Annotated[ResearchEngine, Depends(get_engine)]


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> int:
    uvicorn.run(create_app(settings), host=host, port=port, log_level=settings.log_level.lower())
    return 0
