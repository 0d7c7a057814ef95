"""A sandboxed program sees what a plain ``python`` run sees, in every mode this host allows,
but for the differences ``environment_facts.DIFFERENCES`` lists (and docs/sandbox.md shows):
CPU clocks at full resolution, the CPU count, environment, place, locale, limits, /proc, stdin,
signals (``env_probe.py`` prints them). Docker: ``tests/docker/test_docker_environment.py``."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from scievals.sandbox.engine import Engine, SandboxError
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

from .environment_facts import (
    DIFFERENCES,
    HARNESS_ENV,
    differences,
    official_facts,
    sandboxed_facts,
    undocumented,
)
from .sandbox_helpers import run

pytestmark = pytest.mark.slow

MODES = ("unshare", "userns", "rlimits-only")
CPU_CLOCKS = ("process_time", "thread_time", "getrusage(RUSAGE_SELF)", "os.times")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"


@pytest.fixture(scope="module")
def official():
    return official_facts()


@pytest.fixture(scope="module", params=MODES)
def ours(request):
    """The probe's facts in one isolation mode (skipped where the host does not allow it)."""
    try:
        eng = Engine(mode=request.param)
    except SandboxError as exc:
        pytest.skip(f"{request.param} mode is not available here: {exc}")
    box = ScievalsSandbox(ScievalsSandboxConfig(), eng)
    try:
        yield run(sandboxed_facts(box))
    finally:
        box.cleanup()
        eng.close()


def test_cpu_clocks_have_plain_run_resolution(official, ours):
    """A finite RLIMIT_CPU made process_time step by 1-4 ms (the kernel's tick-updated group
    clock); the supervisor counts CPU seconds instead, so each clock steps as in a plain run."""
    assert official["clock.process_time"] == "fine"
    for clock in CPU_CLOCKS:
        assert ours[f"clock.{clock}"] == official[f"clock.{clock}"], clock


def test_the_probe_sees_a_plain_run_but_for_the_documented_differences(official, ours):
    assert not undocumented(official, ours)
    assert ours["rlimit.RLIMIT_CPU"] == ["inf", "inf"]
    assert ours["stdio.stdin"] == "/dev/null" and ours["stdio.stdin reads"] == "b''"
    assert ours["python.__main__ dunders"] == official["python.__main__ dunders"]


HARNESS_IGNORES = (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGTSTP, signal.SIGTTOU)


def test_a_program_starts_with_default_signals_whatever_the_harness_ignores(official):
    """A harness started under nohup or in a background job ignores signals, and the zygote it
    starts inherits them; a program starts with a plain run's dispositions all the same."""
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in HARNESS_IGNORES}
    try:
        eng = Engine()
        eng.ensure_started()  # the zygote starts now, with the signals ignored
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    box = ScievalsSandbox(ScievalsSandboxConfig(), eng)
    try:
        facts = run(sandboxed_facts(box))
    finally:
        box.cleanup()
        eng.close()
    shown = [fact for fact in official if fact.startswith("signal.") or fact.endswith("SigIgn")]
    assert "proc.status SigIgn" in shown and "signal.SIGQUIT" in shown
    assert {fact: facts[fact] for fact in shown} == {fact: official[fact] for fact in shown}


def test_the_documented_differences_are_the_docs_table():
    table = {
        match.group(1)
        for match in re.finditer(r"^\| `([^`]+)` \|", DOCS.read_text(), flags=re.MULTILINE)
    }
    assert set(DIFFERENCES) <= table, set(DIFFERENCES) - table


def test_differences_name_every_changed_fact():
    plain = {"env.SECRET_KEY": "<set>", "env.HOME": "/root", "clock.process_time": "fine"}
    mine = {"env.HOME": "/tmp", "clock.process_time": "4 ms", "env.TMPDIR": "/tmp"}
    assert differences(plain, mine) == {
        HARNESS_ENV: ("set", "absent"),
        "clock.process_time": ("fine", "4 ms"),
        "env.HOME": ("/root", "/tmp"),
        "env.TMPDIR": (None, "/tmp"),
    }
    assert undocumented(plain, mine) == ["clock.process_time: plain run 'fine', ours '4 ms'"]
