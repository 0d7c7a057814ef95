"""The hostile corpus of ``tests/scicode/test_hostile_grading.py`` in Inspect's docker sandbox.

The same attack tables (imported, not copied), the same runs (gold code for every earlier step
of the attacked problem, gold bystanders of other problems), the real grader
(``grade(..., sandbox="docker")``: one container for the call, our compose file). Each attack
must get the verdict it gets in our sandbox: fail with a clear reason (or pass, for a class's
honest control), with the same reason kind where the table names one, unless ``DIFFERS`` says
why a container gives another; every gold step beside it passes; no container or volume is left.
One test per class (its failures name their attacks), so that test workers share the classes.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest

from tests.scicode import test_hostile_grading as hostile

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image", "dev_targets")]

BOUND = 240.0  # seconds for one grade() call (a container start, then the batch's programs)
AT_ONCE = 3  # grade() calls (containers) at once; the step queue still runs 2 programs at once

# Where a container gives another verdict than our sandbox, and why. "kind": the table's reason
# kind is ours alone (the attack still fails clearly); "skip": the attack is not run here;
# "shared": the attack also spoils other steps' records (they fail, as unreadable records, and
# never pass): a container is one working directory for every program of a grade() call (of
# a sample, in an eval), where our sandbox gives each program a directory of its own.
SHARED = (
    "it appends to every records file it finds; in a container those of the other programs "
    "of the call are in the same working directory"
)
DIFFERS: dict[str, tuple[str, str]] = {
    "forge-records-file-by-name": ("shared", SHARED),
    "forge-every-file-in-cwd": ("shared", SHARED),
    "disk-8-files-of-200-mib": (
        "skip",
        "the container's working directory is a volume without a size cap (Inspect refuses "
        "volume driver options and docker cp cannot read a tmpfs): 1.6 GB would land on the "
        "host's disk",
    ),
    "memfd-5-gib": (
        "kind",
        "the container's memory cgroup kills the program (exit 137); Docker says no more, so "
        "the verdict names the crash, not a structured memory limit",
    ),
    "fork-bomb-catching-errors": (
        "kind",
        "pids_limit refuses the forks inside the container; Docker reports no limit, so the "
        "verdict is the program's own error or a crash",
    ),
    "thread-bomb": ("kind", "as fork-bomb-catching-errors: pids_limit, no structured limit"),
    "shell-fork-bomb": ("kind", "as fork-bomb-catching-errors: pids_limit, no structured limit"),
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


def run_in_docker(attacks: list[hostile.Attack], timeout: int = 60) -> list[Batch]:
    """Grade the attacks in the hostile module's batches, a few containers at once."""
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
                async with asyncio.timeout(BOUND):
                    verdicts, _ = await grade(completions, timeout=timeout, sandbox="docker")
            except Exception as exc:  # noqa: BLE001 - reported by the tests of this batch
                return Batch(batch, {}, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        return Batch(batch, {v["step"]: v for v in verdicts}, time.monotonic() - started, None)

    async def every() -> list[Batch]:
        gate = asyncio.Semaphore(AT_ONCE)
        return list(await asyncio.gather(*[one(b, gate) for b in batches if b]))

    return asyncio.run(every())


def check(batches: list[Batch], attack: hostile.Attack, shared_limits: bool = False) -> None:
    batch = next(b for b in batches if attack in b.attacks)
    assert batch.error is None, f"grade() failed: {batch.error}"
    assert batch.seconds < BOUND, f"grade() took {batch.seconds:.0f} s"
    verdict = batch.verdicts[attack.step]
    if attack.passes:
        assert verdict["passed"] is True, f"honest code failed in Docker: {verdict}"
    else:
        hostile.assert_fails_clearly(verdict)
    if attack.kind is not None and DIFFERS.get(attack.name, ("",))[0] != "kind":
        assert verdict["reason_kind"] == attack.kind, verdict
    assert verdict["reason_kind"] not in attack.not_kinds, verdict
    if shared_limits:
        return  # the gold steps beside it may fail: the container's limits are theirs too
    attacked = {a.step for a in batch.attacks if not a.passes}
    spoiled = {"missing_record", "invalid_record"} if _shares(batch) else set()
    wrong = {
        s: (v["reason_kind"], v["reason"])
        for s, v in batch.verdicts.items()
        if s not in attacked and not v["passed"] and v["reason_kind"] not in spoiled
    }
    assert wrong == {}, f"gold steps failed next to an attack in Docker: {wrong}"


def _shares(batch: Batch) -> bool:
    return any(DIFFERS.get(a.name, ("",))[0] == "shared" for a in batch.attacks)


CLASSES = {
    "values": hostile.VALUES,
    "self_checking": hostile.SELF_CHECKING,
    "fake_limits": hostile.FAKE_LIMITS,
    "hangs": hostile.HANGS,
    "machinery": hostile.MACHINERY,
    "unbounded": hostile.UNBOUNDED,
}
TIMEOUTS = {"hangs": hostile.HANG_TIMEOUT}
# Classes whose attacks exhaust what a container shares: its 64 pids and 4 GiB belong to every
# program of the grade() call (of the sample, in an eval), so a fork bomb or a memory hog can
# make the gold steps running beside it fail ("fork system call failed: Resource temporarily
# unavailable" from the exec wrapper). Ours limits each program alone. The attacks still fail.
SHARED_LIMITS = {"machinery"}
LINGER = 60.0  # seconds a container of a finished grade() call may take to go


@pytest.mark.parametrize("name", list(CLASSES))
def test_class_gets_its_verdicts_in_docker(name):
    """One test per class, so that test workers split the classes instead of each running
    them all; the failures name their attacks."""
    batches = run_in_docker(CLASSES[name], TIMEOUTS.get(name, 60))
    at_end = _leftovers()
    failures = []
    for attack in CLASSES[name]:
        if DIFFERS.get(attack.name, ("",))[0] == "skip":
            continue
        try:
            check(batches, attack, name in SHARED_LIMITS)
        except AssertionError as exc:
            failures.append(f"{attack.name}@{attack.step}: {str(exc).splitlines()[0]}")
    assert failures == [], "\n".join(failures)
    # Other tests' grade() calls may run meanwhile: what was there when this class ended must
    # be gone soon after.
    deadline = time.monotonic() + LINGER
    while at_end & _leftovers() and time.monotonic() < deadline:
        time.sleep(1)
    assert not at_end & _leftovers(), f"left behind: {sorted(at_end & _leftovers())}"


@pytest.mark.parametrize("name", [n for n, (how, _) in DIFFERS.items() if how == "skip"])
def test_attacks_not_run_in_docker_say_why(name):
    pytest.skip(f"{name} is not run in Docker: {DIFFERS[name][1]}")
