"""A run's score as its source recorded it, against the official rule's, step by step.

For each run: the source's own numbers (its verdict files), scievals' (the official rule, with
the 95% interval of ``scievals.stats``), the difference, and every step and problem whose verdict
differs, each with its cause where one can be named from what the folder holds. A cause is a
short kind (``CAUSES``) and a sentence; a difference with no nameable cause has kind None and
the official rule's reason for its verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from scievals.regrade_out import Row, columns, difference_table
from scievals.scicode.data.dataset import Problem, Split
from scievals.scicode.extract import original_extract
from scievals.scicode.regrade.official_folder import Answer, Recorded, Run, relative
from scievals.scicode.verdict import problem_solved
from scievals.stats import Outcome, estimate

OFFICIAL_TIMEOUT = 1800
"""The official script's limit per step program (hard-coded, spec §4)."""
CAUSES = (
    "not in split",
    "pre-supplied",
    "file skipped",
    "no file",
    "layout",
    "earlier code",
    "extraction",
    "timeout",
    "targets",
)
REGENERATED_TARGETS = {
    "78.3": "its gold code picks its time step by timing itself, and the official h5 holds the "
    "targets of the authors' machine, which cannot be met; scievals grades dev steps against "
    "targets regenerated from the gold code (spec §8)",
    "70.8": "its test 4 is reported machine-dependent against the official h5; scievals grades "
    "dev steps against targets regenerated from the gold code (spec §8)",
}
"""Dev steps whose official targets are known to differ from the regenerated ones."""
INIT_ONLY = ("13.6", "62.1")
"""Pre-supplied steps the official generator reads back as their first ``__init__`` only."""


@dataclass(frozen=True)
class Graded:
    """One run after grading: what was read of it and what the official rule decided."""

    run: Run
    split: Split
    problems: tuple[Problem, ...]
    answers: Mapping[str, Answer]
    skipped: Mapping[str, str]
    """Step id -> why its file was not graded."""
    verdicts: Sequence[dict[str, Any]]
    summary: dict[str, Any]


def compare(graded: Graded, timeout: int, root: Path) -> dict[str, Any]:
    """The comparison of one run (plain JSON); ``timeout`` is scievals' per step program."""
    run = graded.run
    by_step = {v["step"]: v for v in graded.verdicts}
    ours = official_scores(graded.problems, by_step, graded.summary)
    theirs = recorded_scores(run.recorded, ours["steps_total"])
    order = [s.step_id for p in graded.problems for s in p.steps]
    return {
        "run": run.label,
        "model": run.model,
        "background": run.background,
        "folder": relative(run.folder, root),
        "split": graded.split,
        "step_files": len(run.paths),
        "graded_steps": len(graded.verdicts),
        "source": theirs,
        "scievals": ours,
        "difference": difference(theirs, ours),
        "differing_steps": differing_steps(
            run.recorded, order, by_step, partial(_cause, graded, timeout=timeout)
        ),
        "differing_problems": _differing_problems(graded, by_step),
        "notes": list(run.notes),
        "verdicts": list(graded.verdicts),
    }


def official_scores(
    problems: Sequence[Problem], by_step: Mapping[str, dict[str, Any]], summary: dict[str, Any]
) -> dict[str, Any]:
    """scievals' numbers for a run (``grade.summary`` of these problems) with the 95% interval
    of the step rate."""
    outcomes = [
        Outcome(0, p.problem_id, s.step_id, float(by_step.get(s.step_id, {}).get("passed", 0)))
        for p in problems
        for s in p.scored_steps
    ]
    rate = estimate(outcomes)
    return {
        "steps_passed": summary["total_subproblems_solved"],
        "steps_total": summary["steps_counted"],
        "percentage_subproblems_solved": summary["percentage_subproblems_solved"],
        "interval_95": [100 * rate.lo, 100 * rate.hi] if rate else None,
        "problems_solved": summary["total_main_problems_solved"],
        "problems_total": summary["problems_counted"],
        "percentage_main_problems_solved": summary["percentage_main_problems_solved"],
    }


def recorded_scores(recorded: Recorded | None, steps_total: int) -> dict[str, Any] | None:
    """The source's numbers: its text file's counts, else its JSON's passes over our
    denominator."""
    if recorded is None:
        return None
    passed: int | None
    if recorded.steps is not None:
        passed, total = recorded.steps
    else:
        passed = len(recorded.passed) if recorded.passed is not None else None
        total = steps_total
    step_rate, problem_rate = recorded.rates
    problems = recorded.problems
    if step_rate is not None:
        points = 100.0 * step_rate
    else:
        points = 100.0 * passed / total if passed is not None and total else None
    if problem_rate is not None:
        problem_points = 100.0 * problem_rate
    else:
        problem_points = 100.0 * problems[0] / problems[1] if problems and problems[1] else None
    return {
        "verdict_files": list(recorded.files),
        "steps_passed": passed,
        "steps_total": total,
        "percentage_subproblems_solved": points,
        "problems_solved": problems[0] if problems else None,
        "problems_total": problems[1] if problems else None,
        "percentage_main_problems_solved": problem_points,
        "per_step": recorded.passed is not None,
    }


def difference(theirs: dict[str, Any] | None, ours: dict[str, Any]) -> dict[str, Any] | None:
    """scievals minus the source: steps, percentage points; problems where both say."""
    if theirs is None:
        return None
    points, passed = theirs["percentage_subproblems_solved"], theirs["steps_passed"]
    solved = theirs["problems_solved"]
    return {
        "steps": ours["steps_passed"] - passed if passed is not None else None,
        "percentage_points": (
            ours["percentage_subproblems_solved"] - points if points is not None else None
        ),
        "problems": ours["problems_solved"] - solved if solved is not None else None,
    }


Cause = Callable[[str, bool, dict[str, Any] | None], tuple[str | None, str]]
"""(step, the source's verdict, scievals' verdict line or None) -> (kind, sentence)."""


def differing_steps(
    recorded: Recorded | None,
    order: Sequence[str],
    by_step: Mapping[str, dict[str, Any]],
    cause: Cause,
) -> list[dict[str, Any]] | None:
    """Every step the source and the official rule judge differently, in ``order`` then the
    source's others (None: the source kept no verdict per step). A step the source failed and
    scievals does not grade (pre-supplied) differs too: the source counted it."""
    if recorded is None or recorded.passed is None:
        return None
    failed = recorded.failed or frozenset()
    steps = list(order) + sorted((recorded.passed | failed) - set(order))
    rows = []
    for sid in steps:
        theirs = sid in recorded.passed
        verdict = by_step.get(sid)
        ours = bool(verdict and verdict["passed"])
        if theirs == ours and not (sid in failed and verdict is None):
            continue
        kind, why = cause(sid, theirs, verdict)
        rows.append(
            {
                "step": sid,
                "source": theirs,
                "scievals": ours if verdict is not None else None,
                "cause": kind,
                "detail": why,
            }
        )
    return rows


def _cause(
    graded: Graded, sid: str, theirs: bool, verdict: dict[str, Any] | None, *, timeout: int
) -> tuple[str | None, str]:
    """(kind, sentence) for a step judged differently; kind None when it cannot be named."""
    steps = {s.step_id: s for p in graded.problems for s in p.steps}
    answer = graded.answers.get(sid)
    if sid not in steps:
        return (
            "not in split",
            f"the source counted it, but it is not a step of split {graded.split}",
        )
    if not steps[sid].scored:
        return (
            "pre-supplied",
            "the source graded a file for it; the official rule supplies its official code and "
            "never scores it",
        )
    if sid in graded.skipped:
        return "file skipped", f"its file was not graded: {graded.skipped[sid]}"
    if verdict is None or answer is None:
        return (
            "no file",
            "no file for it in the folder: no answer (the source's verdict is for code that is "
            "not there)",
        )
    if answer.whole:
        return (
            "layout",
            "the file does not begin with its earlier steps' code as the generator writes it: "
            "graded whole, after its dependencies",
        )
    if answer.earlier_differs:
        init = [s for s in answer.earlier_differs if s in INIT_ONLY]
        return (
            "earlier code",
            f"the source's program had other code for {', '.join(answer.earlier_differs)} than "
            "scievals runs before this step"
            + (
                f" (the generator reads pre-supplied {', '.join(init)} back as its first "
                "__init__ only)"
                if init
                else ""
            ),
        )
    if original_extract(answer.code) != answer.code:
        return "extraction", "scievals deleted import lines from the file's code"
    if theirs and verdict.get("reason_kind") == "timeout":
        return (
            "timeout",
            f"timed out in scievals ({timeout} s per step program); the official script allows "
            f"{OFFICIAL_TIMEOUT} s",
        )
    return rule_cause(sid, verdict, theirs, graded.split)


def rule_cause(
    sid: str, verdict: Mapping[str, Any] | None, theirs: bool, split: Split
) -> tuple[str | None, str]:
    """The cause the official rule itself shows, once the source's are ruled out: dev targets
    regenerated where the official ones differ, else the rule's own reason for its verdict."""
    if sid in REGENERATED_TARGETS and split != "test":
        return "targets", f"{sid}: {REGENERATED_TARGETS[sid]}"
    if theirs:
        return None, f"fails under the official rule: {verdict and verdict.get('reason')}"
    return None, "passes under the official rule"


def _differing_problems(
    graded: Graded, by_step: Mapping[str, dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """Problems the source counted solved and the official rule does not, or the reverse
    (None: the source did not list them)."""
    recorded = graded.run.recorded
    if recorded is None or recorded.solved is None:
        return None
    rows = []
    for problem in graded.problems:
        steps = problem.scored_steps
        ours = problem_solved(
            {s.step_id: by_step.get(s.step_id, {}).get("passed", False) for s in steps}
        )
        theirs = problem.problem_id in recorded.solved
        if theirs == ours:
            continue
        absent = [s.step_id for s in steps if s.step_id not in graded.answers]
        if theirs and absent:
            kind, why = (
                "no file",
                f"{len(absent)} of its {len(steps)} steps have no file ({', '.join(absent)}): the "
                "official script counts a problem solved when every file present passes",
            )
        else:
            kind, why = None, "its steps' verdicts differ (above)"
        rows.append(problem_row(problem.problem_id, theirs, ours, kind, why))
    return rows


def problem_row(
    problem_id: str, theirs: bool, ours: bool, kind: str | None, why: str
) -> dict[str, Any]:
    """A problem the source and the official rule count differently, as the table prints it."""
    return {"problem": problem_id, "source": theirs, "scievals": ours, "cause": kind, "detail": why}


def table(comparisons: Sequence[dict[str, Any]]) -> str:
    """The terminal summary: a row per run, then each run's differing steps and problems."""
    head = (
        "run",
        "source steps",
        "scievals steps (95% CI)",
        "diff",
        "source problems",
        "scievals problems",
        "steps differ",
    )
    rows = [head]
    for c in comparisons:
        theirs, ours, diff = c["source"], c["scievals"], c["difference"]
        low_high = ours["interval_95"]
        ci = f" [{low_high[0]:.1f}, {low_high[1]:.1f}]" if low_high else ""
        differ = c["differing_steps"]
        rows.append(
            (
                c["run"],
                _score(theirs, "steps") if theirs else "not recorded",
                _score(ours, "steps") + ci,
                f"{diff['percentage_points']:+.1f} pp"
                if diff and diff["percentage_points"] is not None
                else "-",
                _score(theirs, "problems") if theirs else "-",
                _score(ours, "problems"),
                str(len(differ)) if differ is not None else "-",
            )
        )
    lines = columns(rows)
    for c in comparisons:
        differ = c["differing_steps"] or []
        problems = c["differing_problems"] or []
        if not differ and not problems:
            continue
        lines += ["", f"{c['run']}: {len(differ)} steps, {len(problems)} problems differ"]
        lines += difference_table(("step", "source", "scievals"), difference_rows(c))
    return "\n".join(lines)


def difference_rows(comparison: Mapping[str, Any]) -> list[Row]:
    """The steps, then the problems, that the source and the official rule judge differently."""
    steps = comparison.get("differing_steps") or []
    problems = comparison.get("differing_problems") or []
    return [(r["step"], _verdict(r["source"]), _verdict(r["scievals"]), r) for r in steps] + [
        (f"problem {r['problem']}", _solved(r["source"]), _solved(r["scievals"]), r)
        for r in problems
    ]


def source_scores(comparison: Mapping[str, Any]) -> dict[str, float | None]:
    """The score the source recorded for each metric of a scievals SciCode log (percent)."""
    theirs = comparison.get("source") or {}
    return {
        "main": theirs.get("percentage_main_problems_solved"),
        "sub": theirs.get("percentage_subproblems_solved"),
    }


def _score(part: dict[str, Any], unit: str) -> str:
    """``done/total (percent)``, or the percentage alone where the counts are not known."""
    steps = unit == "steps"
    done = part["steps_passed" if steps else "problems_solved"]
    total = part[f"{unit}_total"]
    points = part["percentage_subproblems_solved" if steps else "percentage_main_problems_solved"]
    if points is None:
        return "-"
    return f"{done}/{total} ({points:.1f}%)" if done is not None and total else f"{points:.1f}%"


def _verdict(value: bool | None) -> str:
    return "not graded" if value is None else "pass" if value else "fail"


def _solved(value: bool) -> str:
    return "solved" if value else "not solved"


def to_json(comparisons: Sequence[dict[str, Any]], about: Mapping[str, Any]) -> str:
    """The file ``--out`` gets: what was run, and every run's comparison."""
    return json.dumps({**about, "runs": list(comparisons)}, indent=1) + "\n"
