"""What the trusted worker costs per step: the 50 gold dev steps' trusted re-runs, in process
(as a worker thread did it) and through the trusted pool (warm workers), on the same records.

Each gold step program runs once in a plain runtime interpreter (no sandbox: only the records
matter here). Then every step's re-run is timed ``--repeat`` times both ways; the overhead of a
step is the median through the pool minus the median in process (pickling the request, the two
pipes, JSON both ways, the thread hop). Usage: python bench/trusted_overhead.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scievals.sandbox.kept import keep_bytes
from scievals.sandbox.runtime import ensure_runtime
from scievals.scicode.data.dataset import load_problems
from scievals.scicode.data.targets import TargetFile
from scievals.scicode.grading.program import plans_for, step_program
from scievals.scicode.grading.replay import read_records, read_replayed, replay_tests
from scievals.scicode.grading.runner import REPLAY_JOB
from scievals.scicode.regenerate import ensure_dev_targets
from scievals.trusted.pool import WorkerPool


def _median_seconds(repeat: int, run: Callable[..., Any], *args: Any) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run(*args)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _in_process(path: str, plans: Any, dependencies: str, targets: list[Any]) -> None:
    replay_tests(plans, read_records(path), dependencies, targets)


def _through(pool: WorkerPool, job: tuple[Any, ...]) -> None:
    read_replayed(pool.run(REPLAY_JOB, job, 300))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    python = str(ensure_runtime().python)
    targets = TargetFile(ensure_dev_targets())
    jobs = []
    with tempfile.TemporaryDirectory() as tmp:
        for problem in load_problems("dev"):
            for step in problem.scored_steps:
                plans = plans_for(problem, step)
                program = step_program(problem, step, problem.gold_codes(), plans, "r.jsonl")
                subprocess.run([python, "-c", program], cwd=tmp, capture_output=True, check=True)
                kept = keep_bytes((Path(tmp) / "r.jsonl").read_bytes())  # as grading spools it
                wanted = targets.step(step.step_id, len(step.tests))
                jobs.append((step.step_id, (str(kept.path), plans, problem.dependencies, wanted)))
    pool = WorkerPool(1)
    started = time.perf_counter()
    pool.run(REPLAY_JOB, jobs[0][1], 300)
    first = time.perf_counter() - started
    rows = []
    for step_id, job in jobs:
        inside = _median_seconds(repeat, _in_process, *job)
        through = _median_seconds(repeat, _through, pool, job)
        rows.append((step_id, Path(job[0]).stat().st_size, inside, through))
    pool.close()
    for step_id, size, inside, through in sorted(rows, key=lambda r: r[3] - r[2])[-5:]:
        print(
            f"{step_id:6} {size / 1024:8.0f} KiB  {inside * 1e3:8.2f} ms  {through * 1e3:8.2f} ms"
        )
    overheads = [(through - inside) * 1e3 for _, _, inside, through in rows]
    print(f"first job on a new worker (start and imports): {first:.2f} s")
    print(
        f"per-step overhead over {len(rows)} steps: median {statistics.median(overheads):.2f} ms, "
        f"mean {statistics.mean(overheads):.2f} ms, max {max(overheads):.2f} ms; "
        f"total {sum(overheads):.0f} ms (in-process re-runs {sum(r[2] for r in rows) * 1e3:.0f} ms)"
    )


if __name__ == "__main__":
    main()
