"""The scripted peers on 127.0.0.1 that tests, scripts and the benchmark run deepresearch against: an
OpenAI-compatible model server, a search server, a static web site (and, in peers.pg, a throwaway PostgreSQL
cluster). Test tooling, not product code: nothing under deepresearch/ imports it, and it never imports pytest.

Each server is a Starlette/ASGI app run by uvicorn in a background thread on an ephemeral port.
They count what they receive, so tests can prove "no repeated calls" at the protocol boundary.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago (the kernel's pick, so parallel test workers differ)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_app(app: object, *, host: str = "127.0.0.1", lifespan: str = "off") -> Iterator[str]:
    """Run an ASGI app on 127.0.0.1:<free port> in a thread; yield its base URL (no trailing slash)."""
    # Bound here and handed to uvicorn, so no other process (a parallel test worker) can take the port
    # between picking it and listening on it.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
    except OSError:
        sock.close()
        raise
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, args=([sock],), name=f"scripted-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"scripted server on port {port} did not start")
            time.sleep(0.01)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
