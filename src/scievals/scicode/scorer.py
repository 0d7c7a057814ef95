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

from scievals.agents import AGENT_STORE_KEY, summary, unanswered
from scievals.inputs import InputError
from scievals.prerequisite import prerequisite
from scievals.sandbox import runtime_environment
from scievals.scicode import regenerate
from scievals.scicode.config import SciCodeConfig, sandbox_config
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.grading.runner import grade_step
from scievals.scicode.grading.schedule import StepCache
from scievals.scicode.metrics import METRICS
from scievals.scicode.solver import STORE_KEY, extract
from scievals.scicode.verdict import StepVerdict
from scievals.scicode.whole import last_step, whole_score, whole_verdicts

TargetLookup = Callable[[Step], list[Any]]


def _line(v: StepVerdict) -> str:
    """One step of the explanation; with several runtimes graded, each one's verdict too."""
    line = f"{v.step}: {'pass' if v.passed else 'FAIL'}" + ("" if v.passed else f" ({v.reason})")
    if len(v.runtimes) > 1:
        each = (
            f"{n}: {'pass' if r['passed'] else r['reason_kind']}" for n, r in v.runtimes.items()
        )
        line += " [" + ", ".join(each) + "]"
    return line


def summarize(verdicts: list[StepVerdict]) -> Score:
    """A sample's Score from its steps' verdicts: the one rule of the scorer and of a
    re-grade's log (``regrade.eval_log``), so that ``--verify`` compares like with like."""
    value = {v.step: 1.0 if v.passed else 0.0 for v in verdicts}
    lines = [_line(v) for v in verdicts]
    return Score(
        value=value,
        answer=f"{sum(v.passed for v in verdicts)}/{len(verdicts)} steps",
        explanation="\n".join(lines),
        metadata={"steps": [v.as_dict() for v in verdicts]},
    )


async def score_problem(
    envs: dict[str, Any],
    problem: Problem,
    codes: dict[str, str],
    targets: TargetLookup,
    timeout: int,
    gold_previous: bool = False,
    only: set[str] | None = None,
    cache: StepCache | None = None,
    all_runtimes: bool = False,
) -> Score:
    """Score the problem's scored steps (or ``only`` these), all step programs at once (the
    step queue orders them with every other problem's), each in the runtimes of ``envs``
    (name -> environment, in the order tried); ``cache`` spans the run."""
    steps = [s for s in problem.scored_steps if only is None or s.step_id in only]
    verdicts = await asyncio.gather(
        *[
            grade_step(
                envs,
                problem,
                step,
                problem.context(step, codes, gold_previous),
                targets(step),
                timeout,
                cache,
                all_runtimes,
            )
            for step in steps
        ]
    )
    return summarize(list(verdicts))


async def grade_answers(
    run: Callable[..., Any],
    envs: dict[str, Any],
    state: TaskState,
    problem: Problem,
    config: SciCodeConfig,
) -> Score:
    """The problem's score from the answers the solver kept (``run`` is ``score_problem`` with
    the answers bound): per step, or one whole answer (``whole_problem``; a foreign ``--solver``
    leaves its answer as its output). A step an agent's limit ended has no answer: it is not
    run and fails with the limit's message. The agent's figures go into the metadata."""
    stopped = unanswered(state.store)
    if config.whole_problem:
        last = last_step(problem)
        answer = state.store.get(STORE_KEY, {}).get("codes", {}).get(last.step_id)
        if answer is None:
            answer = extract(state.output.completion, last.function_header, config.extraction)
        grade = partial(run, envs)
        verdicts = await whole_verdicts(grade, problem, answer, stopped.get(last.step_id))
        score = whole_score(summarize(verdicts), problem)
    elif stopped:
        asked = {s.step_id for s in problem.scored_steps} - set(stopped)
        graded = await run(envs, only=asked)
        by_step = {v["step"]: StepVerdict(**v) for v in (graded.metadata or {})["steps"]}
        score = summarize(
            [
                by_step.get(s.step_id) or StepVerdict(s.step_id, False, "limit", stopped[s.step_id])
                for s in problem.scored_steps
            ]
        )
    else:
        score = await run(envs)
    records = state.store.get(AGENT_STORE_KEY)
    if records:
        score.metadata = {**(score.metadata or {}), "agent": summary(records)}
    return score


def _runtime_environments(names: tuple[str, ...]) -> dict[str, Any]:
    """The sample's environment for each runtime; a missing one is a setup error that names
    what the sandbox configuration lacks."""
    envs = {}
    for index, name in enumerate(names):
        wanted = runtime_environment(name, index)
        try:
            envs[name] = sandbox(wanted)
        except ValueError:
            raise InputError(
                f"runtime {name} needs a sandbox environment named {wanted!r} (a compose "
                "service of that name serving the runtime's image; `scievals sandbox image` "
                "writes one)"
            ) from None
    return envs


@scorer(metrics=METRICS)
def scicode_scorer(config: dict[str, Any] | None = None, **changes: Any) -> Scorer:
    """Runs each step against its targets; value is ``{step: 1.0|0.0}``, reasons in metadata
    (``whole_problem``: the last step's only, every step's in metadata).

    ``config`` is the task's ``SciCodeConfig.record()`` (None: the defaults); ``changes`` are
    fields given over it (``inspect score LOG --scorer scievals/scicode_scorer -S h5=PATH``).
    Each runtime is the sample's sandbox environment ``runtime_environment`` names. Re-scoring
    a log outside its eval (no sample sandbox) runs the programs in ``scievals`` sandboxes of
    its own.
    """
    settings = SciCodeConfig.from_record({**(config or {}), **changes})
    names = settings.runtime_names
    target_source = TargetSource(
        settings.split,
        settings.targets,
        settings.h5,
        settings.dataset,
        regenerate.ensure_dev_targets,
    )
    cache = StepCache()  # one run: the same program over epochs is graded once
    problems: dict[str, Problem] = {}
    ready: anyio.Lock | None = None

    def load() -> None:
        with prerequisite():  # `inspect score` without targets: their one line, no traceback
            target_source.prepare()
        problems.update((p.problem_id, p) for p in settings.problems())

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
            timeout=settings.step_timeout,
            gold_previous=settings.gold_previous,
            cache=cache,
            all_runtimes=settings.all_runtimes,
        )
        grade = partial(grade_answers, run, state=state, problem=problem, config=settings)
        try:
            envs = _runtime_environments(names)
        except ProcessLookupError:  # re-scoring a log: its samples have no sandbox now
            from scievals.sandbox import open_environments

            limits = sandbox_config(settings.step_timeout).model_dump(exclude={"runtimes"})
            async with open_environments("scievals", names, **limits) as own:
                return await grade(own)
        return await grade(envs)

    return score
