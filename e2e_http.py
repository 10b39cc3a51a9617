"""End-to-end check of a live runner over HTTP: start → stream → cancel → preview → resume → report.

    LONG_TASK_E2E_BASE_URL=http://127.0.0.1:8000 python e2e_http.py     (or DEEPRESEARCH_BASE_URL)

Start a run and stream it; after two `checkpoint` events cancel it and wait for `cancelled`; preview the
latest checkpoint; resume the same run while streaming; assert the completed stages were skipped and the
report was written; list the checkpoints (the count grew, none has an empty stage or status). Prints a JSON
summary and exits non-zero on any failure. Set DEEPRESEARCH_STAGE_DELAY_SECONDS on the server so there is
time to cancel.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx

DEFAULT_QUESTION = "How do durable workflow checkpoints keep long-running jobs from repeating work?"


class E2EFailure(Exception):
    pass


def sse_events(client: httpx.Client, run_id: str, after: int, deadline: float) -> Iterator[dict[str, Any]]:
    """The run's events after `after`, until the server closes the stream or the deadline passes."""
    headers = {"Last-Event-ID": str(after)}
    remaining = max(deadline - time.monotonic(), 1.0)
    with client.stream(
        "GET", f"/api/runs/{run_id}/events", headers=headers, timeout=httpx.Timeout(remaining, read=remaining)
    ) as response:
        if response.status_code != 200:
            raise E2EFailure(f"events stream answered HTTP {response.status_code}")
        data: list[str] = []
        for line in response.iter_lines():
            if time.monotonic() > deadline:
                raise E2EFailure("timed out while streaming events")
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                yield json.loads("\n".join(data))
                data = []


def check(condition: bool, message: str) -> None:
    if not condition:
        raise E2EFailure(message)


def run_e2e(base_url: str, question: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=base_url, timeout=30, trust_env=False) as client:
        ready = client.get("/readyz")
        check(ready.status_code == 200, f"/readyz answered {ready.status_code}: {ready.text}")
        created = client.post("/api/runs", json={"question": question})
        check(created.status_code == 201, f"POST /api/runs answered {created.status_code}: {created.text}")
        run_id = created.json()["run_id"]

        # 1. stream until two checkpoints, then cancel (first) and keep listening until `cancelled`
        last_seq, checkpoints_seen, cancelled_sent, final_status = 0, [], False, None
        for event in sse_events(client, run_id, 0, deadline):
            last_seq = event["seq"]
            # every `checkpoint` event is a business safety point (LangGraph's own are `graph_checkpoint`)
            if event["type"] == "checkpoint":
                checkpoints_seen.append(event["stage"])
                if len(checkpoints_seen) >= 2 and not cancelled_sent:
                    # body-less, as curl would send it: a client that is not a browser needs no JSON body
                    response = client.post(f"/api/runs/{run_id}/cancel")
                    check(response.status_code == 202, f"cancel answered {response.status_code}")
                    cancelled_sent = True
            if event["type"] == "end":
                final_status = event["status"]
                break
        check(cancelled_sent, f"the run ended before two checkpoints ({checkpoints_seen})")
        check(final_status == "cancelled", f"expected the run to stop as cancelled, got {final_status}")
        run = client.get(f"/api/runs/{run_id}").json()
        for _ in range(100):
            if run["status"] == "cancelled":
                break
            time.sleep(0.1)
            run = client.get(f"/api/runs/{run_id}").json()
        check(run["status"] == "cancelled", f"run status is {run['status']}, expected cancelled")

        # 2. preview the latest checkpoint
        before = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
        check(len(before) >= 2, "fewer than two checkpoints were indexed")
        latest = before[-1]
        preview = client.get(f"/api/runs/{run_id}/checkpoints/{latest['checkpoint_id']}/preview").json()
        skipped = preview["skipped_stages"]

        # 3. resume the same run while streaming
        resumed = client.post(f"/api/runs/{run_id}/resume")
        check(resumed.status_code == 202, f"resume answered {resumed.status_code}: {resumed.text}")
        check(resumed.json()["run_id"] == run_id, "resume changed the run id")
        started_after_resume: list[str] = []
        final_status = None
        for event in sse_events(client, run_id, last_seq, deadline):
            if event["type"] == "tool_call" and event.get("title"):
                started_after_resume.append(event["stage"])
            if event["type"] == "end":
                final_status = event["status"]
                break
        check(final_status == "completed", f"the resumed run ended as {final_status}")
        repeated = sorted(set(started_after_resume) & set(skipped))
        check(not repeated, f"completed stages ran again after resume: {repeated}")
        artifacts = {a["path"] for a in client.get(f"/api/runs/{run_id}/artifacts").json()["artifacts"]}
        check("deepresearch-report.md" in artifacts, "deepresearch-report.md was not written")

        # 4. the checkpoint index grew, and every entry has a stage and a status
        after = client.get(f"/api/runs/{run_id}/checkpoints").json()["checkpoints"]
        check(len(after) > len(before), "the checkpoint count did not grow after resume")
        check(all(c["stage"] and c["status"] for c in after), "a checkpoint has an empty stage or status")
        detail = client.get(f"/api/runs/{run_id}").json()
        return {
            "ok": True,
            "base_url": base_url,
            "run_id": run_id,
            "checkpoints_before_cancel": checkpoints_seen,
            "skipped_on_resume": skipped,
            "stages_run_after_resume": started_after_resume,
            "checkpoints": len(after),
            "receipts_reused": detail["usage"].get("reused_calls", 0),
            "report": f"/api/runs/{run_id}/report",
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url",
        default=os.environ.get("LONG_TASK_E2E_BASE_URL")
        or os.environ.get("DEEPRESEARCH_BASE_URL")
        or "http://127.0.0.1:8000",
    )
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--timeout", type=float, default=600.0, help="overall limit in seconds")
    args = parser.parse_args(argv)
    try:
        summary = run_e2e(args.base_url.rstrip("/"), args.question, args.timeout)
    except (E2EFailure, httpx.HTTPError, json.JSONDecodeError, KeyError) as exc:
        print(json.dumps({"ok": False, "base_url": args.base_url, "error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
