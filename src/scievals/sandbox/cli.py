"""``scievals sandbox setup`` and ``scievals sandbox status``."""

from __future__ import annotations

import argparse
import json


def _setup(ns: argparse.Namespace) -> int:
    from scievals.sandbox import describe
    from scievals.sandbox.engine import engine

    eng = engine()  # builds the runtime if needed, probes the isolation mode
    hello = eng.ensure_started()
    print(f"runtime: {eng.runtime.root}")
    print(
        f"python {hello['python']}; " + ", ".join(f"{k} {v}" for k, v in hello["versions"].items())
    )
    info = describe()
    print(
        f"isolation mode: {info['mode']}" + (f" ({info['mode_note']})" if info["mode_note"] else "")
    )
    return 0


def _status(ns: argparse.Namespace) -> int:
    from scievals.sandbox import describe

    info = describe()
    if ns.json:
        print(json.dumps(info, indent=1))
        return 0
    print(f"isolation mode: {info['mode']}")
    if info["mode_note"]:
        print(f"  note: {info['mode_note']}")
    print(f"  {info['isolation']}")
    state = "built" if info["runtime_built"] else "not built yet (run: scievals sandbox setup)"
    print(f"runtime {info['runtime_hash']}: {state}")
    print("  " + ", ".join(f"{k} {v}" for k, v in info["runtime"].items()))
    print("limits: " + ", ".join(f"{k}={v}" for k, v in info["limits"].items()))
    print("enforced by:")
    for what, how in info["enforced"].items():
        print(f"  {what}: {how}")
    return 0


def register(groups: dict) -> None:
    """Add ``sandbox setup`` and ``sandbox status`` under the root command."""
    sandbox = groups["root"].add_parser("sandbox", help="the code-execution sandbox")
    sub = sandbox.add_subparsers(dest="sandbox_command", required=True)
    setup = sub.add_parser("setup", help="build the pinned scoring runtime and check isolation")
    setup.set_defaults(func=_setup)
    status = sub.add_parser("status", help="isolation mode, runtime and limits")
    status.add_argument("--json", action="store_true", help="print describe() as JSON")
    status.set_defaults(func=_status)
