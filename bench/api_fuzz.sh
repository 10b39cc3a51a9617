#!/usr/bin/env bash
# Schema-aware fuzzing of the HTTP runner with schemathesis, against a live `deepresearch serve`.
#
#   bash bench/api_fuzz.sh [MAX_SECONDS] [sqlite|postgres-DSN]
#
# schemathesis is installed in its own venv (.cache/fuzz-venv), never into the product's dependencies.
# The server runs the extractive engine with every provider pointed at a closed port on 127.0.0.1, so the
# runs the fuzzer starts fail fast and nothing leaves the machine. Prints schemathesis' summary; exits
# non-zero on any failure (server error, undocumented status, schema violation...).
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_SECONDS="${1:-180}"
DATABASE="${2:-sqlite}"
VENV=.cache/fuzz-venv
if [[ ! -x "$VENV/bin/st" ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q -U pip
    "$VENV/bin/python" -m pip install -q "schemathesis>=4.3,<5"
fi

WORK="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
CLOSED="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
if [[ "$DATABASE" == "sqlite" ]]; then
    DATABASE_URL="sqlite:///$WORK/fuzz.db"
else
    DATABASE_URL="$DATABASE"
fi

# the server requires a token (as off loopback), so the auth checks have something to check; the fuzzer
# sends an admin token, created beforehand with the CLI (its last line)
ENVIRONMENT=(env -i PATH="$PATH" HOME="$WORK" DEEPRESEARCH_DATABASE_URL="$DATABASE_URL"
    DEEPRESEARCH_HOME="$WORK/home" DEEPRESEARCH_REQUIRE_TOKEN=true)
TOKEN="$("${ENVIRONMENT[@]}" .venv/bin/python -m agent token create fuzzer --admin | tail -n 1)"

"${ENVIRONMENT[@]}" \
    DEEPRESEARCH_WORKSPACE_DIR="$WORK/workspace" \
    DEEPRESEARCH_ENGINE=extractive \
    DEEPRESEARCH_SEARCH_PROVIDERS=generic \
    DEEPRESEARCH_WEB_SEARCH_URL="http://127.0.0.1:$CLOSED/search" \
    DEEPRESEARCH_DUCKDUCKGO_ENABLED=false \
    DEEPRESEARCH_SEARCH_TIMEOUT_SECONDS=2 \
    DEEPRESEARCH_SHUTDOWN_GRACE_SECONDS=5 \
    DEEPRESEARCH_LOG_LEVEL=ERROR \
    .venv/bin/python -m agent serve --port "$PORT" >"$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT

for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done

status=0
"$VENV/bin/st" run "http://127.0.0.1:$PORT/openapi.json" \
    --checks all \
    --header "Authorization: Bearer $TOKEN" \
    --max-time "$MAX_SECONDS" \
    --request-timeout 10 \
    --workers 2 \
    --no-color \
    --suppress-health-check all || status=$?

if grep -q "Traceback" "$WORK/server.log"; then
    echo "--- server log (tracebacks) ---"
    grep -B2 -A25 "Traceback" "$WORK/server.log" | head -120
fi
exit $status
