"""Start a Python program as a real process forked from a pre-imported zygote (peers/zygote.py): a
`subprocess.Popen` whose child skips the ~2 s of CPU a `deepresearch` interpreter spends importing.

    process = launch.Popen([sys.executable, "-m", "agent", "serve", "--port", "8123"], env=env, ...)

Everything else is Popen's: pipes (text or bytes), `communicate`, `poll`, `wait(timeout)`, `send_signal`,
`terminate`, `kill`, `returncode` (negative for a signal), context manager; `run` is `subprocess.run`.
The child is a real process with its own pid: signals are real signals. Its parent is the zygote, which
reports its exit status to this object. The program must be `python -m MODULE`, `python SCRIPT`,
`python -c CODE` (this interpreter) or a console script of this environment; shell, preexec_fn,
pass_fds, user and group changes are refused.

One zygote per process that uses it (each pytest-xdist worker), started on first use and ended with it.
A process started by the zygote finds it through PEERS_ZYGOTE when its environment has it (the soak bench
run by a test starts its replicas from the same zygote).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ADDRESS_VARIABLE = "PEERS_ZYGOTE"
_START_SECONDS = 120  # the zygote's imports: seconds of CPU, more while parallel workers share the cores

_lock = threading.Lock()
_zygote: subprocess.Popen[bytes] | None = None
_address = ""


def address() -> str:
    """The zygote's socket address: PEERS_ZYGOTE's, else this process's own zygote (started if need be)."""
    global _zygote, _address
    if given := os.environ.get(ADDRESS_VARIABLE):
        return given
    with _lock:
        if _zygote is None or _zygote.poll() is not None:
            _zygote = subprocess.Popen(
                [sys.executable, "-c", "from peers.zygote import serve; serve()"],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            _address = _read_address(_zygote)
        return _address


def _read_address(zygote: subprocess.Popen[bytes]) -> str:
    assert zygote.stdout is not None
    ready, _, _ = select.select([zygote.stdout], [], [], _START_SECONDS)
    line = zygote.stdout.readline().decode().strip() if ready else ""
    if not line:
        zygote.kill()
        zygote.wait(timeout=10)
        raise RuntimeError(f"the zygote did not start in {_START_SECONDS} s (exit {zygote.returncode})")
    return line


def stop() -> None:
    """End this process's zygote (it kills any child still running) and wait for it."""
    global _zygote
    with _lock:
        if _zygote is not None:
            assert _zygote.stdin is not None
            _zygote.stdin.close()
            try:
                _zygote.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _zygote.kill()
                _zygote.wait(timeout=10)
            _zygote = None


def program(args: list[str]) -> tuple[str, str, list[str]]:
    """(kind, target, arguments) of a Python command line: ("module", "agent", ["serve"]) for
    `python -m agent serve`; ("path", script, args) for a script; ("code", code, args) for `-c`."""
    first, *rest = args
    if first != sys.executable:
        try:
            with Path(first).open("rb") as script:
                shebang = script.readline().decode(errors="replace").strip()
        except OSError:
            shebang = ""
        if shebang != f"#!{sys.executable}":
            raise ValueError(f"{first}: neither {sys.executable} nor a script of this environment")
        return "path", first, rest
    if not rest or (rest[0].startswith("-") and rest[0] not in ("-m", "-c")):
        raise ValueError(f"unsupported interpreter arguments: {rest[:1]}")
    if rest[0] in ("-m", "-c"):
        return {"-m": "module", "-c": "code"}[rest[0]], rest[1], rest[2:]
    return "path", rest[0], rest[1:]


class Popen(subprocess.Popen):  # text or bytes, as the caller asks (as subprocess.Popen)
    """subprocess.Popen whose child the zygote forks (see the module's docstring)."""

    _conn: socket.socket | None = None
    _pending = b""

    def _execute_child(
        self,
        args: Any,
        executable: Any,
        preexec_fn: Any,
        close_fds: bool,
        pass_fds: Any,
        cwd: Any,
        env: Any,
        startupinfo: Any,
        creationflags: int,
        shell: bool,
        p2cread: int,
        p2cwrite: int,
        c2pread: int,
        c2pwrite: int,
        errread: int,
        errwrite: int,
        restore_signals: bool,
        gid: Any,
        gids: Any,
        uid: Any,
        umask: int,
        start_new_session: bool,
        process_group: Any,
    ) -> None:
        try:
            if shell or executable or preexec_fn or pass_fds or gid or gids or uid or umask >= 0:
                raise ValueError(
                    "launch.Popen: shell, executable, preexec_fn, pass_fds, users: not supported"
                )
            if process_group not in (None, -1):
                raise ValueError("launch.Popen: process_group is not supported (start_new_session is)")
            kind, target, arguments = program([os.fsdecode(a) for a in args])
            request = {
                "kind": kind,
                "target": target,
                "args": arguments,
                "cwd": os.path.abspath(os.fsdecode(cwd) if cwd is not None else os.getcwd()),
                "env": {
                    os.fsdecode(k): os.fsdecode(v) for k, v in (os.environ if env is None else env).items()
                },
                "new_session": start_new_session,
            }
            stdio = [
                fd if fd != -1 else default for fd, default in ((p2cread, 0), (c2pwrite, 1), (errwrite, 2))
            ]
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                conn.settimeout(30)
                conn.connect("\0" + address())
                socket.send_fds(conn, [json.dumps(request).encode()], stdio)
                answer = conn.recv(4096).decode()
            except BaseException:
                conn.close()
                raise
            if not answer.startswith("pid "):
                conn.close()
                raise OSError(f"the zygote did not start {args!r}: {answer or 'no answer'}")
            self.pid = int(answer.split()[1])
            self._child_created = True
            self._conn = conn
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _status(self, timeout: float | None) -> int | None:
        """The exit status the zygote reports, waiting up to `timeout` seconds (None: until it comes).
        The caller holds _waitpid_lock."""
        if self.returncode is not None or self._conn is None:
            return self.returncode
        ready, _, _ = select.select([self._conn], [], [], timeout)
        if not ready:
            return None
        answer = self._conn.recv(4096).decode()
        self._conn.close()  # the zygote reaps the child now: its pid may be reused from here on
        self._conn = None
        if not answer.startswith("exit "):
            raise OSError(f"the zygote went away while process {self.pid} ran")
        self.returncode = int(answer.split()[1])
        return self.returncode

    def _internal_poll(self, _deadstate: int | None = None, **_: Any) -> int | None:
        if self.returncode is None and self._waitpid_lock.acquire(False):
            try:
                self._status(0)
            except OSError:
                if _deadstate is None:
                    raise
                self.returncode = _deadstate
            finally:
                self._waitpid_lock.release()
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            # as Popen's: one waiter at a time (poll() from another thread meanwhile answers None)
            if self._waitpid_lock.acquire(timeout=-1 if timeout is None else timeout):
                try:
                    self._status(None if deadline is None else max(0.0, deadline - time.monotonic()))
                finally:
                    self._waitpid_lock.release()
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode


def run(
    args: list[str], *, input: Any = None, timeout: float | None = None, check: bool = False, **kwargs: Any
) -> Any:
    """subprocess.run with launch.Popen (same arguments and result)."""
    if kwargs.pop("capture_output", False):
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with Popen(args, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        except BaseException:
            process.kill()
            raise
        code = process.poll()
        if check and code:
            raise subprocess.CalledProcessError(code, process.args, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(process.args, code, stdout, stderr)
