"""Grading SciCode completions made elsewhere (one JSON line per step), all steps at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from scievals.inputs import InputError, read_jsonl
from scievals.scicode.config import SciCodeConfig, sandbox_config
from scievals.scicode.data.dataset import Problem, Split, Step, load_problems
from scievals.scicode.data.targets_source import target_lookup
from scievals.scicode.grading.runner import grade_step
from scievals.scicode.grading.schedule import StepCache, expected_cost
from scievals.scicode.regenerate import ensure_dev_targets
from scievals.scicode.solver import extract
from scievals.scicode.verdict import StepVerdict, added_by, problem_solved


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


def grade_config(completions: Mapping[str, str], **params: Any) -> SciCodeConfig:
    """The config of grading ``completions``, built as the task builds its own (``params`` are
    its parameters); without a split, the one their steps belong to."""
    if params.get("split") is None:
        verified = params.get("dataset") == "verified"
        params["split"] = "test" if verified else infer_split(set(completions))
    return SciCodeConfig.from_params(**params)


GradeJob = tuple[Problem, list[Step], dict[str, str]]
"""A problem, its steps to grade, and the code of every one of its steps."""


def _jobs(
    problems: tuple[Problem, ...],
    completions: Mapping[str, str],
    wanted: set[str],
    config: SciCodeConfig,
) -> list[GradeJob]:
    """The problems with steps to grade; pre-supplied steps get their official code."""
    jobs = []
    for problem in problems:
        steps = [s for s in problem.scored_steps if s.step_id in wanted]
        if steps:
            codes = {
                s.step_id: s.presupplied_code
                if s.presupplied_code is not None
                else extract(completions.get(s.step_id, ""), s.function_header, config.extraction)
                for s in problem.steps
            }
            jobs.append((problem, steps, codes))
    return jobs


async def _run_jobs(
    jobs: list[GradeJob],
    config: SciCodeConfig,
    graded: Callable[..., Awaitable[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Every job's steps through ``graded``, in the sandbox the config names."""
    from scievals.sandbox import sandbox_task

    limits = sandbox_config(config.step_timeout).model_dump(exclude={"runtimes"})
    async with sandbox_task(config.sandbox, config.runtime_names, **limits) as sample:
        if config.sandbox in ("scievals", "docker"):
            # One sample: in ours every program gets a directory and quota of its own, under
            # a bare docker a container of the fleet (sandbox/docker_pool.py) cleared before
            # and after it; all steps are queued at once, the longest first.
            flat = sorted(
                ((p, s, c) for p, steps, c in jobs for s in steps),
                key=lambda job: -expected_cost(job[1].step_id),
            )
            async with sample() as envs:
                return await asyncio.gather(*[graded(envs, *job) for job in flat])

        # A sample (containers) per problem, as in an eval: what one problem's programs do
        # to their container cannot reach another problem's.
        async def one(problem: Problem, steps: list[Step], codes: dict[str, str]) -> Any:
            async with sample() as envs:
                return await asyncio.gather(*[graded(envs, problem, s, codes) for s in steps])

        per_problem = await asyncio.gather(*[one(*job) for job in jobs])
        return [verdict for verdicts in per_problem for verdict in verdicts]


async def grade(
    completions: Mapping[str, str],
    config: SciCodeConfig | None = None,
    *,
    decided: Mapping[str, dict[str, Any]] | None = None,
    on_verdict: Callable[[dict[str, Any]], None] | None = None,
    cache: StepCache | None = None,
    on_whole: Callable[[StepVerdict], None] | None = None,
    **params: Any,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Verdicts for every step in ``completions`` and the split's summary, under ``config`` or
    the config ``grade_config`` builds of the task's parameters ``params``. Steps in
    ``decided`` (verdicts of an interrupted run) are not graded again; ``on_verdict`` gets each
    new verdict as it is decided, so that a crash loses none. ``cache`` may span several calls
    (a re-grade's runs): a step program already graded there is not run again. ``kept`` gets
    each graded step's whole verdict (what the scorer's ``Score`` records)."""
    if config is None:
        config = grade_config(completions, **params)
    elif params:
        raise TypeError(f"grade() takes a config or its parameters, not both: {sorted(params)}")
    if config.gold_previous or config.whole_problem or config.agent:
        raise InputError(
            "grade() grades one completion per step after the model's own earlier steps; "
            "previous_steps=gold, whole_problem and agent runs are graded by the task's scorer "
            "(inspect score LOG)"
        )
    decided = dict(decided or {})
    problems = config.problems()
    known = {s.step_id for p in problems for s in p.scored_steps}
    unknown = sorted(set(completions) - known)
    if unknown:
        raise InputError(f"steps not scored in split {config.split!r}: {', '.join(unknown[:5])}")
    lookup, _ = target_lookup(
        config.split, config.targets, config.h5, config.dataset, ensure_dev_targets
    )
    jobs = _jobs(problems, completions, set(completions) - set(decided), config)
    cache = cache if cache is not None else StepCache()

    async def graded(
        envs: dict[str, Any], problem: Problem, step: Step, codes: dict[str, str]
    ) -> dict[str, Any]:
        whole = await grade_step(
            envs,
            problem,
            step,
            codes,
            partial(lookup, step),
            config.step_timeout,
            cache,
            config.all_runtimes,
        )
        if on_whole is not None:
            on_whole(whole)
        verdict = verdict_line(whole)
        if on_verdict is not None:
            on_verdict(verdict)
        return verdict

    results = await _run_jobs(jobs, config, graded) if jobs else []  # all decided: none to run
    verdicts = {**decided, **{v["step"]: v for v in results}}
    ordered = [
        verdicts[s.step_id] for p in problems for s in p.scored_steps if s.step_id in verdicts
    ]
    report = summary(problems, verdicts)
    report.update(
        dataset=config.dataset,
        step_count=config.steps_convention,
        runtimes=list(config.runtime_names),
        added_by_later_runtimes=added_by_later_runtimes(verdicts.values(), config.runtime_names),
    )
    return ordered, report


def verdict_line(v: Any) -> dict[str, Any]:
    """A step's verdict as ``scievals grade`` writes it (one JSON line)."""
    return {
        "step": v.step,
        "passed": v.passed,
        "reason": v.reason,
        "reason_kind": v.reason_kind,
        "runtime": v.runtime,
        "runtimes": v.runtimes,
    }


def added_by_later_runtimes(
    verdicts: Iterable[dict[str, Any]], runtimes: tuple[str, ...]
) -> dict[str, int]:
    """Runtime -> steps it passed that every runtime before it failed (what it added)."""
    added = dict.fromkeys(runtimes[1:], 0)
    for verdict in verdicts:
        if (name := added_by(verdict, runtimes)) is not None:
            added[name] += 1
    return added
