"""In an eval, Inspect hands scorers its event-logging proxy of the sample's sandbox: step
programs must still get our sandbox's structured outcomes and a directory of their own."""

from __future__ import annotations

import os

import pytest
from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy

from scievals.sandbox.execution import (
    backend,
    own_directory,
    read_regular_file,
    run_program,
    scievals_sandbox,
)
from scievals.sandbox.files import NotRegularFileError
from scievals.sandbox.provider import ScievalsSandbox

from .sandbox_helpers import module_box, run

box = pytest.fixture(scope="module")(lambda: (yield from module_box()))


def test_the_proxy_is_seen_through(box):
    proxy = SandboxEnvironmentProxy(box)
    assert scievals_sandbox(proxy) is box
    chatty = "import sys; sys.stdout.write('x' * (4 << 20))"
    outcome = run(run_program(proxy, ["python3", "-c", chatty], timeout=60))
    assert outcome.limit == "output", outcome
    outcome = run(run_program(proxy, ["python3", "-c", chatty], timeout=60, output="tail"))
    assert outcome.limit is None and outcome.returncode == 0, outcome

    async def directories() -> tuple[str, str]:
        async with own_directory(proxy) as own:
            assert isinstance(own, ScievalsSandbox)
            return str(own.directory), str(box.directory)

    inner, outer = run(directories())
    assert inner != outer
    os.mkfifo(box.directory / "records.jsonl")
    with pytest.raises(NotRegularFileError):
        run(read_regular_file(proxy, "records.jsonl", 1 << 20))


class _Fleet:
    """What the fleet's view of a container is, to ``backend``: it leases containers."""

    def lease(self) -> None: ...


class _Foreign:
    """Any other provider's environment (a container of Inspect's docker, k8s, local)."""


def test_one_function_tells_the_backends_apart(box):
    """Native (as it is or behind Inspect's proxy), a fleet's view, any other sandbox: the
    kind, and the sandbox behind the proxy."""
    fleet, foreign = _Fleet(), _Foreign()
    cases = [
        (box, "native", box),
        (SandboxEnvironmentProxy(box), "native", box),
        (fleet, "fleet", fleet),
        (foreign, "container", foreign),
    ]
    for env, kind, inner in cases:
        assert backend(env) == (kind, inner)  # type: ignore[arg-type]
    assert scievals_sandbox(foreign) is None  # type: ignore[arg-type]
