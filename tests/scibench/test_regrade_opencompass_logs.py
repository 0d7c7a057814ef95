"""``scievals regrade`` of OpenCompass's SciBench output writes a scievals log of each run.

The source is ``test_regrade_opencompass``'s experiment (an API model on three books, a base
model's zs-cot predictions of one book in two parts), re-graded through the command with
``--out``. Each log is the task's: its protocol record is the one ``scibench(...)`` records for
the run's parameters, its scores are the ones Inspect's own ``score`` gives the log again with
the task's scorers, and ``scievals report`` loads it as a re-graded SciBench run whose verdicts
and differences are the comparison's. ``--resume`` reads the logs back without grading, and
refuses a log that is not this source's run, or not of its answers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import score
from inspect_ai.log import EvalLog, read_eval_log

from scievals.cli import main
from scievals.report.load import load_runs
from scievals.scibench import scibench
from scievals.scibench.regrade import grading

from .scibench_helpers import DATA, needs_data
from .test_regrade_opencompass import book, experiment, regrade, reply

pytestmark = needs_data
API, BASE = "regrade-001-scripted-api-zs.eval", "regrade-002-scripted-base-zs-cot.eval"
SCORERS = ["faithful", "robust", "opencompass"]


@pytest.fixture(autouse=True)
def _data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", str(DATA))


@pytest.fixture
def regraded(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """(the experiment, --out, its regrade.json): re-graded through the command."""
    stamp = experiment(tmp_path / "outputs")
    out = tmp_path / "out"
    code, _, err = regrade(stamp, "--out", str(out))
    assert code == 0, err
    assert f"wrote 2 logs in {out / 'logs'}" in err
    return stamp, out, json.loads((out / "regrade.json").read_text())


def _verdicts(log: EvalLog) -> dict[tuple[str, int], dict[str, bool]]:
    return {
        (s.metadata["book"], s.metadata["index"]): {n: bool(v.value) for n, v in s.scores.items()}
        for s in log.samples or []
    }


def _compared(run: dict[str, Any]) -> dict[tuple[str, int], dict[str, bool]]:
    return {(v["book"], v["index"]): {n: v[n]["correct"] for n in SCORERS} for v in run["verdicts"]}


def test_each_run_is_logged_as_the_task_would_log_it(regraded):
    _, out, result = regraded
    api, base = result["runs"]
    assert [Path(r["log"]).name for r in result["runs"]] == [API, BASE]
    log = read_eval_log(api["log"])
    assert (log.status, log.eval.task, log.eval.model) == (
        "success",
        "scievals/scibench",
        "regrade/scripted-api",
    )
    task = scibench(
        books=["atkins", "chemmc", "diff"], setting="opencompass_zs", scorer="all", data_dir=DATA
    )
    metadata = log.eval.metadata or {}
    assert metadata["protocol"] == (task.metadata or {})["protocol"]
    assert metadata["books"] == ["atkins", "chemmc", "diff"]
    assert [s.name for s in log.eval.scorers or []] == SCORERS
    samples = {str(s.id): s for s in log.samples or []}
    assert len(samples) == api["graded"]
    first = next(iter(task.dataset))
    sample = samples["atkins-0"]
    assert first.id == "atkins-0"
    assert [(m.role, m.text) for m in sample.input] == [(m.role, m.text) for m in first.input]
    assert sample.metadata == first.metadata
    assert [m.role for m in sample.messages] == ["user", "assistant"]
    assert sample.output.completion == reply(book("atkins")[0]) == sample.messages[1].text
    assert _verdicts(log) == _compared(api)
    accuracy = {s.name: s.metrics["accuracy"].value for s in log.results.scores}
    assert accuracy["faithful"] == pytest.approx(api["official_rule"]["percentage"] / 100)
    assert accuracy["opencompass"] == pytest.approx(api["opencompass_rule"]["percentage"] / 100)
    assert read_eval_log(base["log"]).eval.metadata["protocol"]["prompt"] == "opencompass_zs_cot"


def test_inspect_scores_the_log_again_to_the_same_scores_and_results(regraded):
    """Inspect's own ``score`` with the task's scorers: every Score and metric is the log's."""
    _, _, result = regraded
    log = read_eval_log(result["runs"][0]["log"])
    task = scibench(books="atkins,chemmc,diff", setting="opencompass_zs", scorer="all")
    again = score(log, task.scorer, action="overwrite", display="none", model="mockllm/model")
    assert [s.scores for s in again.samples or []] == [s.scores for s in log.samples or []]
    assert again.results == log.results


def test_the_report_loads_each_as_a_regraded_run(regraded, capsys):
    _, out, result = regraded
    runs, notes = load_runs([out / "logs"])
    assert notes == []
    assert [(r.model, r.benchmark) for r in runs] == [
        ("regrade/scripted-api", "scibench"),
        ("regrade/scripted-base", "scibench"),
    ]
    for run, compared in zip(runs, result["runs"], strict=True):
        verdicts = {
            (s.metadata["book"], s.metadata["index"]): {n: bool(s.scores[n].value) for n in SCORERS}
            for s in run.samples
        }
        assert verdicts == _compared(compared)
        assert run.regrade is not None
        assert run.regrade.run == compared["run"]
        assert [d.unit for d in run.regrade.differences] == [
            f"{r['book']} {r['index']}" for r in compared["differing_problems"]
        ]
    api, base = runs
    assert api.regrade.scores == {  # type: ignore[union-attr]
        "faithful": None,
        "robust": None,
        "opencompass": pytest.approx(result["runs"][0]["source"]["percentage"]),
    }
    assert set(base.regrade.scores.values()) == {None}  # type: ignore[union-attr]
    assert main(["report", str(out / "logs"), "--out", str(out / "report")]) == 0
    assert "regrade/scripted-api" in capsys.readouterr().out


def test_the_logs_differences_are_the_tables(regraded):
    stamp, _, result = regraded
    api = result["runs"][0]
    entry = (read_eval_log(api["log"], header_only=True).eval.metadata or {})["regrade"]
    assert (entry["source"], entry["harness"], entry["run"], entry["model"]) == (
        str(stamp),
        "opencompass",
        "scripted-api zs",
        "scripted-api",
    )
    assert entry["recorded"] == api["source"]
    rows = {r["unit"]: r for r in entry["differing"]}
    assert len(rows) == len(api["differing_problems"]) > 0
    assert rows["atkins 5"] == {
        "unit": "atkins 5",
        "source": "right",
        "official": "wrong",
        "cause": "recorded",
        "detail": next(r["detail"] for r in api["differing_problems"] if r["index"] == 5),
    }
    assert rows["chemmc 1"]["source"] == "right (rule)"  # no details: its rule's verdict


def _grading_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("graded again")

    monkeypatch.setattr(grading, "grade_lines", fail)


def test_resume_reads_the_logs_back_without_grading(regraded, monkeypatch):
    stamp, out, result = regraded
    written = {p: p.stat().st_mtime_ns for p in (out / "logs").iterdir()}
    _grading_fails(monkeypatch)
    code, table, err = regrade(stamp, "--out", str(out), "--resume")
    assert code == 0, err
    assert "scripted-api zs: 193 problems logged before: not graded again" in err
    assert "wrote 0 logs, kept 2 written before" in err
    assert json.loads((out / "regrade.json").read_text())["runs"] == result["runs"]
    assert {p: p.stat().st_mtime_ns for p in (out / "logs").iterdir()} == written
    assert "scripted-api zs" in table


def _last_error(code: int, err: str) -> str:
    assert code == 2, err
    return err.strip().splitlines()[-1]


def test_an_existing_log_is_kept_only_with_resume(regraded):
    stamp, out, _ = regraded
    line = _last_error(*regrade(stamp, "--log-dir", str(out / "logs"))[::2])
    assert line.endswith(
        f"{out / 'logs' / API} exists (and 1 more): pass --resume to keep the "
        "runs logged, or --overwrite to replace them"
    )


def test_a_log_of_another_run_is_refused(regraded):
    stamp, out, _ = regraded
    shutil.copyfile(out / "logs" / BASE, out / "logs" / API)
    line = _last_error(*regrade(stamp, "--out", str(out), "--resume")[::2])
    assert line == (
        f"scievals: error: {out / 'logs' / API}: the log of another source or run: not resumed "
        "(pass --overwrite to grade it again)"
    )


def test_a_log_of_other_answers_is_refused(regraded, monkeypatch):
    stamp, out, _ = regraded
    path = stamp / "predictions" / "scripted-api" / "scibench-diff.json"
    entries = json.loads(path.read_text())
    entries["0"]["prediction"] = "The answer is \\boxed{1}."
    path.write_text(json.dumps(entries))
    _grading_fails(monkeypatch)
    line = _last_error(*regrade(stamp, "--out", str(out), "--resume")[::2])
    assert line == (
        f"scievals: error: {out / 'logs' / API}: its answers are not the source's now: not "
        "resumed (pass --overwrite to grade it again)"
    )


def test_a_log_of_other_data_is_refused(regraded, monkeypatch, tmp_path):
    """The protocol names the data graded on: the same books read from elsewhere are other
    options (a resumed re-grade would mix two data copies)."""
    stamp, out, _ = regraded
    (tmp_path / "elsewhere").symlink_to(DATA)
    monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", str(tmp_path / "elsewhere"))
    _grading_fails(monkeypatch)
    line = _last_error(*regrade(stamp, "--out", str(out), "--resume")[::2])
    assert line == (
        f"scievals: error: {out / 'logs' / API}: graded under other options (its protocol is not "
        "this re-grade's): not resumed (pass --overwrite to grade it again)"
    )


def test_a_run_of_no_reply_graded_has_no_log(tmp_path):
    """A file of another dataset under a SciBench name: nothing is graded, so no task is run."""
    entries = {"0": {"origin_prompt": "Question: Janet has 3 ducks.\nAnswer:", "prediction": "3"}}
    model = tmp_path / "model"
    model.mkdir()
    (model / "scibench-atkins.json").write_text(json.dumps(entries))
    code, _, err = regrade(model, "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "model zs: no reply graded: no log (a task of no problem is none)" in err
    assert not (tmp_path / "out" / "logs").exists()
