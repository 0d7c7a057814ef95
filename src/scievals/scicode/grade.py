"""Grading SciCode completions made elsewhere (one JSON line per step), all steps at once."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from typing import Any

from scievals.inputs import InputError, read_jsonl
from scievals.scicode.config import Extraction
from scievals.scicode.dataset import Problem, Split, load_problems
from scievals.scicode.metrics import problem_solved
from scievals.scicode.runner import run_step
from scievals.scicode.schedule import StepCache, expected_cost
from scievals.scicode.solver import extract
from scievals.scicode.targets_source import target_lookup


def read_completions(path: Path) -> dict[str, str]:
    """Step -> raw completion from a JSONL file; a step given twice is an error, not a choice."""
    lines = read_jsonl(path, {"step": str, "completion": str}, unique=("step",), noun="step")
    return dict(line.values for line in lines)


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
        problem_solved(
            {
                s.step_id: float(verdicts.get(s.step_id, {}).get("passed", False))
                for s in p.scored_steps
            }
        )
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
    wanted = set(completions)
    cache = StepCache()
    jobs = []
    async with session() as env:
        for problem in problems:
            steps = [s for s in problem.scored_steps if s.step_id in wanted]
            if not steps:
                continue
            codes = {
                s.step_id: s.presupplied_code
                if s.presupplied_code is not None
                else extract(completions.get(s.step_id, ""), s.function_header, extraction)
                for s in problem.steps
            }
            jobs += [(problem, s, codes) for s in steps]
        jobs.sort(key=lambda job: -expected_cost(job[1].step_id))
        results = await asyncio.gather(
            *[
                run_step(env, problem, s, codes, partial(lookup, s), timeout, cache)
                for problem, s, codes in jobs
            ]
        )
    verdicts = {
        v.step: {
            "step": v.step,
            "passed": v.passed,
            "reason": v.reason,
            "reason_kind": v.reason_kind,
        }
        for v in results
    }
    ordered = [
        verdicts[s.step_id] for p in problems for s in p.scored_steps if s.step_id in verdicts
    ]
    return ordered, summary(problems, verdicts)
