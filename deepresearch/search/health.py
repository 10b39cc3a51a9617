"""Is web search possible from here? Plain words for a chain that failed, and a cheap reachability probe.

A run on a machine without internet used to fail with a raw ``DDGSException: DNSError … Query { name: …``.
:func:`explain_failures` says instead what it means and what to do (the raw text stays available as the
detail); :func:`probe_providers` answers "which configured provider can this server reach?" without
spending a paid query: any HTTP answer from the provider's host counts as reachable.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from config import Settings
from deepresearch.search.providers import ADVERTISED_SETTINGS, PROVIDERS
from deepresearch.web.tls import shared_ssl_context

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 5.0
UNREACHABLE_ADVICE = f"Configure {ADVERTISED_SETTINGS}, or research your documents only."
# What network-level failures look like in the providers' messages (httpx, ddgs and its engines).
_UNREACHABLE = re.compile(
    r"ConnectError|ConnectTimeout|timed out|DNS|name resolution|Name or service not known|nodename|"
    r"Network is unreachable|Connection refused|No route to host|getaddrinfo|ConnectionError|"
    r"Could not resolve|error sending request|Connection reset",
    re.IGNORECASE,
)
_SHORT = 120


def is_unreachable(message: str) -> bool:
    return bool(_UNREACHABLE.search(message))


@dataclass(frozen=True, slots=True)
class FailureExplained:
    message: str
    """Plain words: what it means and what to do."""
    detail: str
    """The providers' own messages."""


def explain_failures(failures: Mapping[str, str], query: str) -> FailureExplained:
    """What to tell a person when every search source failed for ``query``."""
    detail = "; ".join(f"{name}: {text}" for name, text in failures.items())
    web = {name: text for name, text in failures.items() if name not in ("corpus", "configuration")}
    if "configuration" in failures:
        return FailureExplained(failures["configuration"], detail)
    if web and all(is_unreachable(text) for text in web.values()):
        return FailureExplained(
            f"No web search provider is reachable from this server: {', '.join(web)} could not be "
            f"reached (no network, DNS or a firewall). {UNREACHABLE_ADVICE}",
            detail,
        )
    short = "; ".join(f"{name}: {text[:_SHORT]}" for name, text in failures.items())
    return FailureExplained(
        f"every search source failed for {query!r} ({short}). Check the providers' settings and keys, "
        "or research your documents only.",
        detail,
    )


def nothing_found(failures: Sequence[Mapping[str, Any]], *, corpus: bool) -> str:
    """Why a search round found nothing, in plain words: the providers' failures explained as a failing
    search is (explain_failures: "No web search provider is reachable ..."), their own
    messages logged; a corpus that answered with nothing is said to have done so."""
    merged = {name: text for f in failures for name, text in f["failures"].items()}
    if not merged:
        return (
            "no search results at all (every query returned nothing). Configure a search provider or a "
            "corpus (see README) and resume the run."
        )
    explained = explain_failures(merged, failures[0]["query"])
    logger.info("no search results at all: %s", explained.detail)  # the events carry each failure too
    held = " The corpus held nothing that matched." if corpus else ""
    return f"no search results at all: {explained.message}{held} Resume the run once it is fixed."


@dataclass(frozen=True, slots=True)
class ProviderProbe:
    name: str
    configured: bool
    reachable: bool | None
    """None: not configured, so not probed."""
    detail: str


def provider_urls(settings: Settings) -> dict[str, str | None]:
    """Every known provider, in chain order, with the URL a probe asks (None: not configured)."""
    configured = {provider.name: provider.probe_url(settings) for provider in PROVIDERS}
    # the MCP entry is no web provider with a URL to probe (its servers are called only by runs)
    chain = [name for name in dict.fromkeys(settings.search_providers) if name in configured]
    order = chain + [name for name in configured if name not in chain]
    return {name: configured[name] if name in chain else None for name in order}


async def probe_providers(settings: Settings) -> list[ProviderProbe]:
    """Ask each configured provider's host for anything, in parallel, with a short timeout."""
    timeout = min(PROBE_TIMEOUT_SECONDS, settings.search_timeout_seconds)
    urls = provider_urls(settings)
    async with httpx.AsyncClient(
        trust_env=False, timeout=timeout, follow_redirects=False, verify=shared_ssl_context()
    ) as client:

        async def probe(name: str, url: str | None) -> ProviderProbe:
            if url is None:
                return ProviderProbe(name, False, None, "not configured")
            try:
                # the host's root, never the search path: a probe must not run (or pay for) a query
                response = await client.get(_origin(url) + "/")
            except httpx.HTTPError as exc:
                return ProviderProbe(name, True, False, f"{type(exc).__name__}: {exc}"[:300])
            return ProviderProbe(name, True, True, f"HTTP {response.status_code} from {_origin(url)}")

        return list(await asyncio.gather(*(probe(name, url) for name, url in urls.items())))


def _origin(url: str) -> str:
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.netloc.decode()}"
