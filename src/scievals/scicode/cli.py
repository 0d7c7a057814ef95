"""``scievals grade scicode`` and ``scievals data status|prepare|fetch``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scievals.artifacts import ArtifactError


def _grade(ns: argparse.Namespace) -> int:
    from scievals.scicode.grade import InputError, grade, read_completions
    from scievals.scicode.regenerate import run_sync

    try:
        completions = read_completions(Path(ns.file))
        verdicts, summary = run_sync(grade(completions, ns.split, ns.h5, ns.timeout, ns.extraction))
    except InputError as exc:
        print(f"scievals grade scicode: {exc}", file=sys.stderr)
        return 2
    lines = [json.dumps(v) for v in verdicts] + [json.dumps({"summary": summary})]
    text = "\n".join(lines) + "\n"
    if ns.out:
        Path(ns.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(
        f"scicode: {summary['total_subproblems_solved']}/{summary['steps_counted']} steps "
        f"({summary['percentage_subproblems_solved']:.1f}%), "
        f"{summary['total_main_problems_solved']}/{summary['problems_counted']} main problems "
        f"({summary['percentage_main_problems_solved']:.1f}%); {summary['graded_steps']} graded",
        file=sys.stderr,
    )
    return 0


def _status(ns: argparse.Namespace) -> int:
    from scievals.scicode.dataset import load_problems
    from scievals.scicode.regenerate import dev_targets_path
    from scievals.scicode.targets import describe_official, official_h5

    try:
        problems = load_problems("all")
        print(f"problems: {len(problems)} (official files verified, cached)")
    except ArtifactError as exc:
        print(f"problems: unavailable: {exc}")
    path = official_h5(ns.h5)
    print("official test_data.h5: " + (describe_official(path, ns.verify) if path else "absent"))
    dev = dev_targets_path()
    print(
        f"regenerated dev targets: {dev if dev.exists() else 'not built yet (scievals data prepare)'}"
    )
    return 0


def _prepare(ns: argparse.Namespace) -> int:
    from scievals.sandbox.runtime import ensure_runtime
    from scievals.scicode.dataset import load_problems
    from scievals.scicode.regenerate import ensure_dev_targets

    load_problems("all")
    print("scievals: SciCode problem files ready", file=sys.stderr)
    ensure_runtime()
    print(f"scievals: dev targets ready at {ensure_dev_targets()}", file=sys.stderr)
    return 0


def _fetch(ns: argparse.Namespace) -> int:
    from scievals.scicode.targets import fetch_official

    print(f"scievals: official targets at {fetch_official(timeout=ns.timeout)}", file=sys.stderr)
    return 0


def register(groups: dict) -> None:
    grade = groups["grade"].add_parser(
        "scicode", help="grade SciCode completions made elsewhere (JSON lines: step, completion)"
    )
    grade.add_argument("file", help='JSON lines: {"step": "10.1", "completion": "<raw reply>"}')
    grade.add_argument(
        "--split",
        choices=["dev", "test", "all"],
        default=None,
        help="default: inferred from the step ids",
    )
    grade.add_argument("--h5", default=None, help="the official test_data.h5")
    grade.add_argument("--timeout", type=int, default=300, help="seconds per step program")
    grade.add_argument("--extraction", choices=["inspect", "original"], default="inspect")
    grade.add_argument("--out", default=None, help="write the verdicts here (default: stdout)")
    grade.set_defaults(func=_grade)

    data = groups["root"].add_parser("data", help="SciCode data: problem files and test targets")
    sub = data.add_subparsers(dest="data_command", required=True)
    status = sub.add_parser("status", help="what is present")
    status.add_argument("--h5", default=None)
    status.add_argument("--verify", action="store_true", help="check the official file's sha256")
    status.set_defaults(func=_status)
    sub.add_parser(
        "prepare", help="fetch problem files, build the runtime, regenerate dev targets"
    ).set_defaults(func=_prepare)
    fetch = sub.add_parser("fetch", help="download the official test_data.h5 (about 1 GB)")
    fetch.add_argument("--timeout", type=float, default=30.0)
    fetch.set_defaults(func=_fetch)
