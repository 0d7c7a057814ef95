"""The main job: the harness-overhead line from real logs, and the reference beside the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scievals.offline import seed_tiktoken
from scievals.quickstart import REFERENCE, model_seconds, run_main_job
from scievals.report import outcomes
from scievals.report.load import load_runs
from scievals.stats import estimate


def test_model_seconds_from_a_real_log(tmp_path):
    seed_tiktoken()
    task = Task(dataset=[Sample(input="hi"), Sample(input="ho")], solver=generate())
    logs = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    model, wall = model_seconds(logs)
    assert logs[0].status == "success"
    assert wall >= 0.0 and model >= 0.0
    assert model <= wall + 1.0  # the log's times have one-second resolution
    assert model_seconds([]) == (0.0, 0.0)


SCIBENCH = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "scibench" / "main"


@pytest.mark.slow
def test_main_job_puts_the_reference_beside_the_model(tmp_path, monkeypatch, capsys):
    """A model that solves nothing, the reference that solves everything, on the same slice:
    both intervals have width, the reference's stays below 100%, the print fits a terminal."""
    if (SCIBENCH / "dataset").is_dir():
        monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", str(SCIBENCH.resolve()))
    report = tmp_path / "report"
    run_main_job("mockllm/model", False, tmp_path / "logs", report, None)
    printed = capsys.readouterr().out
    runs, _ = load_runs([tmp_path / "logs"])
    by = {(r.benchmark, r.model): r for r in runs}
    benchmarks = {"scicode", "scibench"} if (SCIBENCH / "dataset").is_dir() else {"scicode"}
    for bench in benchmarks:
        for metric in outcomes.metrics_of(by[(bench, REFERENCE)]):
            best = estimate(outcomes.outcomes_for(by[(bench, REFERENCE)], metric))
            worst = estimate(outcomes.outcomes_for(by[(bench, "mockllm/model")], metric))
            assert best is not None and worst is not None
            assert (best.value, best.hi) == (1.0, 1.0) and best.lo < 1.0, (bench, metric)
            assert (worst.value, worst.lo) == (0.0, 0.0) and worst.hi > 0.0, (bench, metric)
    summary = printed[printed.rindex("scicode: results") :]  # after Inspect's own display
    table = summary.split("Full report")[0].splitlines()
    assert max(len(line) for line in table) <= 120
    assert f"Full report (protocol, breakdowns, comparisons, plots): {report / 'report.html'}" in (
        printed
    )


@pytest.mark.parametrize(
    ("data_dir", "complete"),
    [(None, True), ("/nonexistent/scibench-copy", False)],
    ids=["no-copy-named-none-reachable", "named-copy-missing"],
)
def test_main_job_without_scibench_data(tmp_path, monkeypatch, capsys, data_dir, complete):
    """No SciBench copy named and none reachable: SciBench is said not run, and that is no
    failure (the machine has none); a named copy that is not there is bad input: exit 1. Either
    way SciCode's results are reported."""
    from scievals import artifacts

    def offline(url: str, *_: object, **__: object) -> Path:
        raise artifacts.ArtifactError(f"cannot fetch {url}: no network here")

    monkeypatch.setattr("scievals.scibench.dataset.download", offline)
    monkeypatch.setattr("scievals.scibench.dataset.cache_dir", lambda *a: tmp_path / "empty")
    monkeypatch.setattr("scievals.quickstart.SCICODE_SLICE", ["19"])
    monkeypatch.setattr("scievals.quickstart.REFERENCE", "mockllm/model")
    if data_dir:
        monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", data_dir)
    else:
        monkeypatch.delenv("SCIEVALS_SCIBENCH_DIR", raising=False)
    files, ok = run_main_job("mockllm/model", False, tmp_path / "logs", tmp_path / "rep", None)
    err = capsys.readouterr().err
    assert ok is complete
    assert ("scibench not run:" in err) is complete and ("scibench did not run:" in err) != complete
    runs, _ = load_runs([tmp_path / "logs"])
    assert {r.benchmark for r in runs} == {"scicode"} and files
