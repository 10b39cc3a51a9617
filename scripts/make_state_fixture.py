"""Write tests/fixtures/state-v1/: a run paused after screen_evidence, as this version of deepresearch
checkpoints it (a SQLite database and the run's workspace folder, gzipped into one tar file).

tests/test_state_versions.py resumes it with the current code: a change of the graph state that cannot read
a checkpoint written before it (a new field without a default, a renamed one) fails that test. Write a new
fixture (state-v2, ...) only when the state changes in a way that must be migrated, and keep the old ones.

    .venv/bin/python scripts/make_state_fixture.py tests/fixtures/state-v1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deepresearch.engine.core import open_engine
from deepresearch.receipts.runtime import CancelSignal
from deepresearch.store import EventRecord
from peers.servers import Servers, scripted_servers

QUESTION = "How do durable workflow checkpoints and SQLite write-ahead logging keep long runs safe?"
PAUSE_AFTER = "screen_evidence"


async def write_fixture(servers: Servers, scratch: Path, out: Path) -> None:
    settings = servers.settings(scratch, llm=True)
    async with open_engine(settings) as engine:
        run = await engine.create_run(QUESTION)
        cancel = CancelSignal(run.run_id, engine.store)

        def pause(event: EventRecord) -> None:
            if event.type == "checkpoint" and event.stage == PAUSE_AFTER:
                cancel.request("paused to write the state fixture")

        paused = await engine.execute(run.run_id, cancel=cancel, on_event=pause)
        if paused.status != "cancelled":
            raise SystemExit(f"the run did not pause: {paused.status} {paused.error}")
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "run.tar.gz", "w:gz") as tar:
        tar.add(scratch / "home" / "deepresearch.db", arcname="deepresearch.db")
        tar.add(scratch / "workspace", arcname="workspace")
    meta = {
        "run_id": run.run_id,
        "question": QUESTION,
        "paused_after": PAUSE_AFTER,
        "llm_calls": dict(servers.llm.calls_by_prompt()),
        "searches": len(servers.search.calls),
    }
    (out / "fixture.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    with scripted_servers() as servers, tempfile.TemporaryDirectory() as scratch:
        asyncio.run(write_fixture(servers, Path(scratch), args.out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
