"""A run's options as the server accepts them: the patch over the base, validated by config.py's types, plus
the checks only the server can make (which folders and collections a principal may use, webhook targets)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config import Settings, describe_validation_error, error_message
from deepresearch.options import ResearchOptions, merge_options
from deepresearch.rules import InvalidInput, Patch, patched
from deepresearch.service.auth import Principal
from deepresearch.service.collections import Collections
from deepresearch.service.webhooks import WebhookRefused, check_webhook_url


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
        first = exc.errors()[0]
        field = ".".join(["options", *(str(p) for p in first["loc"])])
        if len(exc.errors()) == 1:
            raise InvalidInput(error_message(first), field) from None
        raise InvalidInput(describe_validation_error(exc, "options")) from None
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
    return options
