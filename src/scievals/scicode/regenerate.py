"""Dev-set targets regenerated from gold code (spec §8), in the official file's layout.

The official targets file cannot be fetched everywhere, but the 15 dev problems ship gold code:
running it, re-running each test on the trusted side with the values the gold functions
returned, and solving each assert's skeleton for ``target`` gives every dev target. It runs in
the same sandbox and pinned runtime as scoring, with a steady clock so that 78.3's timing-based
choice is reproducible, and is written once to the cache.
"""

from __future__ import annotations

import ast
import asyncio
import fcntl
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py

from scievals.aio import run_sync
from scievals.artifacts import ArtifactError
from scievals.paths import cache_dir
from scievals.scicode.data.dataset import Problem, Step, load_problems
from scievals.scicode.data.targets import write_test_target
from scievals.scicode.grading.program import STEADY_CLOCK, plans_for, step_program
from scievals.scicode.grading.replay import Replayed
from scievals.scicode.grading.rewrite import TARGET, VALUES, TestPlan
from scievals.scicode.grading.runner import execute, judge_tests, record_path_for
from scievals.scicode.grading.schedule import queue
from scievals.trusted import shared_pool

REGEN_TIMEOUT = 1800


class Unsolvable(ValueError):
    """A check does not pin down the target (cannot regenerate from it)."""


def solve_target(plan: TestPlan, solved: dict[int, tuple[Any, ...]]) -> Any:
    """The target that makes every check of this test hold with the gold values ``solved``
    (each check's recorded values, by check number)."""
    if not plan.checks:
        return None
    bound: dict[str, Any] = {}
    subscripted: dict[int, Any] = {}

    def assign(leaf: ast.expr, value: Any) -> None:
        if isinstance(leaf, ast.Name):
            bound[leaf.id] = value
        elif (
            isinstance(leaf, ast.Subscript)
            and isinstance(leaf.value, ast.Name)
            and leaf.value.id == TARGET
            and isinstance(leaf.slice, ast.Constant)
        ):
            subscripted[int(leaf.slice.value)] = value
        elif isinstance(leaf, ast.Tuple):
            for element, item in zip(leaf.elts, value, strict=True):
                assign(element, item)
        else:
            raise Unsolvable(f"cannot solve for {ast.unparse(leaf)}")

    def is_value(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == VALUES
        )

    def value_of(node: ast.expr, values: tuple[Any, ...]) -> Any:
        if is_value(node):
            return values[node.slice.value]  # type: ignore[attr-defined]
        raise Unsolvable(f"not a recorded value: {ast.unparse(node)}")

    def solve(node: ast.expr, values: tuple[Any, ...]) -> None:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            for part in node.values:
                solve(part, values)
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            left, right = node.args[0], node.args[1]
            if is_value(left):
                assign(right, value_of(left, values))
            else:
                assign(left, value_of(right, values))
        elif (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
        ):
            left, right = node.left, node.comparators[0]
            if is_value(left):
                assign(right, value_of(left, values))
            else:
                assign(left, value_of(right, values))
        else:
            raise Unsolvable(f"cannot solve {ast.unparse(node)}")

    for number, check in enumerate(plan.checks):
        if number not in solved:
            raise Unsolvable("the check's values were never computed")
        solve(ast.parse(check.skeleton, mode="eval").body, solved[number])

    if TARGET in bound:
        return bound[TARGET]
    if subscripted:
        return tuple(subscripted[i] for i in range(len(subscripted)))
    for statement in plan.unpack:
        names = ast.parse(statement).body[0].targets[0]  # type: ignore[attr-defined]
        return tuple(bound[element.id] for element in names.elts)
    raise Unsolvable("no target found")


def dev_targets_path() -> Path:
    """Where the regenerated dev targets are kept (in the cache, built once)."""
    return cache_dir("scicode", "targets") / "dev_regenerated.h5"


async def regenerate_step(env: Any, problem: Problem, step: Step, timeout: int) -> list[Any]:
    """The targets of one dev step, from its gold code and the gold code of earlier steps."""
    shared_pool().warm()  # the trusted workers start while the first programs run
    codes = problem.gold_codes()
    plans = plans_for(problem, step)
    path = record_path_for(step.step_id)
    program = step_program(problem, step, codes, plans, path, prelude=STEADY_CLOCK)
    async with queue().slot(step.step_id):
        run = await execute(env, program, path, timeout, step.step_id)
    outcome = run.outcome
    if outcome.returncode != 0 or outcome.infrastructure or run.records is None:
        run.discard()
        detail = outcome.stderr.strip().splitlines()[-1:] or [
            outcome.infrastructure or run.record_error or outcome.reason or "timed out"
        ]
        raise ArtifactError(f"regenerating {step.step_id}: gold code failed: {detail[0]}")
    replayed = await judge_tests(problem, plans, run, None, timeout)
    if not isinstance(replayed, Replayed) or replayed.outcomes is None:
        why = replayed.records_error if isinstance(replayed, Replayed) else replayed
        raise ArtifactError(f"regenerating {step.step_id}: the trusted re-run failed: {why}")
    targets = []
    for plan, result in zip(plans, replayed.outcomes, strict=False):
        if result.error is not None:
            raise ArtifactError(
                f"regenerating {step.step_id} test {plan.index + 1}: "
                f"{result.error.type}: {result.error.message}"
            )
        try:
            targets.append(solve_target(plan, result.solved))
        except Unsolvable as exc:
            raise ArtifactError(
                f"regenerating {step.step_id} test {plan.index + 1}: {exc}"
            ) from exc
    if len(targets) != len(plans):
        raise ArtifactError(f"regenerating {step.step_id}: not every test ran")
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
    with open(dest.with_name(dest.name + ".lock"), "w") as lock:  # two runs, one cache: one build
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(
                f"scievals: another process is regenerating the dev targets; waiting for {lock.name}"
            )
            fcntl.flock(lock, fcntl.LOCK_EX)
        if dest.exists():
            return dest
        say(f"scievals: regenerating SciCode dev targets from gold code into {dest} (once)")
        from scievals.sandbox import session

        async def build() -> None:
            async with session() as env:
                await regenerate_dev(env, dest, progress=say)

        run_sync(build())
    return dest
