"""Wall time to grade the 50 gold SciCode dev steps, three ways, against the physical floor.

1. the original harness's way: one program per step (dependencies, earlier steps, this step, an
   h5 read of its targets, the tests), each run by a fresh ``python``, one after another;
2. Inspect's ``local`` sandbox running our step programs, as many at a time as there are CPUs;
3. our sandbox (isolated, warm zygote, parallel): the default.
The floor is the step programs' own work (CPU time after interpreter start-up and imports,
measured in way 1) divided by the CPUs, or the longest single step where that is larger.
All three use the pinned scoring runtime's interpreter. Usage: python bench/scicode_grade.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai.util._sandbox.local import LocalSandboxEnvironment

from scievals.sandbox import describe, session
from scievals.sandbox.runtime import ensure_runtime
from scievals.scicode.dataset import Problem, Step, load_problems
from scievals.scicode.regenerate import ensure_dev_targets
from scievals.scicode.scorer import score_problem
from scievals.scicode.targets import TargetFile

SRC = Path(__file__).resolve().parents[1] / "src"
# What the original program imports before its tests (its parse module pulls these in).
PREAMBLE = (
    "import sys, time as __bench_time\n"
    f"sys.path.insert(0, {str(SRC)!r})\n"
    "import numpy, scipy, scipy.sparse, sympy, h5py\n"
    "from scievals.scicode.compare import are_dicts_close, cmp_tuple_or_list\n"
    "from scievals.scicode.targets import read_step_targets\n"
    "__bench_t0 = __bench_time.process_time()\n"
)


def original_program(problem: Problem, step: Step, h5: Path) -> str:
    index = problem.steps.index(step)
    previous = "\n".join(s.gold_code or s.presupplied_code or "" for s in problem.steps[:index])
    lines = [
        PREAMBLE + problem.dependencies,
        previous,
        "",
        step.gold_code or "",
        "",
        f"targets = read_step_targets(h5py.File({str(h5)!r}, 'r'), {step.step_id!r}, {len(step.tests)})",
    ]
    for i, test in enumerate(step.tests):
        lines += [f"target = targets[{i}]", "", test]
    lines.append("print(__bench_time.process_time() - __bench_t0, file=sys.stderr)")
    return "\n".join(lines) + "\n"


def original_way(python: str, h5: Path, steps: list[tuple[Problem, Step]]) -> tuple[int, list[float]]:
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    passed, own = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for problem, step in steps:
            path = Path(tmp) / f"{step.step_id}.py"
            path.write_text(original_program(problem, step, h5))
            proc = subprocess.run([python, str(path)], capture_output=True, text=True, env=env)
            passed += proc.returncode == 0
            tail = proc.stderr.strip().splitlines()[-1:] or ["0"]
            own.append(float(tail[0]) if proc.returncode == 0 else 0.0)
    return passed, own


async def our_scorer(env, problems, targets: TargetFile) -> int:
    async def one(problem: Problem) -> float:
        codes = {s.step_id: s.gold_code or s.presupplied_code or "" for s in problem.steps}
        score = await score_problem(
            env, problem, codes, lambda s: targets.step(s.step_id, len(s.tests)), 300
        )
        return sum(score.value.values())

    return int(sum(await asyncio.gather(*(one(p) for p in problems))))


async def with_ours(problems, targets) -> int:
    async with session() as env:
        return await our_scorer(env, problems, targets)


class _Gated:
    """Inspect's local sandbox, at most ``width`` executions at a time, with the runtime python."""

    def __init__(self, python: str, width: int):
        self.box = LocalSandboxEnvironment()
        self.gate = asyncio.Semaphore(width)
        self.python = python

    async def exec(self, cmd, **kwargs):
        async with self.gate:
            env = {"OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
            return await self.box.exec([self.python, *cmd[1:]], env=env, timeout=kwargs.get("timeout"))

    async def read_file(self, file, text=True):
        return await self.box.read_file(file, text)


async def with_local(python: str, width: int, problems, targets) -> int:
    env = _Gated(python, width)
    try:
        return await our_scorer(env, problems, targets)
    finally:
        env.box.directory.cleanup()


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - start
    print(f"{label:<52} {wall:8.1f} s", flush=True)
    return wall, out


def main() -> None:
    cpus = os.cpu_count() or 1
    runtime = ensure_runtime()
    h5 = ensure_dev_targets()
    targets = TargetFile(h5)
    problems = load_problems("dev")
    steps = [(p, s) for p in problems for s in p.scored_steps]
    python = str(runtime.python)
    print(f"{len(steps)} gold dev steps, {cpus} CPUs, sandbox mode {describe()['mode']}")
    base, (base_passed, own) = timed(
        "original way: fresh python per step, sequential", lambda: original_way(python, h5, steps)
    )
    loc, loc_passed = timed(
        f"Inspect local sandbox, {cpus} at a time",
        lambda: asyncio.run(with_local(python, cpus, problems, targets)),
    )
    ours, our_passed = timed(
        "scievals sandbox (default)", lambda: asyncio.run(with_ours(problems, targets))
    )
    floor = max(sum(own) / cpus, max(own))
    print(f"passed: original {base_passed}/50, local {loc_passed}/50, ours {our_passed}/50")
    print(
        f"steps' own work: {sum(own):.1f} s CPU (longest step {max(own):.1f} s); "
        f"floor {floor:.1f} s on {cpus} CPUs"
    )
    print(
        f"ratios: original/ours {base / ours:.2f}x, local/ours {loc / ours:.2f}x, "
        f"ours/floor {ours / floor:.2f}x (aim: <= 1.3)"
    )


if __name__ == "__main__":
    sys.exit(main())
