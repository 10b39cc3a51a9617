"""Real servers on 127.0.0.1 for tests: scripted LLM, scripted search, a static site.

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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_app(app: object, *, host: str = "127.0.0.1", lifespan: str = "off") -> Iterator[str]:
    """Run an ASGI app on 127.0.0.1:<free port> in a thread; yield its base URL (no trailing slash)."""
    port = _free_port()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"scripted-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"scripted server on port {port} did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
