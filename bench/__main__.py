"""python -m bench [--quick] [--peer] [--out PATH] [--docs-plots]

--quick   SQLite only, one run and 10 at once, database, extraction, resume, cancel, fan-out (< 2 min)
(none)    full mode: also PostgreSQL (a throwaway cluster; skipped with a message without binaries),
          50 and 200 runs at once, and the run-size series behind the plots
--peer    the same research graph on LangGraph's own server (`langgraph dev`), side by side with ours
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the quick subset (under 2 minutes on 2 cores)")
    parser.add_argument("--peer", action="store_true", help="also run LangGraph's server side by side")
    parser.add_argument("--peer-only", action="store_true", help="only the LangGraph server comparison")
    parser.add_argument("--out", type=Path, help="JSON results (default: bench/results/<mode>-<time>.json)")
    parser.add_argument("--plots", type=Path, help="folder for the PNG plots (default: next to the JSON)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    logging.getLogger("bench").setLevel(logging.INFO)  # progress; the clients' request logs stay quiet
    sys.path.insert(0, str(ROOT))
    from bench import report, suite

    if args.peer_only:
        results = {"mode": "peer", "machine": suite.machine(), "skipped": []}
    else:
        results = suite.run(suite.QUICK if args.quick else suite.FULL)
    if args.peer or args.peer_only:
        from bench import langgraph_peer

        results["peer"] = langgraph_peer.compare(quick=args.quick)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.out or ROOT / "bench" / "results" / f"{results['mode']}-{stamp}.json"
    report.write_json(results, out)
    written = report.plots(results, args.plots or out.parent)
    print(report.table(results))
    for line in results.get("skipped", []):
        print(f"skipped: {line}")
    print(f"results: {out}")
    for path in written:
        print(f"plot: {path}")
    if not written and (results.get("concurrency") or results.get("sizes")):
        print(f"plots skipped: matplotlib is not installed ({report.PLOTS_HINT})")
    print(json.dumps({"bench_seconds": results.get("bench_seconds")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
