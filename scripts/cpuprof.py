"""A pytest plugin that records each test's CPU seconds (a profiling aid, not part of the suite).

    .venv/bin/python -m pytest -p scripts.cpuprof -p no:cacheprovider -n 2 tests/test_x.py
    .venv/bin/python scripts/cpuprof.py /tmp/cpuprof   # the table

Per test (setup + call + teardown) it writes one JSON line to $CPUPROF_DIR (default /tmp/cpuprof):
`self` (the worker process: the test, in-process servers, their threads), `children` (processes the worker
reaped: CLI runs, live servers, pg_ctl/initdb), `tree` (processes still alive under the worker at either end,
e.g. the browser, counted by /proc/<pid>/stat deltas) and `pg` (this worker's PostgreSQL cluster: the
daemonized postmaster with the backends it reaped). CPU, not wall time: other sessions share the machine.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

_TICK = os.sysconf("SC_CLK_TCK")
_OUT = Path(os.environ.get("CPUPROF_DIR", "/tmp/cpuprof"))


def _stat(pid: str) -> tuple[int, float, str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw.rpartition(")")[2].split()
    # fields[0] is state (stat field 3): utime is field 14, so fields[11]; cutime/cstime 13, 14
    cpu = sum(int(f) for f in fields[11:15]) / _TICK
    return int(fields[1]), cpu, name


def _snapshot() -> dict[str, tuple[float, str]]:
    """CPU (own + reaped children) of every live descendant of this process and of postmasters whose
    data dir is this worker's (found by the postgres processes' ancestry to init and cmdline)."""
    me = os.getpid()
    table: dict[str, tuple[int, float, str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(entry)) is not None:
            table[entry] = st
    parents = {pid: st[0] for pid, st in table.items()}
    out: dict[str, tuple[float, str]] = {}
    for pid, (_, cpu, name) in table.items():
        p, hops = parents.get(pid), 0
        while p and p != me and hops < 50:
            p, hops = parents.get(str(p)), hops + 1
        if p == me:
            out[pid] = (cpu, name)
    return out


_PG_PIDS: set[str] = set()


def _postmasters() -> dict[str, float]:
    out: dict[str, float] = {}
    for data in Path("/tmp").glob("deepresearch-pg-*/data/postmaster.pid"):
        try:
            pid = data.read_text().split()[0]
            marker = json.loads((data.parent.parent / "owner.json").read_text())
        except (OSError, ValueError, IndexError):
            continue
        if int(marker.get("pid", -1)) == os.getpid() and (st := _stat(pid)) is not None:
            out[pid] = st[1]
    return out


def _usage() -> tuple[float, float]:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    s0, c0 = _usage()
    t0, pg0 = _snapshot(), _postmasters()
    w0 = time.monotonic()
    yield
    s1, c1 = _usage()
    t1, pg1 = _snapshot(), _postmasters()
    tree = 0.0
    names: dict[str, float] = defaultdict(float)
    for pid, (cpu, name) in t1.items():
        d = cpu - t0.get(pid, (0.0, ""))[0]
        if d > 0:
            tree += d
            names[name] += d
    pg = sum(v - pg0.get(pid, 0.0) for pid, v in pg1.items())
    _OUT.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    rec = {
        "test": item.nodeid,
        "self": round(s1 - s0, 3),
        "children": round(c1 - c0, 3),
        "tree": round(tree, 3),
        "tree_names": {k: round(v, 2) for k, v in names.items()},
        "pg": round(pg, 3),
        "wall": round(time.monotonic() - w0, 3),
    }
    with (_OUT / f"{worker}-{os.getpid()}.jsonl").open("a") as fh:
        fh.write(json.dumps(rec) + "\n")


def _report(folder: Path) -> None:
    rows = [json.loads(line) for f in folder.glob("*.jsonl") for line in f.read_text().splitlines()]
    for r in rows:
        r["total"] = r["self"] + r["children"] + r["tree"] + r["pg"]
    keys = ("self", "children", "tree", "pg", "total", "wall")
    sums = {k: sum(r[k] for r in rows) for k in keys}
    print(f"{len(rows)} tests; " + ", ".join(f"{k} {v:.1f}" for k, v in sums.items()))
    by_file: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        f = r["test"].split("::")[0]
        for k in keys:
            by_file[f][k] += r[k]
        by_file[f]["n"] += 1
    print("\nby file (CPU s):")
    for f, v in sorted(by_file.items(), key=lambda kv: -kv[1]["total"]):
        print(
            f"{v['total']:7.1f}  self {v['self']:6.1f} child {v['children']:6.1f} tree {v['tree']:6.1f} "
            f"pg {v['pg']:5.1f} wall {v['wall']:6.1f} n={int(v['n']):3d}  {f}"
        )
    print("\ntop tests (CPU s):")
    for r in sorted(rows, key=lambda r: -r["total"])[:40]:
        print(
            f"{r['total']:6.1f}  self {r['self']:5.1f} child {r['children']:5.1f} tree {r['tree']:5.1f} "
            f"pg {r['pg']:4.1f} wall {r['wall']:5.1f}  {r['test']}"
        )
    names: dict[str, float] = defaultdict(float)
    for r in rows:
        for k, v in r["tree_names"].items():
            names[k] += v
    print("\nlive-descendant CPU by process name:", dict(sorted(names.items(), key=lambda kv: -kv[1])[:12]))


if __name__ == "__main__":
    _report(Path(sys.argv[1] if len(sys.argv) > 1 else _OUT))
