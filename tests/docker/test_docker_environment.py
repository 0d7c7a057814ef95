"""A step program in a container of our compose file sees what a plain ``python`` run sees, but
for ``tests/sandbox/environment_facts.DIFFERENCES`` (the table in docs/sandbox.md): its CPU
clocks at full resolution (no RLIMIT_CPU: the runner counts CPU seconds), its memory this
machine's share, and the rest as in our own sandbox."""

from __future__ import annotations

import asyncio

import pytest

from scievals.sandbox.environments import open_environments
from tests.sandbox.environment_facts import official_facts, sandboxed_facts, undocumented

pytestmark = pytest.mark.slow


def test_the_probe_in_a_container_sees_a_plain_run(runtime_image):
    async def probe() -> dict:
        async with open_environments("docker") as envs:
            return await sandboxed_facts(envs["2024"])

    official, ours = official_facts(), asyncio.run(probe())
    for clock in ("process_time", "thread_time", "getrusage(RUSAGE_SELF)", "os.times"):
        assert ours[f"clock.{clock}"] == official[f"clock.{clock}"], clock
    assert ours["rlimit.RLIMIT_CPU"] == ours["rlimit.RLIMIT_AS"] == ["inf", "inf"]
    assert not undocumented(official, ours)
