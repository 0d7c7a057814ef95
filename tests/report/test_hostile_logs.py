"""``scievals report`` on a shared folder of hostile logs, through the real command.

Logs are untrusted input: names read from them become file names, and files beside them may be
anything. Nothing may be written outside ``--out``, no log may overwrite another's tables, a log
that makes no sense is skipped with one line naming it while the rest of the report is written,
and when nothing usable is given the command says so in one line and exits non-zero.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pytest
from inspect_ai.log import read_eval_log, write_eval_log
from timing import HANG_S

from scievals.report import load
from scievals.report.names import MAX_STEM, safe_stem

from .conftest import SCIBENCH_ALPHA, SCICODE_ALPHA, _epoch, run_task, scibench_task, scicode_task

SCIEVALS = Path(sys.executable).with_name("scievals")


@dataclass(frozen=True)
class Folder:
    """A shared folder of logs, the places a hostile log aims at, and what must be skipped."""

    logs: Path
    outside: Path  # where "../x" and absolute names would land
    victim: Path  # a file a planted link in --out points at
    skipped: tuple[str, ...]  # file names that must each get one "skipped" line
    benchmarks: tuple[str, ...]  # hostile benchmark names that must get a section of their own


def _variant(base: Path, target: Path, **protocol: object) -> None:
    """A copy of the log at ``base`` whose protocol has ``protocol`` applied."""
    log = read_eval_log(str(base))
    assert log.eval.metadata is not None
    log.eval.metadata["protocol"] = {**log.eval.metadata["protocol"], **protocol}
    write_eval_log(log, str(target))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Folder:
    root = tmp_path_factory.mktemp("shared")
    logs, outside = root / "logs", root / "outside"
    logs.mkdir()
    outside.mkdir()
    base = run_task(scibench_task(_epoch(SCIBENCH_ALPHA)), "alpha", root / "made")
    (logs / "real.eval").write_bytes(base.read_bytes())
    hostile = {
        "dotdot": "../x",
        "dotdot-real": "../scibench",  # would overwrite the real scibench tables
        "trailing-slash": "scibench/",
        "absolute": str(outside / "abs"),
        "slash": "a/b",
        "nul": "x\x00y",
        "long": "y" * 5000,
        "unicode": "ünïcødé/基准 ☃",
        "same-as-report": "report",
        "mathtext": "$\\frac{1}{",  # an unbalanced $ would stop matplotlib's label parser
    }
    for name, benchmark in hostile.items():
        _variant(base, logs / f"{name}.eval", benchmark=benchmark)
    _variant(base, logs / "number.eval", benchmark=42)
    _variant(base, logs / "empty-name.eval", benchmark="  ")
    scicode = read_eval_log(str(run_task(scicode_task(_epoch(SCICODE_ALPHA)), "alpha", root)))
    for sample in scicode.samples or []:
        for score in (sample.scores or {}).values():
            score.value = {"1.1": "not a number"}
            score.metadata = {"steps": "not a list of steps"}
    write_eval_log(scicode, str(logs / "broken-scores.eval"))
    (logs / "truncated.eval").write_bytes(base.read_bytes()[: base.stat().st_size // 2])
    (logs / "2024-01-01T00-00-00_not-a-log.json").write_text(json.dumps({"a": [1, 2]}))
    (logs / "2024-01-01T00-00-01_bytes.json").write_bytes(b"\xff\xfe\x00garbage")
    (logs / "2024-01-01T00-00-02_deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (logs / "2024-01-01T00-00-03_fifo.json").parent.mkdir(exist_ok=True)
    os.mkfifo(logs / "2024-01-01T00-00-03_fifo.json")  # reading it would block forever
    (logs / "zero.eval").symlink_to("/dev/zero")
    (logs / "dir.eval").mkdir()  # a "log" that is a directory: only its contents are looked at
    (logs / "notes.json").write_text("{}")  # not a log name: Inspect's listing skips it too
    victim = root / "victim.txt"
    victim.write_text("untouched")
    return Folder(
        logs=logs,
        outside=outside,
        victim=victim,
        skipped=(
            "number.eval",
            "empty-name.eval",
            "broken-scores.eval",
            "truncated.eval",
            "2024-01-01T00-00-00_not-a-log.json",
            "2024-01-01T00-00-01_bytes.json",
            "2024-01-01T00-00-02_deep.json",
            "2024-01-01T00-00-03_fifo.json",
            "zero.eval",
        ),
        benchmarks=tuple(hostile.values()),
    )


def _report(*args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [str(SCIEVALS), "report", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=HANG_S)


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if not p.is_dir()}


@pytest.mark.parametrize("fmt", ["csv", "html"])
def test_hostile_folder_writes_only_inside_out(folder: Folder, tmp_path: Path, fmt: str) -> None:
    shared = folder.logs.parent
    out = tmp_path / "out"
    out.mkdir()
    planted = ["scibench_results.csv"] if fmt == "csv" else ["report.md", "scibench_runs.png"]
    for name in planted:  # links planted in a shared --out, under names the report writes
        (out / name).symlink_to(folder.victim)
    before = _files(shared)
    done = _report(folder.logs, "--out", out, "--format", fmt)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert _files(shared) == before  # nothing new beside the logs, in "outside" or anywhere
    assert folder.victim.read_text() == "untouched"
    written = _files(out)
    assert all(p.parent == out and not p.is_symlink() for p in written)
    assert all(len(p.name.encode()) <= MAX_STEM + len("_comparisons.csv") for p in written)
    for name in folder.skipped:
        lines = [line for line in done.stderr.splitlines() if f"{name}:" in line]
        assert len(lines) == 1 and lines[0].startswith("scievals report: skipped "), name
    assert "dir.eval" not in done.stderr and "notes.json" not in done.stderr
    if fmt == "csv":
        real = (out / "scibench_results.csv").read_text(encoding="utf-8").splitlines()
        assert len(real) == 2  # the header and the one real run: no hostile log wrote here
        for benchmark in folder.benchmarks:
            assert (out / f"{safe_stem(benchmark + '_results')}.csv").is_file(), benchmark
    else:
        page = (out / "report.html").read_text(encoding="utf-8")
        figures = re.findall(r'<img src="([^"]+)"', page)
        assert len(figures) == len(set(figures)) >= 1 + len(folder.benchmarks)  # one per section
        for name in figures:
            assert (out / unquote(name)).read_bytes().startswith(b"\x89PNG"), name


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("replies.jsonl", "not an Inspect log (a .eval or .json file)"),
        ("2024-01-01T00-00-00_x.json", "not a readable Inspect log"),
        ("dir.eval", "no scievals logs found in"),
    ],
)
def test_nothing_usable_is_one_line_and_exit_2(tmp_path: Path, make: str, expected: str) -> None:
    given = tmp_path / make
    if make.endswith(".eval"):
        given.mkdir()
    else:
        given.write_text('{"book": "atkins", "index": 0, "response": "1"}\n')
    done = _report(given, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("scievals: error: ") and expected in done.stderr
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_one_line(folder: Folder, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.write_text("mine")
    done = _report(folder.logs / "real.eval", "--out", out)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"scievals: error: --out {out}: a file is in the way; give a folder"
    ]
    assert out.read_text() == "mine"


def test_a_log_too_large_is_skipped_unread(folder: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound is on the uncompressed size an archive declares: a zip bomb is never opened."""
    monkeypatch.setattr(load, "MAX_LOG_BYTES", 1000)
    runs, notes = load.load_runs([folder.logs / "real.eval"])
    assert runs == [] and len(notes) == 1
    assert "bytes, over the 1,000-byte bound of a log read" in notes[0]


@pytest.mark.parametrize(
    "text",
    ["scibench", "../x", "/etc/passwd", "a/b", "x\x00y", "y" * 5000, "ünï", "", ".", "..", "-"],
)
def test_safe_stem(text: str) -> None:
    stem = safe_stem(text)
    assert stem and len(stem) <= MAX_STEM and stem not in (".", "..")
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in stem)
    assert (stem == text) == (text in ("scibench", "-"))
    assert safe_stem("../scibench") != "scibench" and safe_stem("../x") != safe_stem("..x")
