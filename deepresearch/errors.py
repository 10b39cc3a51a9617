"""The errors that say a request cannot be carried out, one hierarchy for every front end.

Each class carries the HTTP status it answers with (and any header it needs), so the HTTP runner has one
handler for all of them (deepresearch/api/errors.py) and the CLI turns them into a message and an exit code.
The message names the fix. This module imports nothing of ours: the lowest layer (the store) raises these too.

Errors that are not a refusal of a request (a lease lost, a provider down, a bug) are not here; they stay
with the code that raises them.
"""

from __future__ import annotations

from typing import ClassVar


class DeepResearchError(Exception):
    """A request that cannot be carried out as asked. `field` is the dotted name of the input at fault
    (``question``, ``options.corpus_dir``, ``path.name``) when there is one; `reason` is the message
    without it."""

    status: ClassVar[int] = 500
    """The HTTP status; 5xx means a fault of the server (logged with its traceback), not of the request."""
    server_fault: ClassVar[bool] = True
    """For a 5xx: a fault of ours, so the client is told only its type (the log has the traceback). False
    for a 5xx that says the server is busy for now: the client is told why and when to try again."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message

    @property
    def detail(self) -> str:
        """What a client is told (the `detail` of the HTTP error body)."""
        return str(self)

    def headers(self) -> dict[str, str]:
        """HTTP headers the answer needs besides the body."""
        return {}


class InvalidInput(DeepResearchError, ValueError):
    """The request cannot be carried out as given (HTTP 422, CLI exit 2); the message names the fix."""

    status = 422


class RunConflict(DeepResearchError):
    """The run is in a state that does not allow this (HTTP 409)."""

    status = 409


class TooManyRequests(DeepResearchError):
    """A per-user limit was reached (HTTP 429 with Retry-After); the message names the limit's setting."""

    status = 429

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class ServerBusy(DeepResearchError):
    """The server cannot take this request now, though nothing is wrong with it (HTTP 503 with
    Retry-After): e.g. no database connection came free in time. The same request later succeeds."""

    status = 503
    server_fault = False

    def __init__(self, message: str, retry_after: int = 2) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class QuotaExceeded(DeepResearchError):
    """Storing this would take a user past their storage quota (HTTP 413); the message names the setting."""

    status = 413


class NotFound(DeepResearchError, LookupError):
    """No such thing, or not yours: another user's run or document does not exist for you (HTTP 404)."""

    status = 404


class RunNotFound(NotFound):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} not found")
        self.run_id = run_id

    @property
    def detail(self) -> str:
        return "Run not found"


class CheckpointNotFound(NotFound):
    """The checkpoint does not belong to this run."""


class ArtifactNotFound(NotFound):
    """No such artifact in the run's folder."""


class ArtifactNotYetWritten(ArtifactNotFound):
    """The file is not in the folder of a run that has not completed: it may come once the run goes on
    (HTTP 409 - "not now" - rather than 404, which says the address names nothing)."""

    status = 409


class DocumentNotFound(NotFound):
    """No such collection or document for this user."""


class UnsupportedDocument(DeepResearchError, ValueError):
    """Not a document type the corpus indexes, or its bytes are not what its name says (HTTP 415)."""

    status = 415
