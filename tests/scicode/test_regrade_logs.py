"""``scievals regrade`` writes a scievals log of each re-graded run.

The fast tests build a log from verdicts given and check its shape: the task's own protocol
record (this install's protocol check finds no difference), the scorer's Score, Inspect's
results, a round trip through Inspect's reader, and ``scievals report`` reading it as a re-grade.
The slow ones re-grade folders the official generator wrote (``test_regrade_official``'s), two
models with the same answers: the second model's step programs are the first's (one set run),
and ``--verify`` of the log written finds it clean.
"""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from scievals.cli import main
from scievals.inputs import InputError
from scievals.regrade_logs import RegradeLogs, now
from scievals.report.load import load_runs
from scievals.scicode.regrade.eval_log import TASK, UNANSWERED, run_log
from scievals.scicode.regrade.official_folder import read_source
from scievals.scicode.regrade.protocol_check import check_protocol
from scievals.scicode.regrade.run import grading_config
from scievals.scicode.regrade.scievals_log import SCORER, read_log
from scievals.scicode.scorer import scicode_scorer
from scievals.scicode.solver import STORE_KEY
from scievals.scicode.task import scicode
from scievals.scicode.verdict import StepVerdict

from .test_regrade_inspect_evals import _built_log
from .test_regrade_official import BG, MODEL, answers_of, generate, gold, wrong

RUN = f"{MODEL} ({BG}) sample 0"
SOURCE = {"source": "/data/eval_results", "layout": "generated_code/<model>/<background>/"}
RECORDED = {
    "steps_passed": 2,
    "steps_total": 50,
    "percentage_subproblems_solved": 4.0,
    "percentage_main_problems_solved": None,
}
DIFFERING = {"step": "19.1", "source": True, "scievals": False, "cause": None, "detail": "x"}


def _written(folder: Path, overwrite: bool = False) -> Path:
    """A dev log of one run: 1.1 passed, 19.1 failed, 19.2 unanswered; the rest unanswered."""
    config = grading_config("dev", None, None, "scievals")
    logs = RegradeLogs(folder, TASK, SOURCE, [scicode_scorer(config.record())], overwrite)
    logs.claim([RUN])
    comparison = {"run": RUN, "model": MODEL, "source": RECORDED, "differing_steps": [DIFFERING]}
    verdicts = {
        "1.1": StepVerdict("1.1", True, runtime="2024", seconds=0.3),
        "19.1": StepVerdict("19.1", False, "assertion", "test 1 failed", runtime="2024"),
    }
    completions = {"1.1": gold("1.1"), "19.1": wrong("19.1")}
    log = partial(run_log, config, SOURCE, comparison, completions, verdicts, now())
    return logs.keep(0, comparison, log)


def test_the_log_is_the_tasks_with_the_scorers_scores(tmp_path):
    path = _written(tmp_path / "logs")
    assert path.name == f"regrade-001-{MODEL}-without_background-sample-0.eval"
    log = read_eval_log(str(path))
    assert (log.status, log.eval.task, log.eval.model) == (
        "success",
        "scievals/scicode",
        f"regrade/{MODEL}",
    )
    metadata = log.eval.metadata or {}
    task = scicode(split="dev", extraction="original")
    assert metadata["protocol"] == (task.metadata or {})["protocol"]
    assert metadata["regrade"] == {
        **SOURCE,
        "run": RUN,
        "model": MODEL,
        "recorded": RECORDED,
        "source_scores": {"main": None, "sub": 4.0},
        "differing": [
            {"unit": "19.1", "source": "pass", "official": "fail", "cause": None, "detail": "x"}
        ],
    }
    assert [s.name for s in log.eval.scorers or []] == [SCORER]
    samples = {str(s.id): s for s in log.samples or []}
    assert len(samples) == 15  # every problem of the split: an unanswered one counts failed
    one, nineteen = samples["1"], samples["19"]
    assert [m.role for m in one.messages] == ["user", "assistant"]
    assert one.messages[1].text == gold("1.1")
    assert one.output.completion == gold("1.1")
    assert one.store[STORE_KEY]["completions"] == {"1.1": gold("1.1")}
    assert nineteen.scores[SCORER].value == {"19.1": 0.0, "19.2": 0.0}
    steps = nineteen.scores[SCORER].metadata["steps"]
    assert [(v["step"], v["reason_kind"], v["reason"]) for v in steps] == [
        ("19.1", "assertion", "test 1 failed"),
        ("19.2", "missing_function", UNANSWERED),
    ]
    assert one.scores[SCORER].value == {"1.1": 1.0}
    metrics = {n: m.value for n, m in log.results.scores[0].metrics.items()}
    assert metrics["total_subproblems_solved"] == 1
    assert metrics["total_main_problems_solved"] == 1
    assert metrics["percentage_subproblems_solved"] == pytest.approx(2.0)
    assert log.results.scores[0].reducer == "scicode_epochs"


def test_this_installs_protocol_check_finds_no_difference(tmp_path):
    shared = read_log(_written(tmp_path / "logs"))
    assert check_protocol(shared) == ([], [])


def test_the_report_reads_it_as_a_re_grade(tmp_path, capsys):
    folder = tmp_path / "logs"
    _written(folder)
    runs, notes = load_runs([folder])
    assert notes == []
    (run,) = runs
    assert (run.model, run.benchmark) == (f"regrade/{MODEL}", "scicode")
    assert run.regrade is not None and run.regrade.scores == {"main": None, "sub": 4.0}
    report = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(report), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert f"regrade/{MODEL}" in out
    assert "scicode: re-graded sources against the official rule" in out
    assert re.search(r"r1 +19\.1 +pass +fail +- +x", out)
    page = (report / "report.html").read_text()
    assert "re-graded sources against the official rule" in page
    assert re.search(r"<td[^>]*>19\.1</td><td[^>]*>pass</td><td[^>]*>fail</td>", page)
    # the source recorded 4% of steps; the official rule passes 1 of 50 (2%): -2 points
    assert f"| r1 | {MODEL} | {SOURCE['source']} | - |" in (report / "report.md").read_text()
    assert "| 4.0 | 2.0 [0.0, 36.6] | -2.0 | 1 |" in (report / "report.md").read_text()


def test_an_existing_log_is_replaced_only_with_overwrite(tmp_path):
    path = _written(tmp_path / "logs")
    with pytest.raises(InputError, match=f"{path} exists: pass --resume to keep the runs"):
        _written(tmp_path / "logs")
    assert _written(tmp_path / "logs", overwrite=True) == path


def test_log_dir_is_refused_where_no_log_is_written(tmp_path, capsys):
    log = tmp_path / "a.eval"
    log.write_text("")
    assert main(["regrade", "--verify", str(log), "--log-dir", str(tmp_path / "x")]) == 2
    assert "--verify writes no log" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


# ---- re-graded for real -------------------------------------------------------------------------

REPLIES = {"1.1": gold("1.1"), "19.1": gold("19.1"), "19.2": wrong("19.2")}


@pytest.fixture(scope="module")
def two_models(tmp_path_factory, dev_targets_file):
    """Two models' folders with the same answers, re-graded through the command with --out."""
    tmp = tmp_path_factory.mktemp("relog")
    results = tmp / "eval_results"
    generate(results, REPLIES, model="model-a")
    generate(results, REPLIES, model="model-b")
    out = tmp / "out"
    assert main(["regrade", str(results), "--out", str(out)]) == 0
    return sorted((out / "logs").glob("*.eval"))


@pytest.mark.slow
def test_identical_programs_across_models_run_once(two_models):
    logs = [read_eval_log(str(p)) for p in two_models]
    assert [log.eval.model for log in logs] == ["regrade/model-a", "regrade/model-b"]

    def steps(log, key):
        return {
            v["step"]: v[key]
            for s in log.samples or []
            for v in s.scores[SCORER].metadata["steps"]
            if v["step"] in REPLIES
        }

    first, second = logs
    assert (
        steps(first, "passed")
        == steps(second, "passed")
        == {
            "1.1": True,
            "19.1": True,
            "19.2": False,
        }
    )
    assert set(steps(first, "reused").values()) == {False}
    assert set(steps(second, "reused").values()) == {True}  # the first model's programs


@pytest.mark.slow
def test_the_written_log_verifies_clean(two_models, capsys):
    code = main(["regrade", "--verify", str(two_models[0])])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    assert out[-1].startswith(f"{two_models[0]} verifies clean: 15 samples, 50 steps re-graded")


# ---- resumed ------------------------------------------------------------------------------------


def _logged_before(tmp_path: Path, completions: dict[str, str] | None = None, timeout=None):
    """A folder the official generator wrote, and the log an earlier re-grade of it left, which
    claims 1.1 (gold) failed: a resumed re-grade that ran it would say otherwise."""
    results = tmp_path / "eval_results"
    folder = generate(results, {"1.1": gold("1.1")})
    source = read_source(results)
    answers = {sid: a.code for sid, a in answers_of(folder).items()}
    config = grading_config("dev", None, timeout, "scievals")
    about = {"source": str(source.path), "layout": source.layout}
    logs = RegradeLogs(tmp_path / "logs", TASK, about, [scicode_scorer(config.record())])
    claimed = {"1.1": StepVerdict("1.1", False, "assertion", "claimed by the log")}
    comparison = {"run": RUN, "model": MODEL, "source": None}
    log = partial(run_log, config, about, comparison, completions or answers, claimed, now())
    logs.keep(0, comparison, log)
    return results


def _resume(tmp_path: Path, *more: str) -> int:
    logs = tmp_path / "logs"
    return main(["regrade", str(tmp_path / "eval_results"), "--log-dir", str(logs), *more])


def test_a_resumed_regrade_reads_a_logged_run_back(tmp_path, capsys):
    _logged_before(tmp_path)
    assert _resume(tmp_path, "--out", str(tmp_path / "out")) == 2
    assert "exists: pass --resume to keep the runs logged" in capsys.readouterr().err
    assert _resume(tmp_path, "--resume", "--out", str(tmp_path / "out")) == 0
    err = capsys.readouterr().err
    assert f"{RUN}: 1 steps logged before: not graded again" in err
    assert "wrote 0 logs, kept 1 written before" in err
    (run,) = json.loads((tmp_path / "out" / "regrade.json").read_text())["runs"]
    assert [(v["step"], v["passed"], v["reason"]) for v in run["verdicts"]] == [
        ("1.1", False, "claimed by the log")
    ]
    assert run["log"] == str(next((tmp_path / "logs").glob("*.eval")))


@pytest.mark.parametrize(
    ("completions", "timeout", "why"),
    [
        ({"1.1": "def cg():\n    return 0"}, None, "its answers are not the source's now"),
        (None, 30, "graded under other options"),
    ],
)
def test_a_log_of_other_answers_or_options_is_not_resumed(
    tmp_path, capsys, completions, timeout, why
):
    _logged_before(tmp_path, completions, timeout)
    assert _resume(tmp_path, "--resume") == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("scievals: error: ") and why in last, last
    assert last.endswith("not resumed (pass --overwrite to grade it again)")


@pytest.mark.slow
def test_an_inspect_evals_logs_epochs_are_logged_and_verify_clean(tmp_path, capsys):
    """Each epoch of an inspect_evals log is a run with a log of its own; the second epoch's
    programs are the first's, and its log verifies clean."""
    source = _built_log(tmp_path, {"1.1": gold("1.1")}, epochs=2)
    logs = tmp_path / "logs"
    assert main(["regrade", str(source), "--log-dir", str(logs)]) == 0
    paths = sorted(logs.glob("*.eval"))
    assert [p.name for p in paths] == [
        "regrade-001-mockllm-model-3-A-epoch-1.eval",
        "regrade-002-mockllm-model-3-A-epoch-2.eval",
    ]
    second = read_eval_log(str(paths[1]))
    assert second.eval.model == "regrade/mockllm/model"
    regrade = (second.eval.metadata or {})["regrade"]
    assert (regrade["layout"], regrade["task_version"], regrade["run"]) == (
        "inspect_evals log",
        "3-A",
        "mockllm/model (3-A) epoch 2",
    )
    assert regrade["recorded"]["steps_passed"] == 1
    (one,) = [s for s in second.samples or [] if str(s.id) == "1"]
    assert one.scores[SCORER].metadata["steps"][0]["reused"] is True
    capsys.readouterr()
    assert main(["regrade", "--verify", str(paths[1])]) == 0
    assert "verifies clean: 15 samples, 50 steps" in capsys.readouterr().out
