"""Scoring a problem: every scored step's program runs in the sandbox, concurrently.

The scorer takes small, serializable parameters and rebuilds what it needs from them (problems
from split and source, targets from the files they name), so ``inspect score LOG`` recreates it
from the log's header. Targets are located when the first sample is scored, not when the task is
built: generating without scoring (``--no-score``) needs none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from scievals.scicode.config import PreviousSteps, SciCodeConfig, TargetsChoice, sandbox_config
from scievals.scicode.dataset import Problem, Split, Step, load_problems
from scievals.scicode.metrics import METRICS
from scievals.scicode.runner import DEFAULT_TIMEOUT, StepVerdict, run_step
from scievals.scicode.schedule import StepCache
from scievals.scicode.solver import STORE_KEY
from scievals.scicode.targets_source import TargetSource

TargetLookup = Callable[[Step], list[Any]]


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
    cache: StepCache | None = None,
) -> Score:
    """Score the problem's scored steps (or ``only`` these), all step programs at once (the
    step queue orders them with every other problem's); ``cache`` spans the run."""
    steps = [s for s in problem.scored_steps if only is None or s.step_id in only]
    verdicts = await asyncio.gather(
        *[
            run_step(
                env,
                problem,
                step,
                problem.context(step, codes, gold_previous),
                targets(step),
                timeout,
                cache,
            )
            for step in steps
        ]
    )
    return summarize(list(verdicts))


@scorer(metrics=METRICS)
def scicode_scorer(
    split: Split = "test",
    source: str = "package",
    targets: TargetsChoice = "auto",
    h5: str | None = None,
    timeout: int = DEFAULT_TIMEOUT,
    previous_steps: PreviousSteps = "model",
) -> Scorer:
    """Runs each step against its targets; value is ``{step: 1.0|0.0}``, reasons in metadata.

    Parameters are the task's of the same names. Re-scoring a log outside its eval (no sample
    sandbox) runs the programs in a ``scievals`` sandbox of its own.
    """
    config = SciCodeConfig(
        split=split,
        source=source,
        targets=targets,
        h5=h5,
        timeout=timeout,
        previous_steps=previous_steps,
    )
    target_source = TargetSource(config.split, config.targets, config.h5)
    cache = StepCache()  # one run: the same program over epochs is graded once
    problems: dict[str, Problem] = {}
    ready: anyio.Lock | None = None

    def load() -> None:
        target_source.prepare()
        problems.update((p.problem_id, p) for p in load_problems(config.split, config.source))

    async def prepare() -> None:
        """Once, when the first sample is scored: target files found, problems loaded."""
        nonlocal ready
        ready = ready or anyio.Lock()
        async with ready:
            if not problems:
                await anyio.to_thread.run_sync(load)

    async def score(state: TaskState, target: Target) -> Score:
        await prepare()
        problem = problems[state.metadata["problem_id"]]
        codes = state.store.get(STORE_KEY, {}).get("codes", {})
        by_step = await anyio.to_thread.run_sync(target_source.read, problem.scored_steps)
        run = partial(
            score_problem,
            problem=problem,
            codes=codes,
            targets=lambda step: by_step[step.step_id],
            timeout=config.timeout,
            gold_previous=config.gold_previous,
            cache=cache,
        )
        try:
            env = sandbox()
        except ProcessLookupError:  # re-scoring a log: its samples have no sandbox now
            from scievals.sandbox import session

            async with session(**sandbox_config(config.timeout).model_dump()) as own:
                return await run(own)
        return await run(env)

    return score
