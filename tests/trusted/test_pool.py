"""The trusted worker pool's limits, each shown with the probe job: a job over its CPU, memory
or wall clock, one that crashes, one whose worker is killed from outside, each fails alone and
clearly, and the next job finds a working worker. Plus: jobs run in parallel, workers are
isolated interpreters with their limits set, answers never pass through pickle, and workers
die with the harness."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from timing import HANG_S, must_end, wait_until

from scievals.trusted.pool import MEMORY_BOUNDS, JobFailed, WorkerPool, memory_limit, out_of_memory
from scievals.trusted.protocol import MAX_ANSWER_BYTES

PROBE = "trusted.probe"


@pytest.fixture(scope="module")
def pool():
    shared = WorkerPool(2)
    shared.warm()
    yield shared
    shared.close()


def _fails(
    pool: WorkerPool, args: tuple, seconds: float = 10, cpu: float | None = None
) -> JobFailed:
    with must_end(f"a failing job {args}"), pytest.raises(JobFailed) as caught:
        pool.run(PROBE, args, seconds, cpu)
    assert pool.run(PROBE, ("echo", 7.0), 10) == 7.0, "the next job must find a working worker"
    return caught.value


def test_answers(pool):
    assert pool.run(PROBE, ("echo", 1.5), 10) == 1.5
    assert pool.run(PROBE, ("answer", 3), 10) == "xxx"


def test_over_cpu(pool):
    failed = _fails(pool, ("burn", 30.0), seconds=30, cpu=1)
    assert (failed.kind, str(failed)) == ("cpu", "used more than 1 s of CPU")


def test_over_memory(pool):
    failed = _fails(pool, ("allocate", 2 * memory_limit()))
    assert (failed.kind, str(failed)) == ("memory", out_of_memory())
    assert MEMORY_BOUNDS[0] <= memory_limit() <= MEMORY_BOUNDS[1]


def test_over_wall_clock(pool):
    failed = _fails(pool, ("sleep", 2 * HANG_S), seconds=1)  # ended only by its limit
    assert (failed.kind, str(failed)) == ("wall", "ran past 1 s")


def test_segfault(pool):
    failed = _fails(pool, ("segfault",))
    assert (failed.kind, str(failed)) == ("crash", "crashed (SIGSEGV)")


def test_answer_over_the_bound(pool, monkeypatch):
    """The harness bounds what it reads itself, before reading it (here at 1 MiB, not 512)."""
    assert MAX_ANSWER_BYTES == 512 << 20
    monkeypatch.setattr("scievals.trusted.pool.MAX_ANSWER_BYTES", 1 << 20)
    failed = _fails(pool, ("answer", 2 << 20))
    assert (failed.kind, str(failed)) == ("answer", "gave an answer over 1 MiB")


def test_job_error_and_unknown_job(pool):
    assert str(_fails(pool, ("nonsense",))) == "failed: ValueError: unknown probe action 'nonsense'"
    with pytest.raises(JobFailed, match="unknown job 'os.system'"):
        pool.run("os.system", ("true",), 10)


def test_worker_killed_from_outside(pool):
    """Killed during a job: that job fails; killed while idle: nothing fails (replaced)."""
    result: dict[str, object] = {}

    def busy() -> None:
        try:
            result["answer"] = pool.run(PROBE, ("sleep", 30.0), 60)
        except JobFailed as exc:
            result["failed"] = exc

    assert pool.run(PROBE, ("echo", 1.0), 60) == 1.0  # a ready worker takes the next job
    thread = threading.Thread(target=busy)
    thread.start()
    time.sleep(1.0)
    for pid in pool.pids():  # the busy worker and the idle one
        os.kill(pid, signal.SIGKILL)
    thread.join(HANG_S)
    failed = result.get("failed")
    assert isinstance(failed, JobFailed), result
    assert (failed.kind, str(failed)) == ("killed", "was killed (SIGKILL)")
    assert [pool.run(PROBE, ("echo", 1.0), 10) for _ in range(3)] == [1.0] * 3


def _together(pool: WorkerPool, seconds: float) -> list[list[float]]:
    spans: list[list[float]] = []
    threads = [
        threading.Thread(
            target=lambda: spans.append(pool.run(PROBE, ("sleep", seconds), seconds + 60))
        )
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return spans


def test_jobs_run_in_parallel(pool):
    """Two jobs sent at once run at once. A worker just replaced may start seconds late on a busy
    machine, so the jobs get longer until they overlap: one at a time, they never would."""
    seconds = 1.5
    while True:
        (a0, a1), (b0, b1) = spans = _together(pool, seconds)
        if max(a0, b0) < min(a1, b1):
            return
        assert seconds < HANG_S, f"the two jobs did not overlap: {spans}"
        seconds *= 2


def test_workers_are_isolated_and_limited(pool):
    pid = pool.run(PROBE, ("pid",), 10)
    assert pid != os.getpid()
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[:2] == [sys.executable.encode(), b"-I"]
    limits = Path(f"/proc/{pid}/limits").read_text()
    assert f"Max address space         {memory_limit()}" in limits
    assert "Max core file size        0" in limits


def test_no_pickle_from_worker(pool, monkeypatch):
    """The harness never unpickles what a worker sends: answers are JSON (a tuple comes back
    as a list)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the harness unpickled something")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    assert pool.run(PROBE, ("sleep", 0.01), 10)[0] > 0
    assert pool.run(PROBE, ("echo", 2.0), 10) == 2.0


def test_a_worker_outlives_the_thread_that_first_used_it():
    """PR_SET_PDEATHSIG fires when the thread that started a worker ends: workers are started
    from the pool's own long-lived thread, so a job's thread ending kills nothing."""
    own = WorkerPool(1)
    try:
        pids: list[int] = []
        thread = threading.Thread(target=lambda: pids.append(own.run(PROBE, ("pid",), 30)))
        thread.start()
        thread.join()
        time.sleep(0.5)
        assert own.run(PROBE, ("pid",), 30) == pids[0]
    finally:
        own.close()


@pytest.mark.parametrize("how", ["sigkill", "exit"])
def test_workers_die_with_the_harness(tmp_path, how):
    harness = textwrap.dedent(
        """
        import sys, time
        from scievals.trusted.pool import WorkerPool
        pool = WorkerPool(1)
        print(pool.run("trusted.probe", ("pid",), 60), flush=True)
        if sys.argv[1] == "sigkill":
            time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", harness, how], stdout=subprocess.PIPE, text=True)
    worker = int(proc.stdout.readline())
    if how == "sigkill":
        proc.kill()
    proc.wait(HANG_S)
    wait_until(lambda: not _alive(worker), f"the end of worker {worker} with its harness ({how})")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
