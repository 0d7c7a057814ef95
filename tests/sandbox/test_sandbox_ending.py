"""``run_program`` on sandboxes that are not ours (docker, local, k8s): what ``exec`` lets us
know, and one retry of a machinery failure before an ``infrastructure`` outcome."""

from __future__ import annotations

import time

import pytest
from inspect_ai.util import ExecResult, OutputLimitExceededError
from inspect_ai.util._sandbox.local import LocalSandboxEnvironment
from timing import HANG_S

from scievals.sandbox.ending import LIMITS, Ending
from scievals.sandbox.execution import run_program

from .sandbox_helpers import run


@pytest.fixture
def local():
    env = LocalSandboxEnvironment()
    yield env
    env.directory.cleanup()


def test_exit_codes_timeouts_and_sigkill(local):
    started = time.monotonic()
    res = run(run_program(local, ["bash", "-c", "echo out; echo err >&2; exit 3"]))
    assert res == Ending(3, "out\n", "err\n", None, None, res.seconds)
    assert 0 <= res.seconds <= time.monotonic() - started  # the program's time, in seconds
    res = run(run_program(local, ["sleep", f"{2 * HANG_S:.0f}"], timeout=1))
    assert (res.returncode, res.limit, res.reason) == (None, "timeout", "timeout (1 s)")
    assert res.seconds < HANG_S, "the program was not stopped at its timeout"
    res = run(run_program(local, ["bash", "-c", "kill -9 $$"]))
    assert res.returncode in (137, -9) and res.limit is None  # docker: 137; local: -9
    assert res.reason == "killed by SIGKILL (a container limit?)"
    res = run(run_program(local, ["bash", "-c", "echo 'scievals-sandbox: killed: memory limit'"]))
    assert (res.returncode, res.limit, res.reason) == (0, None, None)


class Flaky(LocalSandboxEnvironment):
    """A sandbox whose machinery fails ``failures`` times before working."""

    def __init__(self, failures: int, error: Exception) -> None:
        super().__init__()
        self.failures, self.error, self.calls = failures, error, 0

    async def exec(self, cmd, *args, **kwargs) -> ExecResult[str]:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return await super().exec(cmd, *args, **kwargs)


@pytest.mark.parametrize(
    "error", [RuntimeError("docker compose failed"), ConnectionResetError(), EOFError()]
)
def test_machinery_failures_are_retried_once(error):
    once = Flaky(1, error)
    twice = Flaky(2, error)
    try:
        res = run(run_program(once, ["echo", "hi"]))
        assert (res.returncode, res.stdout, res.infrastructure, once.calls) == (0, "hi\n", None, 2)
        res = run(run_program(twice, ["echo", "hi"]))
        assert res.infrastructure and res.infrastructure.startswith("the sandbox failed twice")
        assert twice.calls == 2 and res.limit is None
    finally:
        once.directory.cleanup()
        twice.directory.cleanup()


def test_output_limit_of_a_foreign_sandbox():
    flood = Flaky(1, OutputLimitExceededError("10 MiB", "xxx"))
    try:
        res = run(run_program(flood, ["true"]))
        assert (res.limit, res.reason, res.stdout) == ("output", "output limit (10 MiB)", "xxx")
        assert flood.calls == 1  # a program's output is not a machinery failure: no retry
    finally:
        flood.directory.cleanup()


def test_limit_names():
    assert LIMITS == (
        "timeout",
        "wall_clock",
        "memory",
        "cpu",
        "processes",
        "output",
        "file_size",
        "disk",
    )
