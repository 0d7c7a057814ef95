"""The whole suite: ``--busy N`` runs it on a machine kept busy on purpose, the hang bound is
calibrated once per session (tests/timing.py), and Hypothesis has no wall-clock deadline.

The busy processes and the calibration belong to the process that starts the run (the xdist
controller, or pytest alone): workers inherit the calibration through the environment. A busy
process spins until pytest stops it, and ends by itself as soon as its parent is gone, so none
outlives pytest, killed or not.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings
from timing import SLOWNESS_ENV, hang_s, slowness

# A deadline is a wall-clock figure for speed: a busy machine fails it (linearity is tested as
# a CPU-time ratio instead, tests/timing.py).
settings.register_profile("scievals", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("scievals")

BUSY_MARK = "scievals-busy"  # in each busy process's command line
SPIN = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
parent = int(sys.argv[2])
while os.getppid() == parent:
    for _ in range(100_000):
        pass
"""
BUSY = pytest.StashKey[list[subprocess.Popen[bytes]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="keep N CPU-bound processes running beside the tests (a busy machine on purpose)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did both
        return
    config.stash[BUSY] = [
        subprocess.Popen([sys.executable, "-c", SPIN, BUSY_MARK, str(os.getpid())])
        for _ in range(config.getoption("busy"))
    ]
    os.environ[SLOWNESS_ENV] = repr(slowness())  # measured under the busy load


def pytest_report_header(config: pytest.Config) -> str:
    busy = len(config.stash.get(BUSY, []))
    return (
        f"hang bound {hang_s():.0f} s ({slowness():.2f}x the reference loop time), "
        f"busy processes: {busy}"
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    for proc in config.stash.get(BUSY, []):
        proc.kill()
        proc.wait()
