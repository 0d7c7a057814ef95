"""``scievals grade scicode --out`` under interrupts and beside a second run: the real command.

Ctrl-C once, twice, to the whole process group, a kill and a Ctrl-C together, or Ctrl-C again
while the process is already cleaning up: the run ends within seconds, says what it kept, keeps
every verdict it decided, and leaves no process of its sandbox running. A second run on the same
``--out`` is refused in one line while the first keeps every verdict.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from timing import HANG_S, slowness

from scievals.grade_out import GRACE_SECONDS

from .test_grade_resume import (
    FAST,
    SCIEVALS,
    SLEEP,
    SLOW,
    completions,
    grade,
    lines_of,
    one_line_error,
)

pytestmark = pytest.mark.slow

KEPT = (
    f"scievals grade scicode: interrupted: {len(FAST)} verdicts kept in v.jsonl.partial; "
    "run the same command with --resume to grade the rest"
)


@pytest.fixture(autouse=True)
def _dev_targets(dev_targets_file):
    return dev_targets_file


def write_input(folder: Path) -> None:
    """The fast gold steps, and a slow step that outlasts every test here."""
    replies = completions()
    replies[SLOW] = replies[SLOW].replace(f"time.sleep({SLEEP})", "time.sleep(600)")
    lines = [json.dumps({"step": s, "completion": c}) for s, c in replies.items()]
    (folder / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent, state, start time) of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every process below ``root`` now: pid -> start time (a pid reused later is not it)."""
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    table = {pid: s for pid in pids if (s := _stat(pid)) is not None}
    found: dict[int, int] = {}
    parents = {root}
    while parents:
        children = {pid for pid, (ppid, _, _) in table.items() if ppid in parents} - set(found)
        found |= {pid: table[pid][2] for pid in children}
        parents = children
    return found


def running(tree: dict[int, int]) -> list[int]:
    """The processes of ``tree`` still running (a zombie has ended)."""
    return [
        pid
        for pid, start in tree.items()
        if (s := _stat(pid)) is not None and s[2] == start and s[1] != "Z"
    ]


def started(folder: Path) -> subprocess.Popen[str]:
    """A run in a process group of its own, once every fast step's verdict is in its partial
    file (the slow step is still running)."""
    proc = subprocess.Popen(
        [SCIEVALS, "grade", "scicode", "c.jsonl", "--out", "v.jsonl"],
        cwd=folder,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    partial = folder / "v.jsonl.partial"
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and proc.poll() is None:
        if partial.exists() and len(partial.read_text().splitlines()) == 1 + len(FAST):
            return proc
        time.sleep(0.1)
    raise AssertionError(f"the run ended before it could be interrupted: {proc.poll()}")


def _once(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=HANG_S)[1]


def _twice(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGINT)  # as a terminal's Ctrl-C, and `timeout` forwarding it
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=HANG_S)[1]


def _group(proc: subprocess.Popen[str]) -> str:
    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=HANG_S)[1]


def _term_and_int(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=HANG_S)[1]


def _during_shutdown(proc: subprocess.Popen[str]) -> str:
    """Ctrl-C, and once the run has said what it kept, Ctrl-C and kills until it has ended."""
    assert proc.stderr is not None
    proc.send_signal(signal.SIGINT)
    said = []
    while line := proc.stderr.readline():
        said.append(line)
        if "interrupted:" in line:
            break
    while proc.poll() is None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
        time.sleep(0.01)
    return "".join(said) + proc.communicate(timeout=HANG_S)[1]


DELIVERIES = {
    "once": _once,
    "twice": _twice,
    "group": _group,
    "term-and-int": _term_and_int,
    "during-shutdown": _during_shutdown,
}


@pytest.mark.parametrize("how", list(DELIVERIES))
def test_an_interrupt_ends_the_run_within_seconds_keeping_every_verdict(tmp_path, how):
    write_input(tmp_path)
    proc = started(tmp_path)
    tree = descendants(proc.pid)
    assert tree, "the sandbox runs processes of its own"
    began = time.monotonic()
    err = DELIVERIES[how](proc)
    took = time.monotonic() - began
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == KEPT, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert sorted(x["step"] for x in lines_of(tmp_path / "v.jsonl.partial")[1:]) == sorted(FAST)
    assert not (tmp_path / "v.jsonl").exists() and not (tmp_path / "v.jsonl.lock").exists()
    assert took < GRACE_SECONDS + 10 * slowness(), f"{took:.1f} s"
    deadline = time.monotonic() + 10 * slowness()
    while running(tree) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert running(tree) == []  # nothing of the run is left running
    assert list(Path(tempfile.gettempdir()).glob(f"scievals-*-{proc.pid}-*")) == []


def test_a_second_run_on_the_same_out_is_refused_and_the_first_keeps_everything(tmp_path):
    write_input(tmp_path)
    first = started(tmp_path)
    for flag in ("--overwrite", "--resume"):
        second = grade(tmp_path, "c.jsonl", "--out", "v.jsonl", flag)
        assert one_line_error(second) == (
            f"scievals grade scicode: v.jsonl is being written by another scievals grade run "
            f"(pid {first.pid}): wait for it to end, or give another --out"
        )
    first.send_signal(signal.SIGINT)
    err = first.communicate(timeout=HANG_S)[1]
    assert first.returncode == 130 and err.strip().splitlines()[-1] == KEPT, err
    assert sorted(x["step"] for x in lines_of(tmp_path / "v.jsonl.partial")[1:]) == sorted(FAST)
    assert not (tmp_path / "v.jsonl.lock").exists()  # the next run takes the lock at once
