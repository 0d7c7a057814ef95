"""``scievals grade scicode`` never loses work: the real command, killed mid-run and resumed.

Each verdict is in ``OUT.partial`` as soon as it is decided; ``OUT`` appears whole or not at all;
``--resume`` grades only the rest and gives the file an uninterrupted run gives; ``--out`` naming
the input, an existing ``OUT`` and a damaged or foreign partial file are one-line errors.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from timing import HANG_S

from scievals.sandbox.enforce import enforcement
from scievals.scicode.data.dataset import find_step

pytestmark = pytest.mark.slow

SCIEVALS = str(Path(sys.executable).with_name("scievals"))
FAST = ("51.1", "51.2", "70.1", "70.2", "29.1")  # gold dev steps of well under a second each
SLOW = "1.1"  # gold code that first sleeps: still running when the run is killed
SLEEP = 60  # the fast steps are decided first on a loaded machine too (10 s was not, at load 7)


def completions() -> dict[str, str]:
    def reply(step: str, prelude: str = "") -> str:
        return f"```python\n{prelude}{find_step(step, 'dev')[1].gold_code}\n```"

    out = {step: reply(step) for step in FAST}
    out[SLOW] = reply(SLOW, f"import time\ntime.sleep({SLEEP})\n")
    return out


def write_input(folder: Path, name: str = "c.jsonl") -> Path:
    path = folder / name
    lines = [json.dumps({"step": s, "completion": c}) for s, c in completions().items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def grade(folder: Path, *args: str, wait: bool = True) -> Any:
    cmd = [SCIEVALS, "grade", "scicode", *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=folder, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=HANG_S)


def untimed(line: dict[str, Any]) -> dict[str, Any]:
    """A verdict without its timings (which no two runs share)."""
    runtimes = {k: {**v, "seconds": None} for k, v in line.get("runtimes", {}).items()}
    return {**line, "runtimes": runtimes} if "runtimes" in line else line


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [untimed(json.loads(x)) for x in path.read_text(encoding="utf-8").splitlines()]


def verdict_lines(path: Path) -> list[dict[str, Any]]:
    return [x for x in lines_of(path) if "step" in x]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("scievals grade scicode: ")
    return lines[0]


@pytest.fixture(autouse=True)
def _dev_targets(dev_targets_file):
    return dev_targets_file


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory) -> Path:
    """The verdicts file of an uninterrupted run."""
    folder = tmp_path_factory.mktemp("whole")
    write_input(folder)
    proc = grade(folder, "c.jsonl", "--out", "v.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert not (folder / "v.jsonl.partial").exists()
    assert [x["step"] for x in verdict_lines(folder / "v.jsonl")] == sorted(
        completions(), key=lambda s: tuple(int(p) for p in s.split("."))
    )
    return folder / "v.jsonl"


@pytest.fixture(scope="module")
def uninterrupted(whole_run) -> list[dict[str, Any]]:
    return lines_of(whole_run)


def kill_when_decided(
    folder: Path, sig: signal.Signals
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Start grading, and send ``sig`` once every fast step's verdict is in the partial file;
    how it ended, and its pid."""
    proc = grade(folder, "c.jsonl", "--out", "v.jsonl", wait=False)
    partial = folder / "v.jsonl.partial"
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and proc.poll() is None:
        if partial.exists() and len(partial.read_text().splitlines()) == 1 + len(FAST):
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_S)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err), proc.pid


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_an_interrupted_run_keeps_its_verdicts_and_resumes(tmp_path, uninterrupted, sig):
    write_input(tmp_path)
    proc, pid = kill_when_decided(tmp_path, sig)
    out, partial = tmp_path / "v.jsonl", tmp_path / "v.jsonl.partial"
    assert not out.exists()  # never a half-written OUT
    assert not list(tmp_path.glob("*.tmp"))
    kept = lines_of(partial)
    decided = partial.read_text().splitlines()[1:]
    assert "scievals_grade_partial" in kept[0]
    assert sorted(x["step"] for x in kept[1:]) == sorted(FAST)
    assert all(x in uninterrupted for x in kept[1:])  # the verdicts an uninterrupted run gives
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert proc.stderr.strip().splitlines()[-1] == (
            f"scievals grade scicode: interrupted: {len(FAST)} verdicts kept in v.jsonl.partial; "
            "run the same command with --resume to grade the rest"
        )
    else:
        assert proc.returncode == -signal.SIGKILL

    again = grade(tmp_path, "c.jsonl", "--out", "v.jsonl")
    assert one_line_error(again) == (
        "scievals grade scicode: v.jsonl.partial exists: pass --resume to grade only what is "
        "missing, or --overwrite to replace"
    )
    resumed = grade(tmp_path, "c.jsonl", "--out", "v.jsonl", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"scievals grade scicode: resuming: {len(FAST)} verdicts kept from v.jsonl.partial"
        in resumed.stderr
    )
    assert "6 graded" in resumed.stderr.strip().splitlines()[-1]
    assert lines_of(out) == uninterrupted  # same lines, same order, same summary
    assert set(decided) <= set(out.read_text().splitlines())  # kept as they were, not regraded
    assert not partial.exists()
    # What the killed run left in the sandbox (its sample dir, cgroups) is swept by the next.
    assert list(Path(tempfile.gettempdir()).glob(f"scievals-*-{pid}-*")) == []
    groups = enforcement().cgroups
    for parent in {p for p in (groups.memory, groups.pids) if p}:
        assert list(parent.glob(f"scievals-{pid}-*")) == []


def test_a_kill_stops_the_run_as_ctrl_c_does(tmp_path):
    write_input(tmp_path)
    proc, _ = kill_when_decided(tmp_path, signal.SIGTERM)
    assert proc.returncode == 130
    assert f"interrupted: {len(FAST)} verdicts kept in v.jsonl.partial" in proc.stderr
    assert not (tmp_path / "v.jsonl").exists()


def test_resume_of_a_finished_file_grades_nothing(tmp_path, whole_run):
    write_input(tmp_path)
    out = tmp_path / "v.jsonl"
    out.write_bytes(whole_run.read_bytes())
    proc = grade(tmp_path, "c.jsonl", "--out", "v.jsonl", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "resuming: 6 verdicts kept from v.jsonl" in proc.stderr
    assert out.read_bytes() == whole_run.read_bytes()  # its timings too: nothing ran again


def test_an_existing_out_is_replaced_only_when_asked(tmp_path):
    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"step": "51.1", "completion": "no code"}) + "\n")
    out = tmp_path / "v.jsonl"
    out.write_text("earlier verdicts\n")
    refused = grade(tmp_path, "c.jsonl", "--out", "v.jsonl")
    assert one_line_error(refused).endswith(
        "v.jsonl exists: pass --resume to grade only what is missing, or --overwrite to replace"
    )
    assert out.read_text() == "earlier verdicts\n"
    replaced = grade(tmp_path, "c.jsonl", "--out", "v.jsonl", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert [x["step"] for x in verdict_lines(out)] == ["51.1"]


def _symlink(folder: Path) -> str:
    (folder / "link.jsonl").symlink_to("c.jsonl")
    return "link.jsonl"


def _hardlink(folder: Path) -> str:
    os.link(folder / "c.jsonl", folder / "hard.jsonl")
    return "hard.jsonl"


def _dotdot(folder: Path) -> str:
    (folder / "sub").mkdir()
    return "./sub/../c.jsonl"


def _partial(folder: Path) -> str:
    (folder / "c.jsonl").rename(folder / "in.partial")
    return "in"


SPELLINGS = {
    "same": lambda folder: "c.jsonl",
    "absolute": lambda folder: str(folder / "c.jsonl"),
    "dot-dot": _dotdot,
    "symlink": _symlink,
    "hard-link": _hardlink,
    "its-partial-file": _partial,
}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_out_naming_the_input_is_refused(tmp_path, spelling):
    write_input(tmp_path)
    out = SPELLINGS[spelling](tmp_path)
    source = "in.partial" if spelling == "its-partial-file" else "c.jsonl"
    before = (tmp_path / source).read_bytes()
    names = sorted(p.name for p in tmp_path.iterdir())
    line = one_line_error(grade(tmp_path, source, "--out", out, "--overwrite"))
    assert "the input file" in line and line.endswith("name another file for the verdicts")
    assert (tmp_path / source).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # nothing written


def test_out_naming_the_input_is_refused_without_overwrite_too(tmp_path):
    write_input(tmp_path)
    assert one_line_error(grade(tmp_path, "c.jsonl", "--out", "c.jsonl")) == (
        "scievals grade scicode: --out c.jsonl is the input file c.jsonl: "
        "name another file for the verdicts"
    )


def _header(folder: Path, **change: Any) -> dict[str, Any]:
    """The header ``grade scicode c.jsonl --out v.jsonl`` writes, changed as asked."""
    from scievals.cli import build_parser
    from scievals.grade_out import run_record
    from scievals.scicode.cli import GRADE_OPTIONS

    ns = build_parser().parse_args(["grade", "scicode", "c.jsonl", "--out", "v.jsonl"])
    options = {k: getattr(ns, k) for k in GRADE_OPTIONS} | change.pop("options", {})
    return {"scievals_grade_partial": run_record("scicode", folder / "c.jsonl", options) | change}


BAD_PARTIALS = {
    "not-ours": (lambda f: '{"hello": 1}\n', "is not a partial verdicts file of scievals grade"),
    "other-input": (
        lambda f: json.dumps(_header(f, input_sha256="0" * 64)) + "\n",
        "was made from another run (input_sha256 differ)",
    ),
    "other-options": (
        lambda f: json.dumps(_header(f, options={"timeout": 5})) + "\n",
        "was made from another run (--timeout differ)",
    ),
    "damaged": (
        lambda f: json.dumps(_header(f)) + "\n{not json\n",
        "v.jsonl.partial:2: not JSON",
    ),
    "not-a-verdict": (
        lambda f: json.dumps(_header(f)) + '\n{"step": "51.1"}\n',
        "v.jsonl.partial:2: not a verdict line (step, passed)",
    ),
    "foreign-step": (
        lambda f: json.dumps(_header(f)) + '\n{"step": "70.3", "passed": true}\n',
        "v.jsonl.partial:2: 70.3 is not in the input",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_PARTIALS))
def test_a_corrupt_or_foreign_partial_file_is_an_error(tmp_path, kind):
    write_input(tmp_path)
    text, message = BAD_PARTIALS[kind]
    partial = tmp_path / "v.jsonl.partial"
    partial.write_text(text(tmp_path))
    before = partial.read_bytes()
    line = one_line_error(grade(tmp_path, "c.jsonl", "--out", "v.jsonl", "--resume"))
    assert message in line, line
    assert line.endswith("pass --overwrite to grade everything again")
    assert partial.read_bytes() == before  # never discarded
    assert not (tmp_path / "v.jsonl").exists()


def test_a_line_cut_short_by_the_kill_is_left_out_and_said(tmp_path):
    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"step": "51.1", "completion": "no code"}) + "\n")
    partial = tmp_path / "v.jsonl.partial"
    partial.write_text(json.dumps(_header(tmp_path)) + '\n{"step": "51.1", "pas')
    proc = grade(tmp_path, "c.jsonl", "--out", "v.jsonl", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert (
        "scievals grade scicode: v.jsonl.partial: its last line was cut short by the "
        "interruption: left out" in proc.stderr
    )
    assert [x["step"] for x in verdict_lines(tmp_path / "v.jsonl")] == ["51.1"]
