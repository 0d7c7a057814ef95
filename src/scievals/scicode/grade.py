"""Grading SciCode completions made elsewhere (one JSON line per step), all steps at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scievals.inputs import InputError, read_jsonl
from scievals.scicode.config import Extraction, SciCodeConfig, sandbox_config
from scievals.scicode.data.dataset import Dataset, Problem, Split, Step, StepCount, load_problems
from scievals.scicode.data.targets_source import target_lookup
from scievals.scicode.grading.runner import grade_step
from scievals.scicode.grading.schedule import StepCache, expected_cost
from scievals.scicode.regenerate import ensure_dev_targets
from scievals.scicode.solver import extract
from scievals.scicode.verdict import added_by, problem_solved


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
    timeout: int | None = None,
    extraction: Extraction = "inspect",
    dataset: Dataset = "original",
    source: str = "package",
    step_count: StepCount | None = None,
    runtimes: str | tuple[str, ...] | None = None,
    all_runtimes: bool = False,
    sandbox: str = "scievals",
    decided: Mapping[str, dict[str, Any]] | None = None,
    on_verdict: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Verdicts for every step in ``completions`` and the split's summary (the protocol's
    choices as the task's parameters of the same names). Steps in ``decided`` (verdicts of an
    interrupted run) are not graded again; ``on_verdict`` gets each new verdict as it is
    decided, so that a crash loses none."""
    decided = dict(decided or {})
    from scievals.sandbox.environments import sandbox_task

    if split is None:
        split = "test" if dataset == "verified" else infer_split(set(completions))
    try:
        config = SciCodeConfig(
            split=split,
            h5=h5,
            timeout=timeout,
            extraction=extraction,
            dataset=dataset,
            source=source,
            step_count=step_count,
            runtimes=runtimes,
            all_runtimes=all_runtimes,
            sandbox=sandbox,
        )
    except ValidationError as exc:
        raise InputError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
    problems = config.problems()
    known = {s.step_id for p in problems for s in p.scored_steps}
    unknown = sorted(set(completions) - known)
    if unknown:
        raise InputError(f"steps not scored in split {split!r}: {', '.join(unknown[:5])}")
    lookup, _ = target_lookup(split, "auto", h5, config.dataset, ensure_dev_targets)
    wanted = set(completions) - set(decided)
    cache = StepCache()
    jobs: list[tuple[Problem, list[Step], dict[str, str]]] = []
    for problem in problems:
        steps = [s for s in problem.scored_steps if s.step_id in wanted]
        if steps:
            codes = {
                s.step_id: s.presupplied_code
                if s.presupplied_code is not None
                else extract(completions.get(s.step_id, ""), s.function_header, extraction)
                for s in problem.steps
            }
            jobs.append((problem, steps, codes))

    async def graded(
        envs: dict[str, Any], problem: Problem, step: Step, codes: dict[str, str]
    ) -> dict[str, Any]:
        verdict = verdict_line(
            await grade_step(
                envs,
                problem,
                step,
                codes,
                partial(lookup, step),
                config.step_timeout,
                cache,
                config.all_runtimes,
            )
        )
        if on_verdict is not None:
            on_verdict(verdict)
        return verdict

    async def run_all() -> list[dict[str, Any]]:
        limits = sandbox_config(config.step_timeout).model_dump(exclude={"runtimes"})
        async with sandbox_task(sandbox, config.runtime_names, **limits) as sample:
            if sandbox in ("scievals", "docker"):
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

    results = await run_all() if jobs else []  # nothing to run when all was decided before
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
