#!/usr/bin/env bash
# The concurrency and process tests, N times in a row (default 20), stopping at the first red run: a flaky
# test is a defect, and one green run of a race proves little. Usage: scripts/soak.sh [RUNS] [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
shift || true
files=(
    tests/test_replicas.py tests/test_replica_faults.py tests/test_agent_protocol_replicas.py
    tests/test_live_server.py tests/test_cli.py tests/test_steering_process.py
    tests/test_api_contract.py tests/test_quotas.py tests/test_durability.py
    tests/test_store_sqlite.py tests/test_store_postgres.py tests/test_cpu_pool.py
)
start=$SECONDS
for i in $(seq 1 "$runs"); do
    if ! .venv/bin/python -m pytest -q -p no:cacheprovider -n 5 --dist worksteal "$@" "${files[@]}"; then
        echo "soak: run $i of $runs failed after $((SECONDS - start)) s"
        exit 1
    fi
    echo "soak: $i of $runs green ($((SECONDS - start)) s)"
done
