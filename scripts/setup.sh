#!/usr/bin/env bash
# Set up scievals on a fresh machine, idempotently; with --run, then run the main job.
#
#   scripts/setup.sh                 # venv, package, llama.cpp runtime, model files
#   scripts/setup.sh --run [ARGS]    # ... then: scievals run ARGS
#
# Slow work happens once and is reused: the llama-cpp-python wheel is compiled once into the
# scievals cache (scripts/build_llama.sh), model files are fetched once and verified by sha256,
# and the editable install is redone only when pyproject.toml changes.
# Environment: PYTHON (interpreter for the venv, default python3), SCIEVALS_CACHE (cache root).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
VENV="$REPO/.venv"
PY="$VENV/bin/python"
START=$SECONDS

say() { printf '[setup %4ds] %s\n' "$((SECONDS - START))" "$*" >&2; }

RUN=0
if [[ "${1:-}" == "--run" ]]; then
    RUN=1
    shift
fi

# 1. Virtual environment.
if [[ -x "$PY" ]]; then
    say "using the virtual environment $VENV"
else
    say "creating the virtual environment $VENV"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
"$PY" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"scievals needs Python 3.11 or newer, the venv has {sys.version.split()[0]}")
PY

# 2. scievals itself with its pinned dependencies (redone only when pyproject.toml changes).
STAMP="$VENV/.scievals-installed"
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
    say "scievals and its dependencies are installed"
else
    say "installing scievals and its pinned dependencies (pip install -e '.[dev]')"
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet -e '.[dev]'
    echo "$WANT" > "$STAMP"
fi

# 3. The llama.cpp runtime: compiled once (6-9 minutes on 2 cores), then installed in seconds.
say "llama-cpp-python runtime"
"$REPO/scripts/build_llama.sh" "$PY"

# 4. Local model files, fetched once and verified by sha256.
say "model files: smollm2-135m (smoke runs, tests) and qwen2.5-coder-0.5b (the default)"
"$VENV/bin/scievals" models fetch smollm2-135m qwen2.5-coder-0.5b >/dev/null

# 5. Benchmark runtime and data: the pinned scoring runtime (built once, separate from this venv),
#    SciCode problem files (verified), the SciCode dev targets (regenerated from gold code once),
#    and tiktoken's encoding file (so Inspect's mockllm and token counts work offline).
say "scoring runtime, SciCode problem files and dev targets (first time: a few minutes)"
"$VENV/bin/scievals" data prepare
"$PY" -c 'from scievals.offline import seed_tiktoken; seed_tiktoken()'

say "ready"
if [[ "$RUN" == 1 ]]; then
    # The work area keeps a SciBench copy beside the checkout; elsewhere SCIEVALS_SCIBENCH_DIR
    # names one, or SciBench is fetched from its public sources where the network allows.
    SHARED_SCIBENCH="$REPO/../shared/data/scibench/main"
    if [[ -z "${SCIEVALS_SCIBENCH_DIR:-}" && -d "$SHARED_SCIBENCH/dataset" ]]; then
        export SCIEVALS_SCIBENCH_DIR="$(cd "$SHARED_SCIBENCH" && pwd)"
        say "SciBench data: $SCIEVALS_SCIBENCH_DIR"
    fi
    say "running: scievals run $*"
    exec "$VENV/bin/scievals" run "$@"
fi
