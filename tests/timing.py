"""Time in tests on a machine that may be busy: one hang bound, and linearity as a CPU-time ratio.

A bound on time in a test means one of two things. "It must end" (a hang, a bomb): the test
waits at most ``HANG_S``, a generous bound that only a hang reaches, scaled by how slow this
machine runs a fixed loop now (measured once per session, in the process that starts the run,
after the ``--busy`` load has started; see tests/conftest.py: a conftest calls ``hang_s()`` when
it needs the bound, as importing ``HANG_S`` measures it). "It is linear, not quadratic":
``assert_linear`` compares the CPU time of a call with that of the same call on an input a tenth
of the size, in the same test. No test asserts a wall-clock figure for speed: bench/ measures it.
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, partial
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Nothing the suite waits for comes near it on a quiet 2-core machine (the longest: the 50 gold
# dev steps graded beside the other xdist worker, about 2 minutes).
BASE_HANG_S = 600.0
OFFICIAL_TIMEOUT = 1800
"""Seconds the official SciCode harness gives a step program: what tests grading honest or gold
code give it too, so that a busy machine cannot turn a slow right answer into a timeout."""
REFERENCE_S = 0.09  # the calibration loop's median on a quiet 2-core machine (2026-12)
SLOWNESS_ENV = "SCIEVALS_TEST_SLOWNESS"  # the session's calibration, inherited by xdist workers
SIZE_RATIO = 10  # the large input of assert_linear is this many times the small one
# Linear code costs SIZE_RATIO times more on the large input, quadratic code SIZE_RATIO**2 times:
# the limit is their geometric mean, a factor of about 3 from either.
LINEAR_LIMIT = SIZE_RATIO**1.5
MEASURED_S = 0.02  # CPU seconds a size's calls are repeated to, so that fast calls count too
# CPU seconds that a large call may cost beyond the ratio: below it, costs are the allocator's (a
# million-character copy page-faults fresh memory that a tenth of it finds in the heap: 0.4 ms
# against 2.5 us, 150x, for linear code), while quadratic work on the worst cases costs seconds.
FLOOR_S = 0.05


def _loop() -> int:
    total = 0
    for i in range(3_000_000):
        total += i * i
    return total


def calibrate() -> float:
    """How many times the reference time the loop takes now (never below 1: a fast machine keeps
    the base bound); a median of five, so one preemption does not decide it."""
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        _loop()
        runs.append(time.perf_counter() - started)
    return max(1.0, statistics.median(runs) / REFERENCE_S)


@cache
def slowness() -> float:
    """The session's calibration: the controller's, where it handed one down, else measured now."""
    return float(os.environ.get(SLOWNESS_ENV) or calibrate())


def hang_s() -> float:
    """The hang bound in seconds: the base, scaled by the session's calibration."""
    return BASE_HANG_S * slowness()


def __getattr__(name: str) -> float:
    """``HANG_S``, measured on first use rather than on import, so that a conftest importing
    this module before the busy load starts does not calibrate without it."""
    if name == "HANG_S":
        return hang_s()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@contextmanager
def must_end(what: str) -> Iterator[None]:
    """Fail when the block ran for the hang bound or longer: ``what`` would have hung."""
    started, bound = time.monotonic(), hang_s()
    yield
    took = time.monotonic() - started
    assert took < bound, f"{what} took {took:.0f} s, past the hang bound ({bound:.0f} s)"


def wait_until(condition: Callable[[], object], what: str) -> None:
    """Poll ``condition`` until it holds, failing at the hang bound: ``what`` never happened."""
    bound = hang_s()
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {bound:.0f} s (the hang bound)"
        time.sleep(0.05)


def cpu_per_call(call: Callable[[], R]) -> tuple[float, R]:
    """This thread's CPU seconds per call (the calls repeated until MEASURED_S have passed), and
    what the last call returned.

    CPU time, not wall time: other processes on the machine do not count. Collection is off,
    so that other tests' garbage is collected in neither measurement."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        calls, started = 0, time.thread_time()
        while (spent := time.thread_time() - started) < MEASURED_S or calls == 0:
            result = call()
            calls += 1
    finally:
        if enabled:
            gc.enable()
    return spent / calls, result


def assert_linear(call: Callable[[T], R], make: Callable[[int], T], n: int, what: str) -> R:
    """``call(make(n))``, failing when a call costs more than LINEAR_LIMIT times (plus FLOOR_S)
    the same call on ``make`` of a SIZE_RATIO-th of its size: it grows faster than linearly.

    Sizes n / SIZE_RATIO**2, n / SIZE_RATIO, then n: quadratic code fails at the first two,
    in seconds, before the largest size would take it minutes."""
    measured: list[tuple[int, float]] = []
    for size in (n // SIZE_RATIO**2, n // SIZE_RATIO, n):
        seconds, result = cpu_per_call(partial(call, make(size)))
        if measured:
            before, spent = measured[-1]
            assert seconds < LINEAR_LIMIT * spent + FLOOR_S, (
                f"{what}: {seconds:.3f} s of CPU at size {size:,} against {spent:.4f} s at "
                f"{before:,} ({seconds / spent:.0f}x for {SIZE_RATIO}x the input, limit "
                f"{LINEAR_LIMIT:.0f}x + {FLOOR_S} s): not linear"
            )
        measured.append((size, seconds))
    return result
