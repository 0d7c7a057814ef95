"""``scievals audit scicode``: the steps whose tests accept a trivial answer (``audit.py``)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from functools import partial
from importlib.metadata import version
from pathlib import Path


def _run(ns: argparse.Namespace) -> int:
    from scievals.aio import run_sync
    from scievals.scicode.audit import audit, describe, to_json, weak

    say = partial(print, "scievals audit scicode:", file=sys.stderr)
    steps = [s.strip() for s in ns.steps.split(",") if s.strip()] if ns.steps else None
    findings = run_sync(
        audit(
            ns.split,
            ns.dataset,
            steps,
            h5=ns.h5,
            timeout=ns.timeout,
            source=ns.source,
            progress=lambda done, total: say(f"graded round {done} of {total}"),
        )
    )
    flagged = weak(findings)
    passing = [step for step, found in flagged.items() if any(f.passed for f in found)]
    print(
        f"{len(findings)} trivial answers on {len({f.step for f in findings})} steps "
        f"({ns.dataset}, split {ns.split}); {len(passing)} step(s) pass with one"
        + (f" ({', '.join(passing)})" if passing else "")
        + f", {len(flagged) - len(passing)} more have tests that accept one"
    )
    for found in flagged.values():
        for finding in found:
            print(describe(finding))
    if ns.out:
        about = {
            "split": ns.split,
            "dataset": ns.dataset,
            "steps": steps,
            "scievals": version("scievals"),
            "date": datetime.now(UTC).date().isoformat(),
            "command": "scievals audit scicode " + " ".join(sys.argv[3:]),
        }
        Path(ns.out).write_text(to_json(findings, about), encoding="utf-8")
        say(f"wrote {ns.out}")
    return 0


def add_audit(groups: dict) -> None:
    """Add ``audit scicode`` to the root command (``groups["audit"]`` for other benchmarks)."""
    if "audit" not in groups:
        parser = groups["root"].add_parser(
            "audit", help="benchmark audits: tests that accept trivial answers"
        )
        groups["audit"] = parser.add_subparsers(dest="audited", required=True)
    audit = groups["audit"].add_parser(
        "scicode",
        help="grade trivial answers on every step with targets; list the steps they pass",
        description="Grades zeros, ones, an empty list, None, identity, the inputs returned "
        "unchanged and constants from the prompt as each step's function, through the real "
        "grader with gold code in the earlier steps, and lists the steps whose tests accept one.",
    )
    audit.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    audit.add_argument("--dataset", choices=["original", "verified"], default="original")
    audit.add_argument("--steps", default=None, help="comma-separated step ids (default: all)")
    audit.add_argument("--h5", default=None, help="the targets file (test split, Verified)")
    audit.add_argument("--timeout", type=int, default=None, help="seconds per step program")
    audit.add_argument("--source", default="package", help="problem files (see grade scicode)")
    audit.add_argument("--out", default=None, help="write the findings as JSON here")
    audit.set_defaults(func=_run)
