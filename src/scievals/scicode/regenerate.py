"""Dev-set targets regenerated from gold code (spec §8), in the official file's layout.

The official targets file cannot be fetched everywhere, but the 15 dev problems ship gold code:
running it with the tests' compared values recorded, then solving each check for ``target``,
gives every dev target. It runs in the same sandbox and pinned runtime as scoring, with a steady
clock so that 78.3's timing-based choice is reproducible, and is written once to the cache.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py

from scievals.artifacts import ArtifactError
from scievals.paths import cache_dir
from scievals.scicode.dataset import Problem, Step, load_problems
from scievals.scicode.runner import STEADY_CLOCK, execute, plans_for, record_path_for, step_program
from scievals.scicode.targets import write_test_target
from scievals.scicode.testcode import Unsolvable, solve_target

REGEN_TIMEOUT = 1800


def dev_targets_path() -> Path:
    return cache_dir("scicode", "targets") / "dev_regenerated.h5"


async def regenerate_step(env: Any, problem: Problem, step: Step, timeout: int) -> list[Any]:
    """The targets of one dev step, from its gold code and the gold code of earlier steps."""
    codes = {s.step_id: s.gold_code or s.presupplied_code or "" for s in problem.steps}
    plans = plans_for(step)
    path = record_path_for(step.step_id)
    program = step_program(problem, step, codes, plans, path, prelude=STEADY_CLOCK)
    run = await execute(env, program, path, timeout)
    if run.timed_out or run.returncode != 0 or run.records is None:
        detail = run.stderr.strip().splitlines()[-1:] or [run.record_error or "timed out"]
        raise ArtifactError(f"regenerating {step.step_id}: gold code failed: {detail[0]}")
    targets = []
    for plan in plans:
        if plan.index not in run.records.done:
            raise ArtifactError(
                f"regenerating {step.step_id}: test {plan.index + 1} did not finish"
            )
        try:
            targets.append(solve_target(plan, run.records))
        except Unsolvable as exc:
            raise ArtifactError(
                f"regenerating {step.step_id} test {plan.index + 1}: {exc}"
            ) from exc
    return targets


async def regenerate_dev(
    env: Any,
    dest: Path,
    timeout: int = REGEN_TIMEOUT,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write all 50 dev steps' targets to ``dest`` (atomically); returns a summary."""
    problems = load_problems("dev")
    steps = [(p, s) for p in problems for s in p.scored_steps]
    done = 0

    async def one(problem: Problem, step: Step) -> list[Any]:
        nonlocal done
        targets = await regenerate_step(env, problem, step, timeout)
        done += 1
        if progress:
            progress(f"  regenerated {step.step_id} ({done}/{len(steps)})")
        return targets

    results = await asyncio.gather(*[one(p, s) for p, s in steps])
    part = dest.with_name(dest.name + ".part")
    with h5py.File(part, "w") as h5:
        for (_, step), targets in zip(steps, results, strict=True):
            for number, target in enumerate(targets, start=1):
                write_test_target(h5, step.step_id, number, target)
    os.replace(part, dest)
    summary = {"steps": len(steps), "tests": sum(len(t) for t in results)}
    dest.with_suffix(".json").write_text(json.dumps(summary))
    return summary


def ensure_dev_targets(progress: Callable[[str], None] | None = None) -> Path:
    """The regenerated dev targets file, built on first use (a few minutes on 2 cores)."""
    dest = dev_targets_path()
    if dest.exists():
        return dest
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    say(f"scievals: regenerating SciCode dev targets from gold code into {dest} (once)")
    from scievals.sandbox import session

    async def build() -> None:
        async with session() as env:
            await regenerate_dev(env, dest, progress=say)

    run_sync(build())
    return dest


def run_sync(coroutine: Any) -> Any:
    """Run a coroutine to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
