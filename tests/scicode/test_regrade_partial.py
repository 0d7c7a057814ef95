"""An interrupted re-grade resumes from the step where it stopped: each run's verdicts are kept
beside its log as they are decided (``partial_run``), read back by ``--resume`` only when they
are this run's, for these answers under this config, and removed once the log is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scievals.cli import main
from scievals.regrade_logs import RegradeLogs
from scievals.scicode.regrade.eval_log import TASK
from scievals.scicode.regrade.partial_run import MAX_BYTES, PartialRun
from scievals.scicode.regrade.run import grading_config
from scievals.scicode.verdict import StepVerdict

from .test_regrade_official import BG, MODEL, answers_of, generate, gold

RUN = f"{MODEL} ({BG}) sample 0"
CONFIG = grading_config("dev", None, None, "scievals")
ANSWERS = {"1.1": "def f():\n    return 1\n"}
CLAIMED = StepVerdict("1.1", False, "assertion", "claimed by the partial file", runtime="2024")


def _partial(tmp_path: Path, run: str = RUN, answers=None, config=CONFIG) -> PartialRun:
    return PartialRun(tmp_path / "regrade-001-x.eval", run, answers or ANSWERS, config)


def _kept(tmp_path: Path, *verdicts: StepVerdict) -> PartialRun:
    partial = _partial(tmp_path)
    partial.start({})
    for verdict in verdicts:
        partial.add(verdict)
    partial.close(done=False)
    return partial


def test_what_is_added_is_read_back_by_the_same_run(tmp_path):
    passed = StepVerdict("19.1", True, runtime="2024", seconds=1.5, runtimes={"2024": {}})
    partial = _kept(tmp_path, CLAIMED, passed)
    assert partial.path.name == ".regrade-001-x.verdicts.jsonl"
    assert _partial(tmp_path).read() == {"1.1": CLAIMED, "19.1": passed}


@pytest.mark.parametrize(
    "other",
    [
        {"run": "another run"},
        {"answers": {"1.1": "def f():\n    return 2\n"}},
        {"config": grading_config("dev", None, 30, "scievals")},
    ],
    ids=["run", "answers", "config"],
)
def test_another_runs_or_answers_or_configs_verdicts_are_not_used(tmp_path, other):
    _kept(tmp_path, CLAIMED)
    assert _partial(tmp_path, **other).read() == {}


def test_a_torn_last_line_is_left_out_and_a_bad_line_voids_the_file(tmp_path):
    partial = _kept(tmp_path, CLAIMED)
    whole = partial.path.read_text()
    partial.path.write_text(whole + '{"step": "19.1", "pass')  # killed mid-write
    assert partial.read() == {"1.1": CLAIMED}
    for bad in ('{"step": "19.1"}\n', "[]\n", "not json\n", '{"step": 1, "passed": true}\n'):
        partial.path.write_text(whole + bad)
        assert partial.read() == {}, bad
    partial.path.write_bytes(whole.encode() + b"\xff\n")
    assert partial.read() == {}


def test_a_file_over_the_bound_is_not_read(tmp_path):
    partial = _kept(tmp_path, CLAIMED)
    with partial.path.open("r+b") as fh:
        fh.truncate(MAX_BYTES + 1)  # sparse: no disk used
    assert partial.read() == {}
    assert _partial(tmp_path / "none").read() == {}


def test_done_removes_the_file(tmp_path):
    partial = _kept(tmp_path, CLAIMED)
    partial.close(done=True)
    assert not partial.path.exists()


# ---- through the command ------------------------------------------------------------------------


def _source(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A folder the official generator wrote, where its logs go, and the answers read of it."""
    results = tmp_path / "eval_results"
    folder = generate(results, {"1.1": gold("1.1")})
    return results, tmp_path / "logs", {s: a.code for s, a in answers_of(folder).items()}


def _interrupted(logs: Path, answers: dict[str, str]) -> Path:
    """The verdicts file an interrupted re-grade of the run left, claiming 1.1 failed."""
    log = RegradeLogs(logs, TASK, {}, []).path(0, RUN)
    partial = PartialRun(log, RUN, answers, CONFIG)
    partial.start({})
    partial.add(CLAIMED)
    partial.close(done=False)
    return partial.path


def _verdicts(out: Path) -> list[tuple[str, bool, str | None]]:
    (run,) = json.loads((out / "regrade.json").read_text())["runs"]
    return [(v["step"], v["passed"], v["reason"]) for v in run["verdicts"]]


def test_resume_grades_only_what_the_interrupted_run_had_not(tmp_path, capsys):
    results, logs, answers = _source(tmp_path)
    left = _interrupted(logs, answers)
    assert left.name.startswith(".regrade-001-") and left.exists()
    out = tmp_path / "out"
    args = ["regrade", str(results), "--log-dir", str(logs), "--out", str(out), "--resume"]
    assert main(args) == 0
    assert "resuming: 1 verdicts kept from an interrupted re-grade" in capsys.readouterr().err
    assert _verdicts(out) == [("1.1", False, "claimed by the partial file")]  # not run again
    assert not left.exists() and len(list(logs.glob("*.eval"))) == 1


@pytest.mark.slow
def test_without_resume_or_for_other_answers_the_run_is_graded_anew(tmp_path, capsys, monkeypatch):
    results, logs, _ = _source(tmp_path)
    left = _interrupted(logs, {"1.1": "def other(): pass\n"})  # not the source's answers now
    out = tmp_path / "out"
    seen: list[list[str]] = []  # the file when grading ends, before the log replaces it
    close = PartialRun.close

    def closing(self: PartialRun, done: bool) -> None:
        close(self, done)
        if not done:
            seen.append(self.path.read_text().splitlines())

    monkeypatch.setattr(PartialRun, "close", closing)
    args = ["regrade", str(results), "--log-dir", str(logs), "--out", str(out), "--resume"]
    assert main(args) == 0
    assert "resuming" not in capsys.readouterr().err
    assert _verdicts(out) == [("1.1", True, None)]
    assert not left.exists()
    [(header, verdict)] = seen
    assert json.loads(header)["run"] == RUN
    assert (json.loads(verdict)["step"], json.loads(verdict)["passed"]) == ("1.1", True)
