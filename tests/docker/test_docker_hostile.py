"""The hostile corpus of ``tests/scicode/test_hostile_grading.py`` in Inspect's docker sandbox.

The same attack tables (imported, not copied), the same runs (gold code for every earlier step
of the attacked problem, gold bystanders of other problems), the real grader
(``grade(..., sandbox="docker")``: the fleet of ``docker_pool.py``, our compose file). Each attack must
get the (pass, reason kind) it gets in our sandbox in the same run: fail with a clear reason (or
pass, for a class's honest control), with the reason kind the table names, unless ``DIFFERS``
says why a container gives another; every gold step beside it passes; no container is left.
One test per class (its failures name their attacks), so that test workers share the classes.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest
from timing import HANG_S

from tests.scicode import test_hostile_grading as hostile

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image", "dev_targets")]

AT_ONCE = 3  # grade() calls (containers) at once; the step queue still runs 2 programs at once

# Where a container gives another verdict than our sandbox, and why. "kind": the table's reason
# kind is ours alone (the attack still fails clearly); "skip": the attack is not run here.
DIFFERS: dict[str, tuple[str, str]] = {
    "records-growing-forever": (
        "kind",
        "a forked writer outlives the program and appends until the records are read: how far it "
        "got by then (over the bound, or lines that are no record) is the host's speed, in either "
        "sandbox; the step fails both ways",
    ),
}


@dataclass
class Batch:
    attacks: list[hostile.Attack]
    verdicts: dict[str, dict[str, Any]]
    seconds: float
    error: str | None


def _leftovers() -> set[str]:
    """Containers and volumes of grade() calls: Inspect names a project after the first 12
    characters of its task name (``environments.TASK_NAME``), ``inspect-scievals-gra-i...``."""
    containers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "name=inspect-scievals-gra"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    volumes = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", "name=inspect-scievals-gra"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return set(containers) | set(volumes)


def run_in(attacks: list[hostile.Attack], timeout: int, sandbox: str) -> list[Batch]:
    """Grade the attacks in the hostile module's batches, a few grade() calls at once."""
    from scievals.scicode.grade import grade

    batches = [
        [a for a in batch if DIFFERS.get(a.name, ("",))[0] != "skip"]
        for batch in hostile.pack(attacks)
    ]

    async def one(batch: list[hostile.Attack], gate: asyncio.Semaphore) -> Batch:
        completions = hostile.with_gold_context({a.step: a.code for a in batch})
        completions.update(hostile.bystanders({a.step for a in batch}))
        async with gate:
            started = time.monotonic()
            try:
                async with asyncio.timeout(HANG_S):  # a container start, then the programs
                    verdicts, _ = await grade(completions, timeout=timeout, sandbox=sandbox)
            except Exception as exc:  # noqa: BLE001 - reported by the tests of this batch
                return Batch(batch, {}, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        return Batch(batch, {v["step"]: v for v in verdicts}, time.monotonic() - started, None)

    async def every() -> list[Batch]:
        gate = asyncio.Semaphore(AT_ONCE)
        return list(await asyncio.gather(*[one(b, gate) for b in batches if b]))

    return asyncio.run(every())


def check(batches: list[Batch], attack: hostile.Attack) -> None:
    batch = next(b for b in batches if attack in b.attacks)
    assert batch.error is None, f"grade() failed: {batch.error}"
    assert batch.seconds < HANG_S, f"grade() took {batch.seconds:.0f} s (the hang bound)"
    verdict = batch.verdicts[attack.step]
    if attack.passes:
        assert verdict["passed"] is True, f"honest code failed in Docker: {verdict}"
    else:
        hostile.assert_fails_clearly(verdict)
    if attack.kind is not None and DIFFERS.get(attack.name, ("",))[0] != "kind":
        assert verdict["reason_kind"] == attack.kind, verdict
    assert verdict["reason_kind"] not in attack.not_kinds, verdict
    attacked = {a.step for a in batch.attacks if not a.passes}
    wrong = {
        s: (v["reason_kind"], v["reason"])
        for s, v in batch.verdicts.items()
        if s not in attacked and not v["passed"]
    }
    assert wrong == {}, f"gold steps failed next to an attack in Docker: {wrong}"


def parity(docker: list[Batch], native: list[Batch], attack: hostile.Attack) -> None:
    """The attack's step gets the same (pass, reason kind) in Docker as in our sandbox."""
    ours = next(b for b in native if attack in b.attacks)
    theirs = next(b for b in docker if attack in b.attacks)
    assert ours.error is None, f"grade() failed in our sandbox: {ours.error}"
    mine, other = ours.verdicts[attack.step], theirs.verdicts[attack.step]
    assert (other["passed"], other["reason_kind"]) == (mine["passed"], mine["reason_kind"]), (
        f"Docker {other['reason_kind']} ({other['reason']}) against ours "
        f"{mine['reason_kind']} ({mine['reason']})"
    )


CLASSES = {
    "values": hostile.VALUES,
    "self_checking": hostile.SELF_CHECKING,
    "fake_limits": hostile.FAKE_LIMITS,
    "hangs": hostile.HANGS,
    "machinery": hostile.MACHINERY,
    "signals": hostile.SIGNALS,
    "unbounded": hostile.UNBOUNDED,
}
TIMEOUTS = {"hangs": hostile.HANG_TIMEOUT}


@pytest.mark.parametrize("name", list(CLASSES))
def test_class_gets_our_verdicts_in_docker(name):
    """One test per class, so that test workers split the classes instead of each running
    them all; the failures name their attacks. Each attack must get the verdict it gets in
    our sandbox, graded in the same run."""
    before = _leftovers()
    timeout = TIMEOUTS.get(name, 60)
    docker = run_in(CLASSES[name], timeout, "docker")
    at_end = _leftovers() - before
    native = run_in(CLASSES[name], timeout, "scievals")
    failures = []
    for attack in CLASSES[name]:
        if DIFFERS.get(attack.name, ("",))[0] == "skip":
            continue
        try:
            check(docker, attack)
            if DIFFERS.get(attack.name, ("",))[0] != "kind":
                parity(docker, native, attack)
        except AssertionError as exc:
            failures.append(f"{attack.name}@{attack.step}: {str(exc).splitlines()[0]}")
    assert failures == [], "\n".join(failures)
    # Other tests' grade() calls may run meanwhile: what came while this class ran must be gone
    # soon after it ended (what was there before is not this class's doing).
    deadline = time.monotonic() + HANG_S
    while at_end & _leftovers() and time.monotonic() < deadline:
        time.sleep(1)
    assert not at_end & _leftovers(), f"left behind: {sorted(at_end & _leftovers())}"
