"""The suite's own timing tools (tests/timing.py, tests/conftest.py): the linear-time check tells
quadratic code from linear code, and ``--busy N`` keeps N processes spinning beside a run that
never outlive it, killed or not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUSY_MARK
from timing import HANG_S, assert_linear, wait_until

TESTS = Path(__file__).resolve().parent
PROBE = f"""
import os, time
from pathlib import Path

def busy():
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if int(stat[1]) == os.getpid() and {BUSY_MARK.encode()!r} in cmdline:
            found.append((int(entry.name), int(stat[11]) + int(stat[12])))
    return found

def test_probe():
    deadline = time.monotonic() + {HANG_S}
    while not all(ticks for _, ticks in busy()) and time.monotonic() < deadline:
        time.sleep(0.05)  # until each has used CPU time
    Path("busy.tmp").write_text(" ".join(str(pid) for pid, _ in busy()))
    os.rename("busy.tmp", "busy.txt")
    time.sleep(float(os.environ.get("PROBE_SLEEP", "0")))
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _pytest(folder: Path, busy: int, sleep: float = 0) -> subprocess.Popen[bytes]:
    (folder / "test_probe.py").write_text(PROBE)
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "PROBE_SLEEP": str(sleep)}
    argv = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q"]
    return subprocess.Popen([*argv, "--busy", str(busy), "test_probe.py"], cwd=folder, env=env)


def test_linear_check_fails_quadratic_code_and_passes_linear_code() -> None:
    def linear(text: str) -> int:
        return sum(1 for c in text if c == "a")

    def quadratic(text: str) -> int:
        return sum(1 for i in range(len(text)) for _ in range(i))

    assert assert_linear(linear, lambda n: "ab" * (n // 2), 2_000_000, "linear") == 1_000_000
    with pytest.raises(AssertionError, match="quadratic: .* not linear"):
        assert_linear(quadratic, lambda n: "ab" * (n // 2), 5_000, "quadratic")


def test_busy_processes_spin_beside_the_run_and_end_with_it(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, busy=2)
    assert proc.wait(HANG_S) == 0
    pids = [int(p) for p in (tmp_path / "busy.txt").read_text().split()]
    assert len(pids) == 2
    assert [p for p in pids if _alive(p)] == []


def test_busy_processes_end_when_pytest_is_killed(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, busy=1, sleep=2 * HANG_S)
    listed = tmp_path / "busy.txt"
    try:
        wait_until(lambda: listed.exists() or proc.poll() is not None, "the busy process listed")
        [pid] = [int(p) for p in listed.read_text().split()]
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    wait_until(lambda: not _alive(pid), f"the end of busy process {pid} after pytest was killed")
