"""Honest code that reads the machine gets the official verdict through the real grader: code
that times itself with any CPU clock (78.3 picks its timestep by timing runs), and code whose
intermediates take several GiB (10.11's test builds a 32-million-point grid). Each case runs the
official way (``official_runner``) and through ``grade()``, and the verdicts must agree; a step
over the memory limit fails naming it."""

from __future__ import annotations

import asyncio

import pytest

from scievals.sandbox.limits import Limits
from scievals.scicode.data.dataset import find_step
from scievals.scicode.grade import grade

from .conftest import gold
from .test_honest_corpus import extracted

pytestmark = pytest.mark.slow

CLOCKS = {
    "process_time": "time.process_time()",
    "thread_time": "time.thread_time()",
    "getrusage": "sum(resource.getrusage(resource.RUSAGE_SELF)[:2])",
    "os.times": "sum(os.times()[:2])",
}
"""78.3's gold code times each candidate timestep with time.time(); these clocks instead. A
clock that does not move during the 1-step run of dt = 10 makes the 10 s step look free, and
the function returns a 2-point trajectory: os.times (10 ms steps) does that in a plain run too;
process_time did it only in the sandbox, while an RLIMIT_CPU made it tick-granular."""

FINE_CLOCKS = ("process_time", "thread_time", "getrusage")
"""The clocks with which the official run passes: agreement on them is not both failing."""

GRID_AS_LIST = """
import numpy as np

def generate_gpoints(recvec, gmax):
    points = []
    for i in range(gmax + 1):
        for j in range(-gmax, gmax + 1):
            for k in range(-gmax, gmax + 1):
                if (i, j, k) > (0, 0, 0):
                    points.append((i, j, k))
    return np.array(points) @ (2 * np.pi * recvec)
"""
"""10.6 with the half-space grid as a list of tuples: 4.9 GiB resident on 10.11's test (gmax
200) in a plain run; it failed as `MemoryError: Unable to allocate 738 MiB` under the sandbox's
former 4 GiB address-space limit."""

SQUARES_AS_LISTS = """
import numpy as np

def select_big_weights(gpoints_all, cell_volume, alpha, tol=1e-10):
    xs, ys, zs = (gpoints_all[:, axis].tolist() for axis in range(3))
    gsquared = np.array([x * x + y * y + z * z for x, y, z in zip(xs, ys, zs)])
    weights = 4 * np.pi * np.exp(-gsquared / (4 * alpha**2)) / (cell_volume * gsquared)
    keep = weights > tol
    return gpoints_all[keep], weights[keep]
"""
"""10.7 with the squared norms from Python lists of the coordinates: 5.9 GiB resident on
10.11's test in a plain run."""


def fenced(code: str) -> str:
    return f"Here is my solution.\n\n```python\n{code.strip()}\n```\n"


def replies_with(step_id: str, code: str) -> dict[str, str]:
    """Every step of the problem with its gold code, ``step_id`` with ``code``."""
    problem, _ = find_step(step_id, "dev")
    out = {s.step_id: gold(s.step_id) for s in problem.steps if s.gold_code}
    out[step_id] = fenced(code)
    return out


def timed_with(clock: str) -> str:
    code = find_step("78.3", "dev")[1].gold_code
    assert code and code.count("time.time()") == 2
    return "import os\nimport resource\nimport time\n\n" + code.replace("time.time()", clock)


def both_ways(official_runner, replies: dict[str, str], step_id: str):
    """(official verdict, our verdict) of ``step_id``, one after the other (each may need
    several GiB)."""
    errors: dict[str, str] = {}
    official = official_runner([step_id], extracted(replies), errors)[step_id]
    verdicts, _ = asyncio.run(grade(replies, split="dev"))
    ours = next(v for v in verdicts if v["step"] == step_id)
    return official, ours, errors.get(step_id, "")


@pytest.mark.parametrize("clock", CLOCKS)
def test_self_timing_with_a_cpu_clock_gets_the_official_verdict(official_runner, clock):
    official, ours, error = both_ways(
        official_runner, replies_with("78.3", timed_with(CLOCKS[clock])), "78.3"
    )
    assert ours["passed"] == official, (clock, ours["reason"], error)
    if clock in FINE_CLOCKS:
        assert official, error


@pytest.mark.parametrize(
    "step_id, code", [("10.6", GRID_AS_LIST), ("10.7", SQUARES_AS_LISTS)], ids=["10.6", "10.7"]
)
def test_large_honest_intermediates_get_the_official_verdict(official_runner, step_id, code):
    official, ours, error = both_ways(official_runner, replies_with(step_id, code), "10.11")
    assert official, error
    assert ours["passed"], (ours["reason_kind"], ours["reason"])


def test_a_step_over_the_memory_limit_fails_naming_it():
    gib = Limits().memory_gib
    hog = f"_held = b'x' * {int((gib + 0.5) * 2**30)}\n\n" + find_step("10.1", "dev")[1].gold_code
    verdicts, _ = asyncio.run(grade({"10.1": fenced(hog)}, split="dev"))
    (verdict,) = verdicts
    assert (verdict["passed"], verdict["reason_kind"]) == (False, "limit"), verdict
    assert f"memory limit ({gib:g} GiB)" in verdict["reason"]
