"""Where a real `deepresearch serve` spends a batch of runs: CPU per thread (from /proc), and optionally a
py-spy profile of the whole process, against `python -m bench`'s peers on 127.0.0.1. docs/profile.md's
"Second pass" figures come from this.

    .venv/bin/python bench/profile_server.py --runs 10                  # wall and CPU per thread, twice
    .venv/bin/python bench/profile_server.py --runs 10 --env DEEPRESEARCH_CPU_WORKERS=2
    .venv/bin/python bench/profile_server.py --runs 50 --py-spy /work/.cache/profvenv/bin/py-spy \\
        --out /tmp/batch.txt                                            # raw stacks (py-spy record -f raw)

py-spy is never a product dependency: install it in a venv of its own (docs/profile.md). Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import batch, cpu_seconds, live_server, server_env
from bench.peers import peers_process


def thread_cpu(pid: int) -> dict[str, float]:
    """User and system CPU seconds of the process's main thread and of all its other threads together."""
    tick = os.sysconf("SC_CLK_TCK")
    totals = {"loop user": 0.0, "loop system": 0.0, "other threads user": 0.0, "other threads system": 0.0}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
        who = "loop" if task.name == str(pid) else "other threads"
        totals[f"{who} user"] += int(fields[11]) / tick
        totals[f"{who} system"] += int(fields[12]) / tick
    return totals


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--runs", type=int, default=10, help="runs started at once per batch")
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--py-spy", help="path of a py-spy executable: record the first batch")
    parser.add_argument("--out", default="profile-raw.txt", help="where py-spy writes its raw stacks")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.env)
    with peers_process() as peers, tempfile.TemporaryDirectory(prefix="deepresearch-profile-") as tmp:
        home = Path(tmp)
        (home / "db").mkdir()
        env = server_env(peers, home, f"sqlite:///{home / 'db' / 'profile.db'}", **extra)
        with live_server(env, home / "serve.log") as server:
            asyncio.run(batch(server.url, 1, None, tag="warm-up"))
            for number in range(args.batches):
                spy = None
                if args.py_spy and number == 0:
                    command = [args.py_spy, "record", "--pid", str(server.pid), "--rate", "100"]
                    command += ["--threads", "-f", "raw", "-o", args.out]
                    spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(1.5)  # attached before the batch starts
                before, whole = thread_cpu(server.pid), cpu_seconds(server.pid)
                harness = resource.getrusage(resource.RUSAGE_SELF)
                started = time.time()
                asyncio.run(batch(server.url, args.runs, None, tag=f"batch {number}"))
                wall = time.time() - started
                after, used = thread_cpu(server.pid), cpu_seconds(server.pid) - whole
                mine = resource.getrusage(resource.RUSAGE_SELF)
                spent = {k: round(after[k] - before[k], 2) for k in after}
                print(
                    f"batch {number}: {args.runs} runs in {wall:.2f} s; server and its CPU workers "
                    f"{used:.2f} s of CPU ({used / args.runs:.3f} s per run); {spent}; harness "
                    f"{mine.ru_utime + mine.ru_stime - harness.ru_utime - harness.ru_stime:.2f} s"
                )
                if spy is not None:
                    spy.send_signal(2)  # SIGINT: py-spy writes its file and exits
                    spy.wait(timeout=60)
                    print(f"py-spy stacks: {args.out} (py-spy slows the server: do not read its wall time)")


if __name__ == "__main__":
    main()
