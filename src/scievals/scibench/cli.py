"""``scievals grade scibench`` and ``scievals analyze scibench-errors``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path

from scievals.grade_out import add_arguments


def _grade(ns: argparse.Namespace) -> int:
    from scievals.grade_out import VerdictsOut, run_grading, run_record
    from scievals.scibench.grade import grade_file, read_replies

    source = Path(ns.file)

    def start() -> VerdictsOut:
        data_dir = ns.data_dir or os.environ.get("SCIEVALS_SCIBENCH_DIR")
        options = {
            "version": ns.version,
            "scorer": ns.scorer,
            "data_dir": str(Path(data_dir).resolve()) if data_dir else None,
        }
        return VerdictsOut(
            source,
            ns.out,
            run_record("scibench", source, options),
            {"book": str, "index": int, "correct": bool, "extracted": bool},
            ("book", "index"),
            [line.values[:2] for line in read_replies(source)],
            resume=ns.resume,
            overwrite=ns.overwrite,
        )

    say = partial(print, "scievals grade scibench:", file=sys.stderr)
    return run_grading(
        say,
        start,
        lambda out, _: grade_file(
            source, ns.version, ns.scorer, ns.data_dir, decided=out.done, on_result=out.add
        ),
        human_summary,
    )


def human_summary(summary: dict) -> str:
    """The line a person reads at the end of ``grade scibench`` (the JSON is in the file)."""
    books = summary["by_book"]
    return (
        f"scibench {summary['data_version']}, {summary['scorer']} scorer: "
        f"{summary['correct']}/{summary['total']} correct ({100 * summary['micro']:.1f}%"
        + (
            f", 95% CI {100 * summary['ci_low']:.1f}-{100 * summary['ci_high']:.1f}%"
            if summary["ci_low"] is not None
            else ""
        )
        + f"), macro {100 * summary['macro']:.1f}% over {len(books)} "
        + ("book" if len(books) == 1 else "books")
        + f"; {100 * summary['unextracted_rate']:.1f}% without a readable answer"
    )


def _analyze(ns: argparse.Namespace) -> int:
    from scievals.scibench.errors import analyze_log

    result = analyze_log(ns.log, ns.verifier, ns.scorer, ns.data_dir)
    if ns.output:
        Path(ns.output).write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"{result['n']} wrong answers with a reference solution, verifier {result['verifier']}")
    for skill, entry in result["distribution"].items():
        print(f"  {entry['count']:4d}  {100 * entry['share']:5.1f}%  {skill}")
    return 0


def register(groups: dict) -> None:
    grade = groups["grade"].add_parser(
        "scibench",
        help="grade SciBench replies made elsewhere (JSONL of book, index, response)",
        description='Input lines: {"book": "atkins", "index": 3, "response": "..."}; '
        "output lines: {book, index, correct, parsed, rule, extracted}, then the summary.",
    )
    grade.add_argument("file", help="JSONL file of replies")
    grade.add_argument("--version", choices=["main", "old"], default="main")
    grade.add_argument("--scorer", choices=["faithful", "robust", "opencompass"], default="robust")
    grade.add_argument("--data-dir", help="local SciBench copy (else SCIEVALS_SCIBENCH_DIR)")
    add_arguments(grade, "--output")
    grade.set_defaults(func=_grade)

    errors = groups["analyze"].add_parser(
        "scibench-errors",
        help="attribute wrong answers to the ten SciBench skills with a verifier model",
        description="Runs on the wrong answers of problems with a reference solution "
        "(run the task with subset=solutions, or the multimodal problem_solution items).",
    )
    errors.add_argument("log", help="Inspect log of a scievals/scibench run")
    errors.add_argument(
        "--verifier", required=True, help="Inspect model, e.g. openai/gpt-3.5-turbo"
    )
    errors.add_argument("--scorer", choices=["faithful", "robust"], default="robust")
    errors.add_argument("--data-dir", help="local SciBench copy (else the run's, else download)")
    errors.add_argument("--output", help="write the full result (items included) as JSON here")
    errors.set_defaults(func=_analyze)
