#!/usr/bin/env bash
# Build the pinned scoring runtime once and report the isolation mode this host gives.
# No OS packages are needed: isolation uses the kernel's namespaces directly (unshare(2)).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" -c 'import argparse, sys
from scievals.sandbox import cli
p = argparse.ArgumentParser(); cli.register({"root": p.add_subparsers()})
for args in (["sandbox", "setup"], ["sandbox", "status"]):
    ns = p.parse_args(args)
    if ns.func(ns):
        sys.exit(1)'
