"""A pre-imported Python that forks the tests' `deepresearch` processes (a zygote, or fork server).

Starting `deepresearch serve` or a CLI command costs ~2 s of CPU before it does anything: the interpreter
imports LangChain/LangGraph (and langsmith through them), FastAPI and pydantic. The suite starts a few
hundred of them. This process imports all of that once, then forks a child per request; the child is a
real process (its own pid, real signals, real exit status, the given argv, environment, working directory
and stdio) that runs the program as `python -m MODULE`, `python SCRIPT` or `python -c CODE` would.

Forking is safe because the product has no import-time side effects: importing it starts no thread, opens
no connection or event loop, and reads no setting (settings are read when a command runs). `serve` checks
that this process is single-threaded before every fork.

Protocol (a SOCK_SEQPACKET Unix socket in the abstract namespace, one connection per child): the client
sends one JSON message with its three stdio descriptors attached (SCM_RIGHTS); the zygote answers
`pid N` once the child runs, then `exit CODE` when it ends (CODE as Popen.returncode: negative for a
signal). The child stays a zombie until the client has read its status and closed the connection (as a
Popen's child until `wait`), so its pid cannot be reused while the client may still signal it. When the
zygote's stdin closes (the test worker that started it is gone) it kills its children and exits.

Test tooling, not product code: the client is peers/launch.py.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import io
import json
import locale
import os
import runpy
import secrets
import selectors
import signal
import socket
import struct
import sys
import threading
import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NoReturn

PRELOAD = (
    "agent",
    "runner",
    "deepresearch.api.mcp.stdio",
    "langgraph.checkpoint.postgres.aio",
    "uvicorn.lifespan.on",
    "uvicorn.loops.asyncio",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.websockets.auto",
    "peers.servers",  # bench/replica_soak.py, which a test runs
)
"""What `deepresearch` imports by the time it serves or runs a command (the rest it imports lazily)."""
MAX_REQUEST = 1 << 20


@dataclass
class _Child:
    pid: int
    pidfd: int
    conn: socket.socket | None
    status: int | None = None


def serve() -> None:
    """Import, then fork on request until stdin closes. Prints the socket's address on stdout once ready."""
    _clean_signals()
    for name in PRELOAD:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()  # the children's collections never touch (and so never copy) the pre-imported objects
    _assert_single_threaded()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    address = f"\0peers-zygote-{os.getpid()}-{secrets.token_hex(8)}"
    listener.bind(address)
    listener.listen(64)
    print(address[1:], flush=True)
    _Zygote(listener).loop()


def _clean_signals() -> None:
    """No signal blocked, as in a new interpreter started from a shell, whichever thread started this
    process: a signal mask survives exec (multiprocessing's resource tracker, for one, blocks SIGINT and
    SIGTERM in its thread while it starts a process), and a child that inherited a blocked SIGTERM would
    sleep through a test's signal. Ignored signals stay ignored (nohup's SIGHUP): a new process inherits
    those too."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _assert_single_threaded() -> None:
    threads = len(os.listdir("/proc/self/task"))
    if threading.active_count() != 1 or threads != 1:
        raise RuntimeError(f"the zygote must be single-threaded to fork; it has {threads} threads")


class _Zygote:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.selector.register(0, selectors.EVENT_READ, "control")
        self.selector.register(listener, selectors.EVENT_READ, "listen")
        self.children: dict[int, _Child] = {}

    def loop(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.data == "control":
                    if not os.read(0, 4096):
                        self.shutdown()
                        return
                elif key.data == "listen":
                    self.accept()
                elif key.data[0] == "exited":
                    self.exited(self.children[key.data[1]])
                else:
                    self.hung_up(self.children[key.data[1]])

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        conn.settimeout(10)
        fds: list[int] = []
        try:
            uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
            message, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
            if uid != os.getuid() or len(fds) != 3:
                raise ValueError(f"a request from uid {uid} with {len(fds)} descriptors")
            request = json.loads(message)
            pid = self.fork(request, fds, conn)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            with contextlib.suppress(OSError):
                conn.send(f"error {type(exc).__name__}: {exc}".encode())
            conn.close()
            return
        finally:
            for fd in fds:
                os.close(fd)
        pidfd = os.pidfd_open(pid)
        self.children[pid] = _Child(pid, pidfd, conn)
        self.selector.register(pidfd, selectors.EVENT_READ, ("exited", pid))
        self.selector.register(conn, selectors.EVENT_READ, ("conn", pid))
        with contextlib.suppress(OSError):  # a client gone already: its hang-up is seen next
            conn.send(f"pid {pid}".encode())

    def fork(self, request: dict[str, Any], fds: list[int], conn: socket.socket) -> int:
        _assert_single_threaded()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                conn.detach()  # closed below with every other descriptor but stdio
                self.close_all()
                _become(request, fds)
            except BaseException:
                traceback.print_exc()
            os._exit(127)
        return pid

    def close_all(self) -> None:
        """In a child: let go of the zygote's sockets and descriptors (the child's are 0, 1 and 2)."""
        self.selector.close()
        self.listener.close()
        for child in self.children.values():
            os.close(child.pidfd)
            if child.conn is not None:
                child.conn.close()
        self.children.clear()

    def exited(self, child: _Child) -> None:
        self.selector.unregister(child.pidfd)
        os.close(child.pidfd)
        # WNOWAIT: the status is read but the child stays a zombie (its pid reserved) until the client
        # has it
        info = os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert info is not None
        child.status = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        if child.conn is not None:
            with contextlib.suppress(OSError):
                child.conn.send(f"exit {child.status}".encode())
                return
            self.hung_up(child)
        else:
            self.reap(child)

    def hung_up(self, child: _Child) -> None:
        """The client closed the connection: it read the status, or gave up on the process."""
        if child.conn is not None:
            self.selector.unregister(child.conn)
            child.conn.close()
            child.conn = None
        if child.status is not None:
            self.reap(child)

    def reap(self, child: _Child) -> None:
        os.waitpid(child.pid, 0)
        del self.children[child.pid]

    def shutdown(self) -> None:
        """The test worker is gone: none of its processes outlives it."""
        for child in self.children.values():
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(child.pid, 0)


def _become(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In a fresh child: take the requested stdio, session, directory, environment and argv, run the
    program, and exit as the interpreter would."""
    if request.get("new_session"):
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.chdir(request["cwd"])
    env: dict[str, str] = request["env"]
    os.environ.clear()
    os.environ.update(env)
    _coerce_c_locale(env)
    _forget_cached_environment()
    kind, target, args = request["kind"], request["target"], request["args"]
    path0 = {"module": os.getcwd(), "path": os.path.dirname(os.path.abspath(target)), "code": ""}[kind]
    extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [path0, *extra, *(p for p in sys.path[1:] if p not in extra)]
    sys.argv = [target if kind != "code" else "-c", *args]
    _std_streams(env)
    _finish(_run(kind, target))


def _coerce_c_locale(env: dict[str, str]) -> None:
    """PEP 538, as the interpreter does at start: in the C locale, LC_CTYPE=C.UTF-8 (in the environment too,
    so the program's own children see it)."""
    if env.get("LC_ALL") or env.get("PYTHONCOERCECLOCALE") == "0":
        return
    if (env.get("LC_CTYPE") or env.get("LANG") or "C") in ("C", "POSIX"):
        os.environ["LC_CTYPE"] = "C.UTF-8"


def _forget_cached_environment() -> None:
    """Drop what a library read from the zygote's environment and cached: the child's may differ."""
    utils = sys.modules.get("langsmith.utils")
    for name in ("get_env_var", "get_tracer_project"):
        cached = getattr(utils, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def _std_streams(env: dict[str, str]) -> None:
    """sys.stdin/stdout/stderr on descriptors 0-2 as the interpreter makes them, for this environment
    (PYTHONUNBUFFERED, PYTHONIOENCODING)."""
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    encoding = encoding or ("utf-8" if sys.flags.utf8_mode else locale.getpreferredencoding(False))

    def stream(fd: int, write: bool, stream_errors: str, line_buffering: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "wb" if write else "rb", closefd=False)
        buffered: Any = (
            raw if write and unbuffered else (io.BufferedWriter if write else io.BufferedReader)(raw)
        )
        return io.TextIOWrapper(
            buffered,
            encoding=encoding,
            errors=errors or stream_errors,
            line_buffering=line_buffering,
            write_through=write and unbuffered,
        )

    sys.stdin = sys.__stdin__ = stream(0, False, "strict", False)
    sys.stdout = sys.__stdout__ = stream(1, True, "strict", os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, True, "backslashreplace", True)


def _run(kind: str, target: str) -> int:
    try:
        if kind == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        elif kind == "path":
            runpy.run_path(target, run_name="__main__")
        else:
            exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})  # python -c
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        # as the interpreter does: the traceback, then death by SIGINT (the parent sees -2)
        traceback.print_exception(type(exc), exc, _program_frames(exc.__traceback__))
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    except BaseException as exc:
        sys.excepthook(type(exc), exc, _program_frames(exc.__traceback__))
        return 1
    return 0


def _program_frames(tb: TracebackType | None) -> TracebackType | None:
    """The traceback from the program's frames on: the interpreter's would not show the zygote's."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def _finish(code: int) -> NoReturn:
    """The interpreter's exit: join non-daemon threads, run atexit handlers, flush stdio."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    if not _flush():
        code = 120
    os._exit(code & 0xFF)


def _flush() -> bool:
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok
