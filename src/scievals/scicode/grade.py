"""Grading SciCode completions made elsewhere (one JSON line per step), step by step."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from scievals.scicode.dataset import Problem, Split, load_problems
from scievals.scicode.scorer import score_problem
from scievals.scicode.solver import Extraction, extract
from scievals.scicode.targets_source import target_lookup


class InputError(ValueError):
    """A malformed input line (the message names it)."""


def read_completions(path: Path) -> dict[str, str]:
    completions: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                step, completion = item["step"], item["completion"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputError(
                    f'{path}:{number}: expected {{"step", "completion"}}: {exc}'
                ) from exc
            if not isinstance(step, str) or not isinstance(completion, str):
                raise InputError(f"{path}:{number}: step and completion must be strings")
            completions[step] = completion
    return completions


def infer_split(steps: set[str]) -> Split:
    dev = {s.step_id for p in load_problems("dev") for s in p.steps}
    if steps <= dev:
        return "dev"
    return "test" if not steps & dev else "all"


def summary(problems: tuple[Problem, ...], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The four metrics over the whole split (missing steps count as failed, as in the original)."""
    steps_total = sum(len(p.scored_steps) for p in problems)
    passed = sum(1 for v in verdicts.values() if v["passed"])
    solved = sum(
        all(verdicts.get(s.step_id, {}).get("passed", False) for s in p.scored_steps)
        for p in problems
    )
    return {
        "graded_steps": len(verdicts),
        "total_subproblems_solved": passed,
        "percentage_subproblems_solved": 100.0 * passed / steps_total,
        "steps_counted": steps_total,
        "total_main_problems_solved": solved,
        "percentage_main_problems_solved": 100.0 * solved / len(problems),
        "problems_counted": len(problems),
    }


async def grade(
    completions: dict[str, str],
    split: Split | None = None,
    h5: str | None = None,
    timeout: int = 300,
    extraction: Extraction = "inspect",
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Verdicts for every step in ``completions`` and the split's summary."""
    from scievals.sandbox import session

    split = split or infer_split(set(completions))
    problems = load_problems(split)
    known = {s.step_id for p in problems for s in p.scored_steps}
    unknown = sorted(set(completions) - known)
    if unknown:
        raise InputError(f"steps not scored in split {split!r}: {', '.join(unknown[:5])}")
    lookup, _ = target_lookup(split, "auto", h5)
    by_problem: dict[str, list[str]] = defaultdict(list)
    for step in completions:
        by_problem[step.split(".")[0]].append(step)
    verdicts: dict[str, dict[str, Any]] = {}
    async with session() as env:
        for problem in problems:
            if problem.problem_id not in by_problem:
                continue
            codes = {
                s.step_id: s.presupplied_code
                if s.presupplied_code is not None
                else extract(completions.get(s.step_id, ""), s.function_header, extraction)
                for s in problem.steps
            }
            wanted = set(by_problem[problem.problem_id])
            score = await score_problem(env, problem, codes, lookup, timeout, only=wanted)
            for step in score.metadata["steps"]:
                verdicts[step["step"]] = {
                    "step": step["step"],
                    "passed": step["passed"],
                    "reason": step["reason"],
                    "reason_kind": step["reason_kind"],
                }
    ordered = [
        verdicts[s.step_id] for p in problems for s in p.scored_steps if s.step_id in verdicts
    ]
    return ordered, summary(problems, verdicts)
