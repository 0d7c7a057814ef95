"""Scoring a problem: every scored step's program runs in the sandbox, concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from scievals.scicode.dataset import Problem, Step
from scievals.scicode.metrics import METRICS
from scievals.scicode.runner import StepVerdict, run_step
from scievals.scicode.solver import STORE_KEY

TargetLookup = Callable[[Step], list[Any]]


def codes_for(
    problem: Problem, step: Step, codes: dict[str, str], gold_previous: bool
) -> dict[str, str]:
    """The code each step program uses: the model's, or gold for earlier steps (paper setup)."""
    if not gold_previous:
        return codes
    index = problem.steps.index(step)
    used = {s.step_id: s.gold_code or s.presupplied_code or "" for s in problem.steps[:index]}
    used[step.step_id] = codes.get(step.step_id, "")
    return used


def summarize(verdicts: list[StepVerdict]) -> Score:
    value = {v.step: 1.0 if v.passed else 0.0 for v in verdicts}
    lines = [
        f"{v.step}: {'pass' if v.passed else 'FAIL'}" + ("" if v.passed else f" ({v.reason})")
        for v in verdicts
    ]
    return Score(
        value=value,
        answer=f"{sum(v.passed for v in verdicts)}/{len(verdicts)} steps",
        explanation="\n".join(lines),
        metadata={"steps": [v.as_dict() for v in verdicts]},
    )


async def score_problem(
    env: Any,
    problem: Problem,
    codes: dict[str, str],
    targets: TargetLookup,
    timeout: int,
    gold_previous: bool = False,
    only: set[str] | None = None,
) -> Score:
    """Score the problem's scored steps (or ``only`` these), all step programs at once."""
    steps = [s for s in problem.scored_steps if only is None or s.step_id in only]
    verdicts = await asyncio.gather(
        *[
            run_step(
                env,
                problem,
                step,
                codes_for(problem, step, codes, gold_previous),
                targets(step),
                timeout,
            )
            for step in steps
        ]
    )
    return summarize(list(verdicts))


@scorer(metrics=METRICS)
def scicode_scorer(
    problems: dict[str, Problem], targets: TargetLookup, timeout: int, gold_previous: bool = False
):
    """Runs each step against its targets; value is ``{step: 1.0|0.0}``, reasons in metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        problem = problems[state.metadata["problem_id"]]
        codes = state.store.get(STORE_KEY, {}).get("codes", {})
        return await score_problem(sandbox(), problem, codes, targets, timeout, gold_previous)

    return score
