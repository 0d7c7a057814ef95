# inspect-evals-lint: ignore-file[custom_metric_tests] -- every metric and the epochs reducer are tested on real scores in tests/scicode/test_metrics.py and through real evals in tests/scicode/test_task.py
"""SciCode metrics, named as inspect_evals names them, plus standard errors over problems.

The standard errors are ``scievals.stats.clustered_se`` (Inspect's ``stderr(cluster=...)`` over
the units), the same numbers as the report's; its intervals are built on them.

A sample's score value is ``{step_id: 1.0|0.0}`` for its scored steps. Over several epochs the
reducer averages each step and records in metadata the fraction of epochs in which the whole
problem was solved, so a main problem counts by how often it was solved, not by chance
alignment of per-step means.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer, metric, score_reducer

from scievals.stats import clustered_se

MAIN_SOLVED = "main_solved"


def _steps(sample: SampleScore) -> dict[str, float]:
    value = sample.score.value
    return {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {}


def problem_solved(steps: Mapping[str, Any]) -> bool:
    """The one definition of a solved main problem: it has scored steps and every one passed."""
    return bool(steps) and all(float(v) == 1.0 for v in steps.values())


def main_solved(sample: SampleScore) -> float:
    """Fraction of epochs in which every step of the problem passed (0 or 1 with one epoch)."""
    meta = sample.score.metadata or {}
    if MAIN_SOLVED in meta:
        return float(meta[MAIN_SOLVED])
    return 1.0 if problem_solved(_steps(sample)) else 0.0


@metric
def total_main_problems_solved() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return sum(main_solved(s) for s in scores)

    return compute


@metric
def percentage_main_problems_solved() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return 100.0 * sum(main_solved(s) for s in scores) / len(scores) if scores else 0.0

    return compute


@metric
def total_subproblems_solved() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return sum(sum(_steps(s).values()) for s in scores)

    return compute


@metric
def percentage_subproblems_solved() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        passed = sum(sum(_steps(s).values()) for s in scores)
        total = sum(len(_steps(s)) for s in scores)
        return 100.0 * passed / total if total else 0.0

    return compute


@metric
def main_problems_stderr() -> Metric:
    """Standard error (percentage points) of the main-problem rate, problems as the unit."""

    def compute(scores: list[SampleScore]) -> float:
        values = [main_solved(s) for s in scores]
        return 100.0 * float(clustered_se(values, [1.0] * len(values))) if values else 0.0

    return compute


@metric
def subproblems_stderr() -> Metric:
    """Standard error (percentage points) of the step rate, clustered by problem (ratio estimator)."""

    def compute(scores: list[SampleScore]) -> float:
        passed = [sum(_steps(s).values()) for s in scores]
        counts = [len(_steps(s)) for s in scores]
        return 100.0 * float(clustered_se(passed, counts)) if sum(counts) else 0.0

    return compute


METRICS = [
    percentage_main_problems_solved(),
    percentage_subproblems_solved(),
    total_main_problems_solved(),
    total_subproblems_solved(),
    main_problems_stderr(),
    subproblems_stderr(),
]


@score_reducer(name="scicode_epochs")
def scicode_epochs() -> ScoreReducer:
    """Average each step over epochs; keep how often the whole problem was solved."""

    def reduce(scores: list[Score]) -> Score:
        keys = list(scores[0].value) if isinstance(scores[0].value, dict) else []
        value = {k: sum(float(s.value[k]) for s in scores) / len(scores) for k in keys}  # type: ignore[index]
        solved = [problem_solved(s.value) for s in scores]  # type: ignore[arg-type]
        metadata: dict[str, Any] = dict(scores[0].metadata or {})
        metadata[MAIN_SOLVED] = sum(solved) / len(scores)
        metadata["epochs"] = len(scores)
        if len(scores) > 1:
            metadata["steps_by_epoch"] = [s.metadata.get("steps") for s in scores if s.metadata]
        return Score(
            value=value,
            answer=scores[0].answer,
            explanation=scores[0].explanation,
            metadata=metadata,
        )

    return reduce
