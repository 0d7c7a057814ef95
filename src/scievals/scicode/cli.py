"""``scievals grade scicode`` and ``scievals data status|prepare|fetch|build-verified``."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any

from scievals.artifacts import ArtifactError
from scievals.grade_out import add_arguments

GRADE_OPTIONS = (
    "split",
    "dataset",
    "source",
    "h5",
    "timeout",
    "extraction",
    "step_count",
    "runtimes",
    "all_runtimes",
    "sandbox",
)
"""The options a resumed run must share with the run it finishes (they decide verdicts)."""


def _grade(ns: argparse.Namespace) -> int:
    if ns.sandbox in (None, "scievals"):
        from scievals.sandbox import prestart

        prestart(ns.runtimes.split(",")[0].strip() if ns.runtimes else None)
    from scievals.grade_out import Interrupts, VerdictsOut, run_grading, run_record
    from scievals.scicode.grade import grade, grade_config, read_completions

    completions: dict[str, str] = {}

    def start() -> VerdictsOut:
        source = Path(ns.file)
        completions.update(read_completions(source))
        return VerdictsOut(
            source,
            ns.out,
            run_record("scicode", source, {k: getattr(ns, k) for k in GRADE_OPTIONS}),
            {"step": str, "passed": bool},
            ("step",),
            [(step,) for step in completions],
            resume=ns.resume,
            overwrite=ns.overwrite,
        )

    def graded(out: VerdictsOut, stop: Interrupts) -> Any:
        given = {k: getattr(ns, k) for k in GRADE_OPTIONS if getattr(ns, k) is not None}
        config = grade_config(completions, **given)
        return stop.run(
            grade(
                completions,
                config,
                decided={key[0]: v for key, v in out.done.items()},
                on_verdict=out.add,
            )
        )

    say = partial(print, "scievals grade scicode:", file=sys.stderr)
    return run_grading(say, start, graded, _summary_line)


def _summary_line(summary: dict[str, Any]) -> str:
    """The line a person reads at the end of ``grade scicode`` (the JSON is in the file)."""
    added = "".join(
        f"; runtime {name} added {count}"
        for name, count in summary["added_by_later_runtimes"].items()
    )
    return (
        f"scicode ({summary['dataset']}, step count {summary['step_count']}, runtimes "
        f"{','.join(summary['runtimes'])}): "
        f"{summary['total_subproblems_solved']}/{summary['steps_counted']} steps "
        f"({summary['percentage_subproblems_solved']:.1f}%), "
        f"{summary['total_main_problems_solved']}/{summary['problems_counted']} main problems "
        f"({summary['percentage_main_problems_solved']:.1f}%); {summary['graded_steps']} graded"
        + added
    )


def _status(ns: argparse.Namespace) -> int:
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.data.targets import describe_official, official_h5
    from scievals.scicode.data.verified_targets import describe_verified, verified_h5
    from scievals.scicode.regenerate import dev_targets_path

    try:
        problems = load_problems("all")
        print(f"problems: {len(problems)} (official files verified, cached)")
    except ArtifactError as exc:
        print(f"problems: unavailable: {exc}")
    path = official_h5(ns.h5)
    print("official test_data.h5: " + (describe_official(path, ns.verify) if path else "absent"))
    found = verified_h5(ns.verified_h5)
    print(
        "SciCode-Verified test_data_cleaned.h5: "
        + (describe_verified(found, ns.verify) if found else "absent")
    )
    dev = dev_targets_path()
    print(
        f"regenerated dev targets: {dev if dev.exists() else 'not built yet (scievals data prepare)'}"
    )
    return 0


def _prepare(ns: argparse.Namespace) -> int:
    from scievals.sandbox import RUNTIMES, ensure_runtime
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.regenerate import ensure_dev_targets

    load_problems("all")
    print("scievals: SciCode problem files ready", file=sys.stderr)
    for name in RUNTIMES:
        ensure_runtime(name)
    print(f"scievals: dev targets ready at {ensure_dev_targets()}", file=sys.stderr)
    return 0


def _fetch(ns: argparse.Namespace) -> int:
    from scievals.scicode.data.targets import fetch_official
    from scievals.scicode.data.verified_targets import fetch_release

    if ns.dataset == "verified":
        path = fetch_release(timeout=ns.timeout)
        print(f"scievals: SciCode-Verified targets at {path} (md5 verified)", file=sys.stderr)
    else:
        print(
            f"scievals: official targets at {fetch_official(timeout=ns.timeout)}", file=sys.stderr
        )
    return 0


def _build_verified(ns: argparse.Namespace) -> int:
    from scievals.scicode.data import verified
    from scievals.scicode.data.targets import official_h5
    from scievals.scicode.data.verified_targets import (
        build_verified,
        cached_path,
        load_patches,
        step_test_counts,
    )

    original = official_h5(ns.h5)
    if original is None:
        raise ArtifactError("build-verified needs the original test_data.h5: pass --h5 PATH")
    report = build_verified(
        original,
        Path(ns.out) if ns.out else cached_path(),
        load_patches(ns.source),
        step_test_counts(verified.verified_file(verified.PROBLEMS_FILE, ns.source)),
        allow_missing=ns.allow_missing,
    )
    print(f"scievals: {report.message}", file=sys.stderr)
    return 0


def register(groups: dict) -> None:
    """Add SciCode's commands: ``grade scicode``, ``data ...`` and ``audit`` (``regrade`` is
    ``scievals.regrade``'s, for every benchmark)."""
    _add_grade(groups)
    _add_data(groups)

    from scievals.scicode.audit_cli import add_audit

    add_audit(groups)


def _add_grade(groups: dict) -> None:
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
    grade.add_argument(
        "--dataset",
        choices=["original", "verified"],
        default="original",
        help="SciCode, or SciCode-Verified (64 problems, 287 steps, its own targets)",
    )
    grade.add_argument(
        "--source", default="package", help="problem files: package, hf, github or a directory"
    )
    grade.add_argument("--h5", default=None, help="the targets file (test_data.h5, or Verified's)")
    grade.add_argument(
        "--timeout",
        type=int,
        default=None,
        help="seconds per step program and runtime (default 300; 1800 for Verified)",
    )
    grade.add_argument("--extraction", choices=["inspect", "original"], default="inspect")
    grade.add_argument(
        "--step-count",
        choices=["official", "inspect_evals", "upstream", "verified"],
        default=None,
        help="which steps are scored (default: official; verified for that dataset)",
    )
    grade.add_argument(
        "--runtimes",
        default=None,
        help="scoring runtimes tried in order, e.g. 2024,2025 (default 2024; both for Verified)",
    )
    grade.add_argument(
        "--all-runtimes",
        action="store_true",
        help="grade every step in every runtime (default: only what earlier ones failed)",
    )
    grade.add_argument("--sandbox", default="scievals", help="sandbox provider (default scievals)")
    add_arguments(grade)
    grade.set_defaults(func=_grade)


def _add_data(groups: dict) -> None:
    data = groups["root"].add_parser("data", help="SciCode data: problem files and test targets")
    sub = data.add_subparsers(dest="data_command", required=True)
    status = sub.add_parser("status", help="what is present")
    status.add_argument("--h5", default=None)
    status.add_argument("--verified-h5", default=None, help="SciCode-Verified's targets file")
    status.add_argument(
        "--verify",
        action="store_true",
        help="check the files' sha256 (official) and md5 (Verified)",
    )
    status.set_defaults(func=_status)
    sub.add_parser(
        "prepare", help="fetch problem files, build the runtime, regenerate dev targets"
    ).set_defaults(func=_prepare)
    fetch = sub.add_parser(
        "fetch", help="download the targets: test_data.h5, or Verified's release (about 1 GB)"
    )
    fetch.add_argument("--dataset", choices=["original", "verified"], default="original")
    fetch.add_argument("--timeout", type=float, default=30.0)
    fetch.set_defaults(func=_fetch)
    build = sub.add_parser(
        "build-verified", help="build SciCode-Verified's targets from test_data.h5 + its patches"
    )
    build.add_argument("--h5", default=None, help="the original test_data.h5")
    build.add_argument(
        "--source",
        default="package",
        help="Verified's files: package/github (the public repository) or a directory",
    )
    build.add_argument("--out", default=None, help="default: the cache's test_data_cleaned.h5")
    build.add_argument(
        "--allow-missing",
        action="store_true",
        help="build even if the result cannot be the release (patches or transforms missing); "
        "the file records why",
    )
    build.set_defaults(func=_build_verified)
