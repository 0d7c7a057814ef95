"""Shared helpers for the sandbox tests: one sandbox per module, leak checks."""

from __future__ import annotations

import asyncio
import os
import tempfile
import textwrap
import time
from pathlib import Path

from timing import HANG_S

from scievals.sandbox import sampledir
from scievals.sandbox.ending import Ending
from scievals.sandbox.engine import engine
from scievals.sandbox.execution import run_program
from scievals.sandbox.inside.groups import tree
from scievals.sandbox.provider import ScievalsSandbox, ScievalsSandboxConfig

SECRET = "sk-scievals-test-secret-5f1c"
EMPTY_THE_DIRECTORY = """
import os, shutil
for p in os.listdir():
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    else:
        os.remove(p)
"""


def module_box(**config):
    """A sandbox for one test module: made, yielded, removed (use as a fixture generator)."""
    sb = make_box(**config)
    yield sb
    sb.cleanup()
    assert not sb.directory.exists()


def run(coro):
    return asyncio.run(coro)


def make_box(**config) -> ScievalsSandbox:
    os.environ["SCIEVALS_TEST_API_KEY"] = SECRET  # in the harness's environment, never the child's
    return ScievalsSandbox(ScievalsSandboxConfig(**config), engine())


def outcome(box: ScievalsSandbox, code: str, **kw) -> Ending:
    """Run Python ``code`` (dedented) through the structured API."""
    return run(run_program(box, ["python3", "-c", textwrap.dedent(code)], **kw))


def sandbox_pids() -> list[int]:
    """Live processes under this process's zygote (every execution's tree hangs there: orphans
    are adopted by the execution's own init, not by the host's), but for its idle standby."""
    zygote = engine().hello.get("pid")
    if not zygote:
        return []
    spare = standby(zygote)
    return [p for p in tree(zygote) if p != zygote and p not in spare and not _zombie(p)]


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def standby(zygote: int) -> set[int]:
    """The zygote's idle standby (a supervisor and its init, waiting for a request): the newest
    supervisor whose init has not forked a program."""
    idle = []
    for sup in children(zygote):
        inits = children(sup)
        if len(inits) == 1 and not children(inits[0]) and not _zombie(inits[0]):
            idle.append((_started(sup), sup, inits[0]))
    return set(max(idle)[1:]) if idle else set()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _started(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except OSError:
        return 0


def _standbys() -> set[int]:
    """The idle standbys of every engine this process runs (``sandbox status`` starts one per
    scoring runtime)."""
    from scievals.sandbox import engine as engine_module

    spares: set[int] = set()
    for eng in list(engine_module._engines.values()):
        zygote = eng.hello.get("pid")
        if zygote:
            spares |= set(standby(zygote))
    return spares


def our_cgroups() -> list[Path]:
    """Per-execution cgroups of this process that still exist, but for the standby's."""
    eng = engine()
    parents = {p for p in (eng.enforced.cgroups.memory, eng.enforced.cgroups.pids) if p}
    prefix = f"scievals-{os.getpid()}-"
    spare = {str(p) for p in _standbys()}
    found = []
    for parent in parents:
        for d in parent.iterdir():
            if not d.name.startswith(prefix) or d.name == f"{prefix}harness":
                continue
            try:
                procs = set((d / "cgroup.procs").read_text().split())
            except OSError:
                continue  # removed meanwhile
            if not procs or not procs <= spare:
                found.append(d)
    return found


def our_mounts() -> list[str]:
    """Mounts of this process's sample directories that belong to no live sandbox."""
    prefix = f"{tempfile.gettempdir()}/scievals-sample-{os.getpid()}-"
    live = {str(p) for p in sampledir.live()}
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if point.startswith(prefix) and point not in live:
            points.append(point)
    return points


def our_dirs() -> list[Path]:
    """Sample and zygote directories of this process that belong to nothing live."""
    tmp = Path(tempfile.gettempdir())
    from scievals.sandbox import engine as engine_module

    engines = list(engine_module._engines.values())
    live = sampledir.live() | {e._dir for e in engines if e._dir is not None}
    names = (f"scievals-sample-{os.getpid()}-", f"scievals-zygote-{os.getpid()}-")
    return [p for p in tmp.iterdir() if p.name.startswith(names) and p not in live]


def assert_no_leftovers() -> None:
    """Every execution's processes, cgroups, mounts and directories are gone (supervisors may take
    a moment to exit)."""
    deadline = time.monotonic() + HANG_S
    while (sandbox_pids() or our_cgroups()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_pids() == []
    assert our_cgroups() == []
    assert our_mounts() == []
    assert our_dirs() == []
