"""Two ``scievals grade`` runs at once on one machine do not disturb each other: one as root, one
as an unprivileged user (its own HOME, cache and TMPDIR; ``userns`` mode), each on a few dev
steps. Both give the right verdicts, and neither leaves a process, a sample or zygote
directory, a mount or a cgroup behind. Sample and zygote directories, cgroups and uid locks are
named or placed so that runs cannot take or sweep each other's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from timing import HANG_S

from scievals.sandbox.enforce import enforcement
from scievals.sandbox.engine import UID_LOCKS, SandboxError, UidPool
from scievals.scicode.data.dataset import find_step

from .cache_helpers import linked_cache

pytestmark = pytest.mark.slow

USER = 61234  # no account needed: a uid and gid of nobody's
SYSTEM_PYTHON = f"/usr/bin/python3.{sys.version_info.minor}"
SCIEVALS = str(Path(sys.executable).with_name("scievals"))


def gold(step: str) -> str:
    return f"```python\n{find_step(step, 'dev')[1].gold_code}\n```"


# step -> (completion, passes)
ROOT_STEPS = {
    "51.1": (gold("51.1"), True),
    "51.2": (gold("51.2"), True),
    "70.1": (gold("70.1"), True),
    "70.2": ("```python\ndef hamiltonian_3nu(*a):\n    return 0\n```", False),
}
USER_STEPS = {
    "29.1": (gold("29.1"), True),
    "29.2": (gold("29.2"), True),
    "47.1": ("no code at all", False),
}


def user_harness(folder: Path) -> Path:
    """A ``scievals`` the user can run: the system's interpreter with this venv's packages
    (the harness's own interpreter may sit where the user cannot reach, as under /root)."""
    venv = folder / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    ours = Path(sys.prefix) / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
    site = venv / "lib" / f"python3.{sys.version_info.minor}" / "site-packages"
    (site / "scievals-checkout.pth").write_text(f"import site; site.addsitedir({str(ours)!r})\n")
    script = venv / "bin" / "scievals"
    script.write_text(
        f"#!{venv}/bin/python\nimport sys\nfrom scievals.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


def run_dir(name: str) -> Path:
    """A directory any user can enter (pytest's own are root's alone)."""
    path = Path(tempfile.mkdtemp(prefix=f"scievals-two-runs-{name}-"))
    path.chmod(0o755)
    return path


def owned_by(path: Path, uid: int) -> None:
    """Give the user the directories (never the hard-linked files: they are the main cache's)."""
    for p in [path, *path.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            os.chown(p, uid, uid)


def write_input(folder: Path, steps: dict[str, tuple[str, bool]]) -> Path:
    path = folder / "c.jsonl"
    path.write_text(
        "".join(json.dumps({"step": s, "completion": c}) + "\n" for s, (c, _) in steps.items())
    )
    path.chmod(0o644)
    return path


@pytest.fixture
def two_runs():
    if os.geteuid() != 0:
        pytest.skip("needs root (one run is root's, the other an unprivileged user's)")
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"no {SYSTEM_PYTHON} for the unprivileged user's run")
    root, user = run_dir("root"), run_dir("user")
    try:
        for folder in (root, user):
            (folder / "home").mkdir()
            (folder / "tmp").mkdir(mode=0o1777)
        linked_cache(root / "cache")
        linked_cache(user / "cache", python=SYSTEM_PYTHON)
        user_scievals = user_harness(user)
        owned_by(user / "home", USER)
        owned_by(user / "cache", USER)
        os.chown(user / "tmp", USER, USER)
        yield root, user, user_scievals
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(user, ignore_errors=True)


def start(folder: Path, scievals: str, uid: int | None, steps) -> subprocess.Popen[str]:
    write_input(folder, steps)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(folder / "home"),
        "SCIEVALS_CACHE": str(folder / "cache"),
        "TMPDIR": str(folder / "tmp"),
    }
    return subprocess.Popen(
        [scievals, "grade", "scicode", "c.jsonl", "--out", str(folder / "home" / "v.jsonl")],
        cwd=folder,
        env=env,
        user=uid,
        group=uid,
        extra_groups=[] if uid is not None else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def leftovers(pid: int, tmp: Path) -> list[str]:
    """What a finished harness process ``pid`` left: directories, mounts, cgroups, processes."""
    found = [str(p) for p in tmp.glob(f"scievals-*-{pid}-*")]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [line for line in mounts.splitlines() if f"scievals-sample-{pid}-" in line]
    groups = enforcement().cgroups
    for parent in {p for p in (groups.memory, groups.pids) if p}:
        found += [str(p) for p in parent.glob(f"scievals-{pid}-*")]
    for proc in Path("/proc").iterdir():
        try:
            if f"scievals-zygote-{pid}-" in os.readlink(proc / "cwd"):
                found.append(f"process {proc.name}")
        except OSError:
            continue
    return found


def test_a_root_run_and_a_user_run_at_once(two_runs):
    root, user, user_scievals = two_runs
    runs = [
        (root, start(root, SCIEVALS, None, ROOT_STEPS), ROOT_STEPS),
        (user, start(user, str(user_scievals), USER, USER_STEPS), USER_STEPS),
    ]
    for folder, proc, steps in runs:
        _, err = proc.communicate(timeout=HANG_S)
        assert proc.returncode == 0, err
        lines = [json.loads(x) for x in (folder / "home" / "v.jsonl").read_text().splitlines()]
        assert {v["step"]: v["passed"] for v in lines[:-1]} == {
            s: ok for s, (_, ok) in steps.items()
        }, err
    for folder, proc, _ in runs:
        assert leftovers(proc.pid, folder / "tmp") == []


def test_uid_locks_are_one_place_whatever_tmpdir(tmp_path, monkeypatch):
    """Two root runs with different TMPDIRs must not hand the same uid to two executions."""
    if os.geteuid() != 0:
        pytest.skip("uid slots are root's")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None
    try:
        assert UidPool().dir == UID_LOCKS
    finally:
        tempfile.tempdir = None


@pytest.mark.parametrize("how", ["world-writable", "a user's"])
def test_uid_locks_someone_else_can_write_are_refused(tmp_path, how):
    """Root opens lock files there: a directory another user controls could hold them all, or
    plant a symlink that root would truncate."""
    if os.geteuid() != 0:
        pytest.skip("uid slots are root's")
    locks = tmp_path / "locks"
    locks.mkdir()
    if how == "world-writable":
        locks.chmod(0o777)
    else:
        os.chown(locks, USER, USER)
    with pytest.raises(SandboxError, match="must be a directory of root's that only root writes"):
        UidPool(locks)
