"""The rules about a run's input, for every front end: what a question may be, and a run's options as the
server accepts them (the patch over the base, validated by config.py's types, plus the checks only the server
can make: which folders and collections a principal may use, webhook targets)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config import Settings, describe_validation_error, error_message
from deepresearch.errors import InvalidInput
from deepresearch.options import OptionsPatch, ResearchOptions, merge_options
from deepresearch.search.folder import DOCUMENT_KINDS, has_documents
from deepresearch.service.auth import Principal
from deepresearch.service.collections import Collections
from deepresearch.service.webhooks import WebhookRefused, check_webhook_url

Patch = OptionsPatch
"""Options to change, as every front end builds them: the API from its request body, the CLI from its flags
(:func:`options_patch`)."""

# The rule for a question, as a regular expression that Python, JSON Schema validators and pydantic's
# engine all read the same way (so the OpenAPI document states it too): no control characters
# but tab and newlines, and at least one character that is neither a space nor invisible (zero-width,
# format and separator characters).
_CONTROL = r"\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F"
_INVISIBLE = r"\s\x00-\x1F\x7F-\x9F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202F\u205F-\u206F\u3000\uFEFF"
QUESTION_PATTERN = rf"^[^{_CONTROL}]*[^{_INVISIBLE}][^{_CONTROL}]*$"
_QUESTION = re.compile(QUESTION_PATTERN)
_CONTROLS = re.compile(rf"[{_CONTROL}]")


def question_problem(question: str, max_chars: int) -> str | None:
    """What is wrong with a question (already stripped), or None: the one rule for the CLI and HTTP."""
    if not question:
        return "the question is empty: write the question to research"
    if len(question) > max_chars:
        return f"at most {max_chars} characters (got {len(question)})"
    if any("\ud800" <= ch <= "\udfff" for ch in question):
        return "contains an unpaired surrogate (not valid Unicode text)"
    if not _QUESTION.match(question):
        return "contains control characters" if _CONTROLS.search(question) else "has no visible characters"
    if not any(ch.isalnum() for ch in question):
        # "?" or "!!! ..." would plan, search and fail at the first stage with a misleading message
        return "has no words (only punctuation or symbols): write the question to research in words"
    return None


def check_question(question: str, max_chars: int) -> str:
    """The question, stripped; InvalidInput when it is empty, invisible, too long or not storable text."""
    question = question.strip()
    if problem := question_problem(question, max_chars):
        raise InvalidInput(problem, "question")
    return question


def patched(patch: Patch | None, name: str) -> bool:
    """The patch sets option `name` to a value (null or omitted keeps the base value)."""
    return patch is not None and getattr(patch, name, None) is not None


def _invalid(exc: ValidationError) -> InvalidInput:
    """A ValidationError of the options as the one InvalidInput a client sees (naming the field)."""
    first = exc.errors()[0]
    field = ".".join(["options", *(str(p) for p in first["loc"])])
    if len(exc.errors()) == 1:
        return InvalidInput(error_message(first), field)
    return InvalidInput(describe_validation_error(exc, "options"))


def options_patch(values: Mapping[str, Any]) -> Patch:
    """Options given as plain values (the CLI's flags) as the OptionsPatch the API reads from a request
    body, with the same bounds; InvalidInput names the bad option."""
    try:
        return OptionsPatch.model_validate(dict(values))
    except ValidationError as exc:
        raise _invalid(exc) from None


def checked_options(
    base: Mapping[str, Any],
    patch: Patch | None,
    principal: Principal,
    settings: Settings,
    collections: Collections,
) -> ResearchOptions:
    """`patch` over `base`, validated, with server-side checks; InvalidInput names the bad option.

    Only the CLI may name a server folder; everyone else chooses a configured document collection,
    which becomes the run's folder here."""
    if not principal.server_folders and patched(patch, "corpus_dir"):
        raise InvalidInput(
            "a server folder can be chosen only from the CLI; choose a document collection with "
            f"options.corpus ({collections.describe(principal)})",
            "options.corpus_dir",
        )
    try:
        options = merge_options(base, patch)
    except ValidationError as exc:
        raise _invalid(exc) from None
    if patched(patch, "webhook_url"):
        try:
            check_webhook_url(str(options.webhook_url), settings)
        except WebhookRefused as exc:
            raise InvalidInput(str(exc), "options.webhook_url") from None
    if patched(patch, "corpus"):
        root = collections.resolve(options.corpus or "", principal)
        if root is None:
            offered = collections.describe(principal)
            raise InvalidInput(
                f"no document collection named {options.corpus!r} ({offered})", "options.corpus"
            )
        options = options.model_copy(update={"corpus_dir": str(root)})
    if options.corpus_dir:
        try:
            exists = Path(options.corpus_dir).is_dir()
        except OSError as exc:  # a name too long, a folder the server may not read
            raise InvalidInput(f"cannot be read: {exc.strerror}", "options.corpus_dir") from None
        if not exists:
            raise InvalidInput(
                f"folder {options.corpus_dir} does not exist on the server", "options.corpus_dir"
            )
        # searching a folder alone, the run would fail at its first search ("no search results at all"); a
        # collection always holds a document (it goes with its last one)
        if options.corpus_only and not options.corpus and not has_documents(Path(options.corpus_dir)):
            raise InvalidInput(
                f"folder {options.corpus_dir} holds no {DOCUMENT_KINDS} document to search: add "
                "documents, or leave `corpus_only` off to search the web too",
                "options.corpus_dir",
            )
    return options
