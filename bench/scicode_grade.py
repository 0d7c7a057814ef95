"""Grading the 50 gold SciCode dev steps: the commands users run, against the official way and
the floor, all in one run.

1. the official harness's way: one program per step (dependencies, earlier steps, this step, an
   h5 read of its targets, the tests), each run by a fresh ``python``, one after another;
2. ``scievals grade scicode gold.jsonl --split dev``, as a process, and the same with
   ``--runtimes 2024,2025`` (the second runtime only sees failures: none, for gold code);
3. ``scievals eval scicode --model scievals/reference --split dev``, as a process (Inspect runs
   the samples; the reference model answers with gold code);
4. 2 and 3 with ``--sandbox docker``: our compose file, its containers Inspect's docker
   provider starts, shared by the samples as a fleet (``docker_pool.py``) (skipped, saying why,
   where Docker does not answer or the image is not built: ``scievals sandbox image``).
The floor is the step programs' own work (CPU time after interpreter start-up and imports,
measured in way 1) divided by the CPUs, or the longest single step where that is larger. For
2 and 3 it prints the peak memory of the harness process (its own RSS) and of the whole process
tree, sandbox included (a memory cgroup's high-water mark, where cgroup v1 memory is
available; the containers' memory is Docker's, not in that tree). Usage:
python bench/scicode_grade.py [--skip-eval] [--skip-docker]
The Docker ways print their wall time and the harness's CPU against ours (the same command in
our sandbox, in the same run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from scievals.sandbox import describe
from scievals.sandbox.runtime import ensure_runtime
from scievals.scicode.data.dataset import Problem, Step, load_problems
from scievals.scicode.regenerate import ensure_dev_targets

SRC = Path(__file__).resolve().parents[1] / "src"
SCIEVALS = str(Path(sys.executable).with_name("scievals"))
CGROUP_V1 = Path("/sys/fs/cgroup/memory")
# What the original program imports before its tests (its parse module pulls these in).
PREAMBLE = (
    "import sys, time as __bench_time\n"
    f"sys.path.insert(0, {str(SRC)!r})\n"
    "import numpy, scipy, scipy.sparse, sympy, h5py\n"
    "from scievals.scicode.inside.compare import are_dicts_close, cmp_tuple_or_list\n"
    "from scievals.scicode.data.targets import read_step_targets\n"
    "__bench_t0 = __bench_time.process_time()\n"
)


def original_program(problem: Problem, step: Step, h5: Path) -> str:
    previous = "\n".join(problem.gold_codes()[s.step_id] for s in problem.earlier(step))
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


def original_way(
    python: str, h5: Path, steps: list[tuple[Problem, Step]]
) -> tuple[int, list[float]]:
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


def measured(cmd: list[str]) -> tuple[float, str, str, int, int | None, float]:
    """Run ``cmd``: wall seconds, stdout, stderr, the process's peak RSS, the tree's peak, and
    the harness's CPU seconds (its own and that of every process it waited for: the docker
    CLI processes it starts, the trusted workers; not what runs inside containers)."""
    group = None
    if os.geteuid() == 0 and (CGROUP_V1 / "memory.max_usage_in_bytes").exists():
        group = CGROUP_V1 / f"scievals-bench-{uuid.uuid4().hex[:8]}"
        group.mkdir()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=_join(group))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    tree = None
    if group is not None:
        tree = int((group / "memory.max_usage_in_bytes").read_text())
        group.rmdir()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed: {stderr.strip()[-500:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, stdout, stderr, usage.ru_maxrss * 1024, tree, cpu


def _join(group: Path | None):
    if group is None:
        return None
    return lambda: (group / "cgroup.procs").write_text(str(os.getpid()))


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.0f} MiB"


def main() -> None:
    cpus = os.cpu_count() or 1
    python = str(ensure_runtime().python)
    h5 = ensure_dev_targets()
    problems = load_problems("dev")
    steps = [(p, s) for p in problems for s in p.scored_steps]
    print(f"{len(steps)} gold dev steps, {cpus} CPUs, sandbox mode {describe()['mode']}")
    rows = []

    start = time.perf_counter()
    base_passed, own = original_way(python, h5, steps)
    base = time.perf_counter() - start
    rows.append(("official way: fresh python per step, sequential", base, base_passed, None, None))

    with tempfile.TemporaryDirectory() as tmp:
        gold = Path(tmp) / "gold.jsonl"
        gold.write_text(
            "".join(
                json.dumps({"step": s.step_id, "completion": f"```python\n{s.gold_code}\n```"})
                + "\n"
                for _, s in steps
            )
        )
        grade_cmd = [SCIEVALS, "grade", "scicode", str(gold), "--split", "dev"]
        wall, out, _, rss, tree, cpu = measured(grade_cmd)
        passed = json.loads(out.strip().splitlines()[-1])["summary"]["total_subproblems_solved"]
        rows.append(("scievals grade scicode (a process)", wall, passed, (rss, tree), cpu))
        one_runtime = wall
        wall, out, _, rss, tree, cpu = measured([*grade_cmd, "--runtimes", "2024,2025"])
        passed = json.loads(out.strip().splitlines()[-1])["summary"]["total_subproblems_solved"]
        rows.append(
            ("... --runtimes 2024,2025 (Verified's two runtimes)", wall, passed, (rss, tree), cpu)
        )
        second_runtime = wall / one_runtime
        eval_cmd = [SCIEVALS, "eval", "scicode", "--model", "scievals/reference", "--split", "dev"]
        if "--skip-eval" not in sys.argv:
            wall, out, err, rss, tree, cpu = measured([*eval_cmd, "--log-dir", tmp])
            log = max(Path(tmp).glob("*.eval"), key=lambda p: p.stat().st_mtime)
            rows.append(
                (
                    "scievals eval scicode --model scievals/reference",
                    wall,
                    _passed_steps(log),
                    (rss, tree),
                    cpu,
                )
            )
        why = "--skip-docker" if "--skip-docker" in sys.argv else _docker_unavailable()
        if why:
            print(f"docker ways skipped: {why}")
        else:
            wall, out, _, rss, _, cpu = measured([*grade_cmd, "--sandbox", "docker"])
            passed = json.loads(out.strip().splitlines()[-1])["summary"]["total_subproblems_solved"]
            rows.append(("scievals grade ... --sandbox docker", wall, passed, (rss, None), cpu))
            docker_log = Path(tmp, "docker")
            cmd = [*eval_cmd, "--sandbox", "docker", "--log-dir", str(docker_log)]
            wall, out, err, rss, _, cpu = measured(cmd)
            log = max(docker_log.glob("*.eval"), key=lambda p: p.stat().st_mtime)
            rows.append(
                (
                    "scievals eval ... --sandbox docker (the fleet)",
                    wall,
                    _passed_steps(log),
                    (rss, None),
                    cpu,
                )
            )

    floor = max(sum(own) / cpus, max(own))
    print(
        f"\n{'way':<60} {'wall':>8} {'passed':>7} {'/floor':>7} {'cpu':>8} "
        f"{'harness':>9} {'tree':>9}"
    )
    for label, wall, passed, memory, cpu in rows:
        harness, tree = memory if memory else (None, None)
        print(
            f"{label:<60} {wall:7.1f}s {passed:>4}/50 {wall / floor:6.2f}x "
            f"{'' if cpu is None else f'{cpu:7.1f}s':>8} {_mib(harness):>9} {_mib(tree):>9}"
        )
    print(
        f"\nsteps' own work: {sum(own):.1f} s CPU (longest step {max(own):.1f} s); "
        f"floor {floor:.1f} s on {cpus} CPUs"
    )
    by_label = {row[0].split(" (")[0]: row for row in rows}
    for label, wall, *_ in rows[1:]:
        print(f"official way / {label.split(' (')[0]}: {base / wall:.2f}x")
    print(f"two runtimes / one runtime (scievals grade): {second_runtime:.2f}x")
    for docker, ours in (
        ("scievals grade ... --sandbox docker", "scievals grade scicode"),
        ("scievals eval ... --sandbox docker", "scievals eval scicode --model scievals/reference"),
    ):
        if docker in by_label and ours in by_label:
            (_, d_wall, _, _, d_cpu), (_, o_wall, _, _, o_cpu) = by_label[docker], by_label[ours]
            print(f"{docker} / ours: wall {d_wall / o_wall:.2f}x, harness cpu {d_cpu / o_cpu:.2f}x")


def _docker_unavailable() -> str | None:
    from scievals.sandbox.image import image_problem

    probe = subprocess.run(["docker", "info"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "no Docker daemon answers (scripts/setup_docker.sh starts one)"
    return image_problem("2024")


def _passed_steps(log: Path) -> int:
    from inspect_ai.log import read_eval_log

    result = read_eval_log(str(log))
    metrics = {name: m.value for s in result.results.scores for name, m in s.metrics.items()}
    return int(metrics["total_subproblems_solved"])


if __name__ == "__main__":
    sys.exit(main())
