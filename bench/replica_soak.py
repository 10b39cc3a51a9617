"""Soak: two `deepresearch serve` replicas on one database; the one executing a run is killed with SIGKILL
at a random moment, again and again; the other takes it over. Prints runs, kills, takeovers, takeover
times and the calls the scripted peers saw twice.

    .venv/bin/python bench/replica_soak.py [--kills 100] [--database sqlite|postgresql://...] [--seed 1]

Everything runs on 127.0.0.1: the scripted model, search and web servers (peers/) count every
request. A completed call must never be made twice; a call in flight at the moment of a kill may be made
again once (its receipt says `started`), so a request seen twice right after a kill is counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from peers import free_port, launch, serve_app  # noqa: E402
from peers.openai_server import make_openai_server  # noqa: E402
from peers.research_llm import ResearchResponder  # noqa: E402
from peers.search_server import make_search_server  # noqa: E402
from peers.servers import Servers, server_env  # noqa: E402
from peers.static_site import make_static_site  # noqa: E402


class Replica:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        # forked from a pre-imported zygote when a test gives one (peers/launch.py), else a new interpreter
        start = launch.Popen if os.environ.get(launch.ADDRESS_VARIABLE) else subprocess.Popen
        self.process = start(
            [sys.executable, "-m", "agent", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"replica on {self.port} did not start (see {log})")
            time.sleep(0.1)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def run_once(
    replicas: list[Replica], index: int, rng: random.Random, env: dict[str, str], log: Path
) -> dict[str, Any]:
    """One run, one kill of whichever replica executes it at a random moment; the survivor finishes it."""
    client = httpx.Client(base_url=replicas[0].url, timeout=30)
    question = f"How do durable checkpoints keep long research runs safe? (soak run {index})"
    run_id = client.post("/api/runs", json={"question": question}).json()["run_id"]
    time.sleep(rng.uniform(0.2, 4.0))  # mid-fan-out, mid-LLM call, mid-write: wherever it is
    run = client.get(f"/api/runs/{run_id}").json()
    result: dict[str, Any] = {"run_id": run_id, "killed": False, "takeover_s": None}
    owner = run["lease_owner"] or ""
    victim = next((r for r in replicas if f":{r.process.pid}:" in owner), None)
    if run["status"] in ("queued", "running") and victim is not None:
        victim.kill()
        killed_at = time.monotonic()
        result["killed"] = True
        survivor = next(r for r in replicas if r is not victim)
        client = httpx.Client(base_url=survivor.url, timeout=30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = client.get(f"/api/runs/{run_id}").json()
            if now["status"] not in ("queued", "running") or (
                now["lease_owner"] and f":{victim.process.pid}:" not in now["lease_owner"]
            ):
                result["takeover_s"] = time.monotonic() - killed_at
                break
            time.sleep(0.05)
        replicas[replicas.index(victim)] = Replica(env, log)  # always two
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        final = client.get(f"/api/runs/{run_id}").json()
        if final["status"] not in ("queued", "running"):
            break
        time.sleep(0.1)
    events = client.get(f"/api/runs/{run_id}/events", params={"after": 0}).text
    seqs = [int(line[4:]) for line in events.splitlines() if line.startswith("id: ")]
    result |= {
        "status": final["status"],
        "report": client.get(f"/api/runs/{run_id}/report").status_code == 200,
        "events_in_order": seqs == list(range(1, len(seqs) + 1)),
        "checkpoints": len(client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]),
    }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--database", default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    site = make_static_site(slow_delay=0.5)
    llm = make_openai_server()
    llm.responder = ResearchResponder()
    llm.latency = 0.2  # each model call takes a while: kills land mid-call too
    with tempfile.TemporaryDirectory() as tmp, serve_app(site.app) as site_url:
        search = make_search_server(site_base_url=site_url)
        with serve_app(search.app) as search_url, serve_app(llm) as llm_url:
            servers = Servers(site, site_url, search, search_url, llm, llm_url, llm.responder)
            database = f"sqlite:///{tmp}/soak.db" if args.database == "sqlite" else args.database
            env = server_env(
                servers,
                Path(tmp),
                DEEPRESEARCH_DATABASE_URL=database,
                DEEPRESEARCH_TAKEOVER_SCAN_SECONDS="0.5",
                DEEPRESEARCH_STAGE_DELAY_SECONDS="0.3",
            )
            log = Path(tmp) / "replicas.log"
            replicas = [Replica(env, log), Replica(env, log)]
            results = []
            try:
                index = 0
                while sum(r["killed"] for r in results) < args.kills and index < args.kills * 3:
                    results.append(run_once(replicas, index, rng, env, log))
                    index += 1
            finally:
                for replica in replicas:
                    replica.stop()
            calls = Counter(json.dumps(body.get("messages"), sort_keys=True) for body in llm.calls)
            searches = Counter(search.calls)
    kills = [r for r in results if r["killed"]]
    takeovers = [r["takeover_s"] for r in kills if r["takeover_s"] is not None]
    twice = sum(1 for n in calls.values() if n == 2) + sum(1 for n in searches.values() if n == 2)
    more = sum(1 for n in calls.values() if n > 2) + sum(1 for n in searches.values() if n > 2)
    summary = {
        "runs": len(results),
        "kills": len(kills),
        "takeovers": len(takeovers),
        "completed": sum(r["status"] == "completed" and r["report"] for r in results),
        "events_in_order": sum(r["events_in_order"] for r in results),
        "calls_seen_twice (in flight at a kill)": twice,
        "calls_seen_more_than_twice": more,
        "takeover_s_median": round(statistics.median(takeovers), 2) if takeovers else None,
        "takeover_s_max": round(max(takeovers), 2) if takeovers else None,
        "database": args.database.split("://")[0],
    }
    print(json.dumps(summary, indent=2))
    ok = summary["completed"] == summary["runs"] == summary["events_in_order"] and more == 0
    ok = ok and twice <= len(kills)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
