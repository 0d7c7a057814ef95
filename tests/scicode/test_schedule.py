"""Grading keeps every core busy: the longest steps start first, all problems at once, and an
identical program is graded once per run (order and counts, never timings)."""

from __future__ import annotations

import asyncio

import pytest

from scievals.scicode.data.dataset import load_problems
from scievals.scicode.grade import grade
from scievals.scicode.grading.schedule import StepCache, StepQueue, expected_cost, queue, step_costs


def test_costs_cover_every_dev_step():
    dev = {s.step_id for p in load_problems("dev") for s in p.scored_steps}
    assert set(step_costs()) == dev
    assert max(dev, key=expected_cost) in ("10.11", "51.4", "47.4")


def test_queue_admits_the_most_expensive_waiting_step_first():
    async def main() -> list[str]:
        gate = StepQueue(width=1)
        release = asyncio.Event()

        async def step(name: str, cost: float, hold: bool = False) -> None:
            async with gate.slot(name, cost):
                if hold:
                    await release.wait()

        first = asyncio.create_task(step("blocker", 0.0, hold=True))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        rest = [asyncio.create_task(step(n, c)) for n, c in (("a", 1), ("b", 5), ("c", 3))]
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, *rest)
        return gate.started

    assert asyncio.run(main()) == ["blocker", "b", "c", "a"]


def test_queue_requests_of_one_turn_are_ordered_by_cost():
    async def main() -> list[str]:
        gate = StepQueue(width=2)

        async def step(name: str, cost: float) -> None:
            async with gate.slot(name, cost):
                await asyncio.sleep(0)

        await asyncio.gather(*[step(n, c) for n, c in (("a", 1), ("b", 9), ("c", 3), ("d", 7))])
        return gate.started

    assert asyncio.run(main()) == ["b", "d", "c", "a"]


def test_queue_survives_cancelled_waiters():
    async def main() -> int:
        gate = StepQueue(width=1)
        hold = asyncio.Event()

        async def step(cost: float) -> None:
            async with gate.slot("s", cost):
                await hold.wait()

        tasks = [asyncio.create_task(step(c)) for c in (1, 2, 3)]
        await asyncio.sleep(0.01)
        tasks[2].cancel()
        tasks[1].cancel()
        hold.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return gate.running

    assert asyncio.run(main()) == 0


def test_cache_computes_once_and_shares():
    async def main() -> tuple[list[tuple[int, bool]], int]:
        cache = StepCache()
        calls = 0

        async def compute() -> int:
            nonlocal calls
            calls += 1
            await asyncio.sleep(0.01)
            return 42

        key = StepCache.key("1", "1.1", ["code"], 300)
        results = await asyncio.gather(*[cache.once(key, compute) for _ in range(3)])
        return results, calls

    results, calls = asyncio.run(main())
    assert calls == 1
    assert sorted(results) == [(42, False), (42, True), (42, True)]


def test_cache_does_not_keep_failures():
    async def main() -> int:
        cache = StepCache()
        attempts = 0

        async def compute() -> int:
            nonlocal attempts
            attempts += 1
            if attempts == 1:
                raise RuntimeError("boom")
            return 1

        with pytest.raises(RuntimeError):
            await cache.once("k", compute)
        await cache.once("k", compute)
        return attempts

    assert asyncio.run(main()) == 2


@pytest.mark.slow
def test_grade_runs_all_problems_longest_first(dev_targets_file):
    """The steps of every problem go through one queue, the costliest admitted first, in each
    of two grade calls on one event loop (the dev targets built before: building them grades
    the 50 gold steps too; what the queue held before the calls is not theirs)."""
    problems = {p.problem_id: p for p in load_problems("dev")}
    completions = {
        s.step_id: f"```python\n{s.gold_code}\n```"
        for pid in ("1", "3", "4", "44")
        for s in problems[pid].scored_steps
    }

    async def main():
        before = len(queue().started)
        first = await grade(completions, split="dev")
        again = await grade(completions, split="dev")
        return first, again, queue().started[before:]

    (verdicts, summary), (again, _), started = asyncio.run(main())
    assert summary["total_subproblems_solved"] == len(completions)
    assert [v["passed"] for v in again] == [True] * len(completions)
    # One queue for the whole run, the most expensive step admitted first, in each grade call.
    per_call = len(completions)
    assert len(started) == 2 * per_call
    costliest = max(completions, key=expected_cost)
    assert started[0] == costliest and started[per_call] == costliest
    assert set(started[:per_call]) == set(completions)


@pytest.mark.slow
def test_grade_reuses_an_identical_program_within_a_run():
    """The same step graded three times in one run (epochs of a greedy model): run once."""
    from scievals.sandbox import session
    from scievals.scicode.data.targets_source import target_lookup
    from scievals.scicode.grading.runner import run_step
    from scievals.scicode.regenerate import ensure_dev_targets

    problem = next(p for p in load_problems("dev") if p.problem_id == "1")
    step = problem.scored_steps[0]
    lookup, _ = target_lookup("dev", "auto", None, regenerate=ensure_dev_targets)
    codes = {step.step_id: step.gold_code}

    async def main():
        cache = StepCache()
        async with session() as env:
            return await asyncio.gather(
                *[run_step(env, problem, step, codes, lookup(step), 60, cache) for _ in range(3)]
            ), cache.reused

    verdicts, reused = asyncio.run(main())
    assert [v.passed for v in verdicts] == [True, True, True]
    assert sorted(v.reused for v in verdicts) == [False, True, True]
    assert reused == 2
