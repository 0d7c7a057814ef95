"""SciBench's interval metric: the report's rule on the same per-epoch scores, in a real eval."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from scievals.protocol import protocol
from scievals.report import outcomes
from scievals.report.load import load_runs
from scievals.scibench.metrics import Row, scibench_epochs, scibench_metrics, summary
from scievals.stats import clopper_pearson, estimate

# (sample, epoch) -> correct: three problems, two epochs that disagree on one
CORRECT = {("a-1", 1): 1, ("a-1", 2): 1, ("a-2", 1): 1, ("a-2", 2): 0, ("b-1", 1): 0, ("b-1", 2): 0}


@scorer(metrics=scibench_metrics(), name="faithful")
def scripted():  # noqa: ANN201 - Inspect scorer factory
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=CORRECT[(str(state.sample_id), state.epoch)])

    return score


def test_inspects_interval_is_the_reports(tmp_path: Path) -> None:
    samples = [
        Sample(id=pid, input=pid, metadata={"book": pid[0], "subject": "s"})
        for pid in ("a-1", "a-2", "b-1")
    ]
    task = Task(
        dataset=samples,
        scorer=scripted(),
        epochs=Epochs(2, scibench_epochs()),
        metadata={"protocol": protocol("scibench", split="textbook", scorer="faithful")},
    )
    [log] = eval(
        task,
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    [scores] = log.results.scores
    metrics = {k: m.value for k, m in scores.metrics.items()}
    [run], _ = load_runs([tmp_path])
    est = estimate(outcomes.outcomes_for(run, "faithful"))
    assert est is not None and est.epochs == 2
    assert metrics["accuracy"] == pytest.approx(est.value) == pytest.approx(0.5)
    assert (metrics["lower"], metrics["upper"]) == pytest.approx((est.lo, est.hi))
    assert 0 < metrics["lower"] < 0.5 < metrics["upper"] < 1


def test_grade_summary_interval_is_exact() -> None:
    rows = [Row("atkins", c) for c in (True, False, False, True, True)]
    got = summary(rows)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(tuple(clopper_pearson(3, 5)))
    assert summary([])["ci_low"] is None
