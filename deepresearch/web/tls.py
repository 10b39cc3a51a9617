"""One verifying TLS context per process, shared by every outbound HTTP client.

Building a context loads the CA bundle (~40 ms of CPU, on the event loop when a client is built inside a
run). httpx builds one per ``AsyncClient`` unless it is handed one, and a run builds several clients (search,
fetch, LLM), so a batch of runs spent a sixth of its event-loop time here (docs/profile.md). An
``SSLContext`` holds no per-connection state and is safe to share across clients and threads.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The verifying context (certifi's CA bundle; proxies' SSL_CERT_* variables are ignored like the rest
    of the environment: every client here is built with ``trust_env=False``)."""
    return httpx.create_ssl_context(verify=True, trust_env=False)
