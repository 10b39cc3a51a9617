"""Serves the bundled research workbench (research-ui/) at /research, with a strict CSP.

Besides the static files it answers ``GET /research/config.json``: what the workbench needs to know before a
run exists (the engine and model, the server's default run options, the reviewers, the question limit), so
the new-research form starts from the server's real defaults and labels the extractive engine honestly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from config import DEFAULT_REVIEWERS

UI_DIR = Path(__file__).resolve().parent.parent / "research-ui"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def ui_config(request: Request) -> dict[str, Any]:
    """The workbench's start-up facts; no secrets (no keys, no URLs of providers)."""
    settings = getattr(request.app.state, "settings", None)
    if settings is None:  # the app runs without its lifespan: no settings to report
        return {"engine": None, "model": None, "defaults": None, "reviewers": list(DEFAULT_REVIEWERS)}
    engine = settings.engine_mode
    return {
        "engine": engine,
        "model": settings.openai_model_name if engine == "llm" else None,
        "defaults": settings.default_options().model_dump(),
        "reviewers": list(DEFAULT_REVIEWERS),
        "max_question_chars": settings.max_question_chars,
    }


def mount_ui(app: FastAPI) -> None:
    if not (UI_DIR / "index.html").is_file():
        return

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response: Response = await call_next(request)
        if request.url.path.startswith("/research"):
            response.headers.setdefault("Content-Security-Policy", CSP)
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
            response.headers.setdefault("Referrer-Policy", "no-referrer")
            if request.url.path.endswith(("/", ".html", ".js", ".css", ".json")):
                # a tool kept open all day: a reload must pick up a new release at once
                response.headers.setdefault("Cache-Control", "no-cache")
        return response

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/research/")

    app.add_api_route("/research/config.json", ui_config, methods=["GET"], include_in_schema=False)
    app.mount("/research", StaticFiles(directory=UI_DIR, html=True), name="research-ui")
