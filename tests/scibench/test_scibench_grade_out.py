"""``scievals grade scibench`` never loses work, and ends with a line a person reads: the real
command. Its verdicts file is the same machinery as SciCode's (tests/scicode/test_grade_resume.py
kills real runs); here the partial file an interrupted run leaves is made by cutting a real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from timing import HANG_S

from .scibench_helpers import DATA, needs_data

pytestmark = needs_data

SCIEVALS = str(Path(sys.executable).with_name("scievals"))
REPLIES = [
    {"book": "atkins", "index": 3, "response": "The answer is \\boxed{2}"},
    {"book": "diff", "index": 26, "response": "so \\boxed{\u22122}"},
    {"book": "stat", "index": 0, "response": "no idea"},
    {"book": "quan", "index": 1, "response": "\\boxed{3.5}"},
]


def write_input(folder: Path) -> Path:
    path = folder / "r.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in REPLIES), encoding="utf-8")
    return path


def grade(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [SCIEVALS, "grade", "scibench", "r.jsonl", "--data-dir", str(DATA), *args]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=HANG_S)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("scievals grade scibench: ")
    return lines[0]


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("whole")
    write_input(folder)
    proc = grade(folder, "--out", "v.jsonl")
    assert proc.returncode == 0, proc.stderr
    return folder / "v.jsonl", proc


def test_one_line_for_a_person_the_json_in_the_file(whole_run):
    out, proc = whole_run
    *verdicts, last = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(v["book"], v["index"]) for v in verdicts] == [(r["book"], r["index"]) for r in REPLIES]
    summary = last["summary"]
    assert summary["total"] == 4 and last["run"]["benchmark"] == "scibench"
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"scibench {summary['data_version']}, robust scorer: {summary['correct']}/4 correct "
        f"({100 * summary['micro']:.1f}%, 95% CI {100 * summary['ci_low']:.1f}-"
        f"{100 * summary['ci_high']:.1f}%), macro {100 * summary['macro']:.1f}% over 4 books; "
        "25.0% without a readable answer"
    ]


def test_without_out_the_lines_go_to_stdout(tmp_path, whole_run):
    write_input(tmp_path)
    proc = grade(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == whole_run[0].read_text()
    assert len(proc.stderr.splitlines()) == 1


def test_resume_grades_only_what_the_partial_file_lacks(tmp_path, whole_run):
    """The partial file of a run cut after two verdicts: resumed, the same file as a whole run;
    and the kept verdicts are taken as they are (a marked one stays marked: not regraded)."""
    write_input(tmp_path)
    lines = whole_run[0].read_text().splitlines()
    header = json.dumps({"scievals_grade_partial": json.loads(lines[-1])["run"]})
    partial = tmp_path / "v.jsonl.partial"
    partial.write_text("\n".join([header, *lines[:2]]) + "\n")
    proc = grade(tmp_path, "--out", "v.jsonl", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == (
        "scievals grade scibench: resuming: 2 verdicts kept from v.jsonl.partial"
    )
    assert (tmp_path / "v.jsonl").read_text() == whole_run[0].read_text()
    assert not partial.exists()

    marked: dict[str, Any] = {**json.loads(lines[0]), "rule": "kept, not regraded"}
    partial.write_text("\n".join([header, json.dumps(marked)]) + "\n")
    proc = grade(tmp_path, "--out", "v.jsonl", "--resume")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "v.jsonl").read_text().splitlines()[0]) == marked


def test_an_existing_out_is_kept_unless_asked(tmp_path):
    write_input(tmp_path)
    (tmp_path / "v.jsonl").write_text("earlier\n")
    assert one_line_error(grade(tmp_path, "--out", "v.jsonl")) == (
        "scievals grade scibench: v.jsonl exists: pass --resume to grade only what is missing, "
        "or --overwrite to replace"
    )
    assert (tmp_path / "v.jsonl").read_text() == "earlier\n"
    assert grade(tmp_path, "--output", "v.jsonl", "--overwrite").returncode == 0  # old spelling
    assert (tmp_path / "v.jsonl").read_text().count("\n") == len(REPLIES) + 1


@pytest.mark.parametrize("how", ["symlink", "hard-link", "absolute"])
def test_out_naming_the_input_is_refused(tmp_path, how):
    source = write_input(tmp_path)
    before = source.read_bytes()
    if how == "symlink":
        (tmp_path / "out.jsonl").symlink_to("r.jsonl")
        out = "out.jsonl"
    elif how == "hard-link":
        os.link(source, tmp_path / "out.jsonl")
        out = "out.jsonl"
    else:
        out = str(source)
    line = one_line_error(grade(tmp_path, "--out", out, "--overwrite"))
    assert line == (
        f"scievals grade scibench: --out {out} is the input file r.jsonl: "
        "name another file for the verdicts"
    )
    assert source.read_bytes() == before


def test_a_partial_file_of_another_input_is_an_error(tmp_path, whole_run):
    write_input(tmp_path)
    run = json.loads(whole_run[0].read_text().splitlines()[-1])["run"]
    partial = tmp_path / "v.jsonl.partial"
    partial.write_text(json.dumps({"scievals_grade_partial": {**run, "input_sha256": "0"}}) + "\n")
    line = one_line_error(grade(tmp_path, "--out", "v.jsonl", "--resume"))
    assert line == (
        "scievals grade scibench: v.jsonl.partial was made from another run (input_sha256 "
        "differ): grade with the same input and options to resume it, or pass --overwrite to "
        "grade everything again"
    )
    assert partial.exists()
