"""peers/launch.py: a process forked from the pre-imported zygote behaves as one `subprocess` starts - the
same output, exit status, environment, directory and signals - for the programs the tests start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from peers import launch

# what a program sees of its process: compared between a new interpreter and a forked one
PROBE = """
import json, os, signal, sys, threading
print(json.dumps({
    "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "path0": sys.path[0],
    "ppid_alive": os.getppid() > 1, "threads": threading.active_count(),
    "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
    "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    "sigpipe": signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN,
    "stdout": [sys.stdout.encoding, sys.stdout.errors, sys.stdout.line_buffering],
    "stderr": [sys.stderr.encoding, sys.stderr.errors, sys.stderr.line_buffering],
    "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    "ignored": [line for line in open("/proc/self/status") if line.startswith("SigIgn")],
    "stdin": sys.stdin.read(),
}))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def _both(args: list[str], **kwargs: object) -> list[subprocess.CompletedProcess[str]]:
    return [
        start(args, capture_output=True, text=True, timeout=60, **kwargs)
        for start in (subprocess.run, launch.run)
    ]  # type: ignore[operator]


def test_a_forked_program_sees_what_a_new_interpreter_sees(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "ONLY_THIS": "1", "PYTHONIOENCODING": "utf-8"}
    fresh, forked = _both([sys.executable, "-c", PROBE, "7"], env=env, cwd=tmp_path, input="in")
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert fresh.returncode == 7 and '"ONLY_THIS": "1"' in fresh.stdout and '"stdin": "in"' in fresh.stdout
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    fresh, forked = _both([sys.executable, str(script), "0"], env=env, cwd=tmp_path)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout) and fresh.returncode == 0


def test_the_cli_module_and_its_console_script_answer_as_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("deepresearch")
    for prefix in ([sys.executable, "-m", "agent"], [str(script)] if script.is_file() else []):
        if prefix:
            fresh, forked = _both([*prefix, "serve", "--port", "0"], cwd=tmp_path)
            assert fresh.returncode == forked.returncode == 2
            assert fresh.stderr == forked.stderr and "not a port" in forked.stderr


def test_signals_and_exit_statuses_are_real() -> None:
    sleeper = [sys.executable, "-c", "import sys, time; print('up', flush=True); time.sleep(60)"]
    for sig, expected in ((signal.SIGTERM, -15), (signal.SIGKILL, -9), (signal.SIGINT, -2)):
        with launch.Popen(sleeper, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            assert process.stdout is not None and process.stdout.readline() == b"up\n"
            assert process.poll() is None and Path(f"/proc/{process.pid}").is_dir()
            with pytest.raises(subprocess.TimeoutExpired):
                process.wait(timeout=0.2)
            # what the child does with the signal, for the message if it does not die of it (seen once in a
            # full parallel run: the sleeper slept its whole minute and exited 0)
            masks = [
                line
                for line in Path(f"/proc/{process.pid}/status").read_text().splitlines()
                if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt"))
            ]
            process.send_signal(sig)
            try:
                status = process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{sig.name} did not end the child within 10 s; before it was sent: {masks}")
            assert status == expected
            # an uncaught KeyboardInterrupt: its traceback, then death by SIGINT, as the interpreter does
            assert process.stderr is not None
            assert (b"KeyboardInterrupt" in process.stderr.read()) == (expected == -2)
    # the status stays readable, and a signal to the ended process goes nowhere
    process.kill()
    assert process.poll() == process.returncode == -2


def test_a_stopped_zygote_leaves_no_process_behind(tmp_path: Path) -> None:
    """The zygote kills its children when the worker that started it goes (here: stops it)."""
    child = launch.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    launch.stop()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child.pid}").is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child.pid}").is_dir()
    # a new one starts on the next use
    assert launch.run([sys.executable, "-c", "pass"], timeout=60).returncode == 0


def test_what_it_cannot_start_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="neither"):
        launch.Popen(["/bin/true"])
    with pytest.raises(ValueError, match="not supported"):
        launch.Popen([sys.executable, "-c", "pass"], preexec_fn=os.getpid)
