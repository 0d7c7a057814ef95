#!/usr/bin/env bash
# Build llama-cpp-python once (portable CPU flags) and install it, plus its server extras, into a venv.
#
# Why compile: the package index ships only the source distribution of llama-cpp-python.
# Why these flags: a default build uses -march=native, which turns on ggml's AMX kernels; on these
# machines the first decode then segfaults. GGML_NATIVE=OFF with AVX/AVX2/FMA/F16C/BMI2 runs on any
# x86-64 CPU of the last decade. Why --no-cache-dir: pip's own wheel cache ignores CMAKE_ARGS and
# would happily hand back a native (crashing) wheel. The wheel's cache folder is named after the
# flags, so a change of flags builds a new one.
# The built wheel is kept in the scievals cache, so later runs install it in seconds.
#
# Usage: scripts/build_llama.sh [PYTHON]   (default: .venv/bin/python of this repo)
set -euo pipefail

VERSION=0.3.36
# The x86 extensions are switched on only where this CPU has them (AMX and AVX-512 never are).
CMAKE_ARGS="-DGGML_NATIVE=OFF"
if [[ "$(uname -m)" == x86_64 ]]; then
    for ext in AVX AVX2 FMA F16C BMI2; do
        if grep -qw "${ext,,}" /proc/cpuinfo; then CMAKE_ARGS+=" -DGGML_$ext=ON"; fi
    done
fi
CMAKE_ARGS+=" -DLLAVA_BUILD=OFF"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${1:-$REPO/.venv/bin/python}"
CACHE="${SCIEVALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scievals}"
FLAGS_ID="$(printf '%s' "$CMAKE_ARGS" | sha256sum | cut -c1-8)"
WHEELS="$CACHE/wheels/llama-cpp-python-$VERSION-portable-$FLAGS_ID"

say() { printf '[build_llama] %s\n' "$*" >&2; }

if "$PYTHON" - "$VERSION" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
import fastapi, uvicorn, sse_starlette, pydantic_settings, starlette_context  # noqa: F401  server extras
sys.exit(0 if version("llama-cpp-python") == sys.argv[1] else 1)
PY
    say "llama-cpp-python $VERSION with server extras is already installed"
    exit 0
fi

mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
    say "compiling llama-cpp-python $VERSION with portable CPU flags (once; 6-9 minutes on 2 cores)"
    say "wheel goes to $WHEELS"
    tmp="$(mktemp -d "$WHEELS/.build.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    CMAKE_ARGS="$CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
        "$PYTHON" -m pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python \
        --wheel-dir "$tmp" "llama-cpp-python==$VERSION"
    mv "$tmp"/llama_cpp_python-"$VERSION"-*.whl "$WHEELS"/
else
    say "reusing the built wheel in $WHEELS"
fi

say "installing llama-cpp-python[server]==$VERSION from the built wheel"
"$PYTHON" -m pip install --quiet --find-links "$WHEELS" --only-binary llama-cpp-python \
    "llama-cpp-python[server]==$VERSION"
say "done"
