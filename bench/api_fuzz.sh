#!/usr/bin/env bash
# Schema-aware fuzzing of the HTTP runner with schemathesis (`--checks all`), against a live
# `deepresearch serve` on 127.0.0.1 (docs/security.md, "Fuzzing the API").
#
#   bash bench/api_fuzz.sh [MAX_SECONDS] [sqlite|postgres-DSN] [loopback|token|both]
#
#   loopback  a default loopback server: no token required, the fuzzer sends none (the local owner)
#   token     DEEPRESEARCH_REQUIRE_TOKEN=true; the fuzzer sends an admin token made with the CLI, and the
#             auth checks (ST401) probe the same requests without it and with a wrong one
#   both      (default) one after the other, MAX_SECONDS each
#
# schemathesis lives in its own venv (SCHEMATHESIS_VENV, default ~/.cache/deepresearch-tools/
# schemathesis-venv), never in the product's dependencies; PYTHON is the interpreter with the project
# installed (default .venv/bin/python). The server runs the extractive engine with every provider pointed at
# a closed port on 127.0.0.1, so the runs the fuzzer starts fail fast and nothing leaves the machine. Prints
# schemathesis' summary for each mode; exits non-zero on any failure (server error, undocumented status,
# schema violation, auth not enforced...) or a traceback in the server's log.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

MAX_SECONDS="${1:-180}"
DATABASE="${2:-sqlite}"
MODES="${3:-both}"
[[ "$MODES" == "both" ]] && MODES="loopback token"
PYTHON="${PYTHON:-.venv/bin/python}"
VENV="${SCHEMATHESIS_VENV:-$HOME/.cache/deepresearch-tools/schemathesis-venv}"
if [[ ! -x "$VENV/bin/schemathesis" ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q -U pip
    "$VENV/bin/python" -m pip install -q "schemathesis>=4.32,<5"
fi

free_port() {
    "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

fuzz() {
    local mode="$1" work port closed database_url token status=0
    work="$(mktemp -d)"
    port="$(free_port)"
    closed="$(free_port)"
    if [[ "$DATABASE" == "sqlite" ]]; then
        database_url="sqlite:///$work/fuzz.db"
    else
        database_url="$DATABASE"
    fi
    local environment=(env -i PATH="$PATH" HOME="$work" DEEPRESEARCH_DATABASE_URL="$database_url"
        DEEPRESEARCH_HOME="$work/home")
    local auth=()
    if [[ "$mode" == "token" ]]; then
        environment+=(DEEPRESEARCH_REQUIRE_TOKEN=true)
        token="$("${environment[@]}" "$PYTHON" -m agent token create fuzzer --admin | tail -n 1)"
        auth=(--header "Authorization: Bearer $token")
    fi
    "${environment[@]}" \
        DEEPRESEARCH_WORKSPACE_DIR="$work/workspace" \
        DEEPRESEARCH_ENGINE=extractive \
        DEEPRESEARCH_SEARCH_PROVIDERS=generic \
        DEEPRESEARCH_WEB_SEARCH_URL="http://127.0.0.1:$closed/search" \
        DEEPRESEARCH_DUCKDUCKGO_ENABLED=false \
        DEEPRESEARCH_SEARCH_TIMEOUT_SECONDS=2 \
        DEEPRESEARCH_SHUTDOWN_GRACE_SECONDS=5 \
        DEEPRESEARCH_LOG_LEVEL=ERROR \
        "$PYTHON" -m agent serve --port "$port" >"$work/server.log" 2>&1 &
    local server=$!
    for _ in $(seq 1 100); do
        curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "=== schemathesis --checks all: $mode server ($DATABASE, ${MAX_SECONDS}s) ==="
    # one worker: schemathesis' generator parses lambdas with `ast` from several threads at once, which
    # CPython 3.11 up to 3.11.7 can fail with "AST constructor recursion depth mismatch" (a fuzzer error)
    # run in the temporary folder: schemathesis keeps its crash cache (.schemathesis/) where it runs
    (cd "$work" && "$VENV/bin/schemathesis" --config-file "$root/bench/schemathesis.toml" \
        run "http://127.0.0.1:$port/openapi.json" \
        --checks all \
        "${auth[@]}" \
        --max-time "$MAX_SECONDS" \
        --request-timeout 10 \
        --workers 1 \
        --no-color \
        --suppress-health-check all) || status=$?
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    if grep -q "Traceback" "$work/server.log"; then
        echo "--- server log (tracebacks) ---"
        grep -B2 -A25 "Traceback" "$work/server.log" | head -120
        status=1
    fi
    rm -rf "$work"
    return $status
}

overall=0
for mode in $MODES; do
    fuzz "$mode" || overall=$?
done
exit $overall
