"""``scievals grade scibench`` and ``scievals analyze scibench-errors``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _grade(ns: argparse.Namespace) -> int:
    from scievals.scibench.grade import grade_file

    results, summary = grade_file(Path(ns.file), ns.version, ns.scorer, ns.data_dir)
    out = open(ns.output, "w", encoding="utf-8") if ns.output else sys.stdout  # noqa: SIM115
    try:
        for item in results:
            keys = ("book", "index", "correct", "parsed", "rule")
            out.write(json.dumps({k: item[k] for k in keys}) + "\n")
    finally:
        if ns.output:
            out.close()
    report = sys.stdout if ns.output else sys.stderr
    print(json.dumps({"summary": summary}, indent=1), file=report)
    return 0


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
        "output lines: {book, index, correct, parsed, rule}, then a summary.",
    )
    grade.add_argument("file", help="JSONL file of replies")
    grade.add_argument("--version", choices=["main", "old"], default="main")
    grade.add_argument("--scorer", choices=["faithful", "robust"], default="robust")
    grade.add_argument("--data-dir", help="local SciBench copy (else SCIEVALS_SCIBENCH_DIR)")
    grade.add_argument("--output", help="write the graded lines here (summary to stdout)")
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
