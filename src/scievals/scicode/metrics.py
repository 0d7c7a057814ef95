# inspect-evals-lint: ignore-file[custom_metric_tests] -- every metric and the epochs reducer are tested on real scores in tests/scicode/test_metrics.py and through real evals in tests/scicode/test_task.py
"""SciCode metrics, named as inspect_evals names them, plus standard errors over problems, and pass@k.

The standard errors are ``scievals.stats.clustered_se`` (Inspect's ``stderr(cluster=...)`` over
the units), the same numbers as the report's; its intervals are built on them.

A sample's score value is ``{step_id: 1.0|0.0}`` for its scored steps. Over several epochs the
reducer averages each step and records in metadata the fraction of epochs in which the whole
problem was solved, so a main problem counts by how often it was solved, not by chance
alignment of per-step means. With N epochs the percentages are pass@1 averaged over N, and
``pass_at_k`` adds pass@k for every k up to N, for main problems and steps: Chen et al.'s (2021)
unbiased estimator, as Inspect's ``pass_at(k)`` reducer computes it from a sample's epochs (the
reducer keeps each k in the score's metadata; the report computes the same from the log's
per-epoch scores with the same two functions, ``pass_at_steps`` and ``pass_at_main``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    metric,
    pass_at,
    score_reducer,
)

from scievals.scicode.verdict import problem_solved
from scievals.stats import clustered_se

MAIN_SOLVED = "main_solved"
PASS_AT = "pass_at"
"""Score metadata key of ``scicode_epochs``: ``{"main": {k: v}, "steps": {k: {step: v}}}``."""


def _steps(sample: SampleScore) -> dict[str, float]:
    value = sample.score.value
    return {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {}


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


def pass_at_steps(scores: list[Score], k: int) -> dict[str, float]:
    """Each step's pass@k over one problem's epochs (Inspect's ``pass_at``, key by key)."""
    return {str(step): float(v) for step, v in pass_at(k)(scores).value.items()}  # type: ignore[union-attr]


def pass_at_main(scores: list[Score], k: int) -> float:
    """The problem's pass@k over its epochs, an epoch counting when it solved every step."""
    solved = [Score(value=1.0 if problem_solved(s.value) else 0.0) for s in scores]  # type: ignore[arg-type]
    return float(pass_at(k)(solved).value)  # type: ignore[arg-type]


def _pass_at(sample: SampleScore) -> dict[str, Any]:
    return (sample.score.metadata or {}).get(PASS_AT) or {}


@metric
def pass_at_k() -> Metric:
    """``main_pass_at_K`` and ``sub_pass_at_K`` (percent) for every k up to the fewest epochs a
    problem was scored in (k = 1 is the pass@1 the percentages give)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        if not scores:
            return {}
        ks = set.intersection(*(set(_pass_at(s).get("main", {})) for s in scores))
        out: dict[str, float] = {}
        for k in sorted(ks, key=int):
            main = [float(_pass_at(s)["main"][k]) for s in scores]
            steps = [float(v) for s in scores for v in _pass_at(s)["steps"][k].values()]
            out[f"main_pass_at_{k}"] = 100.0 * sum(main) / len(main)
            out[f"sub_pass_at_{k}"] = 100.0 * sum(steps) / len(steps) if steps else 0.0
        return out

    return compute


METRICS = [
    percentage_main_problems_solved(),
    percentage_subproblems_solved(),
    total_main_problems_solved(),
    total_subproblems_solved(),
    main_problems_stderr(),
    subproblems_stderr(),
    pass_at_k(),
]


@score_reducer(name="scicode_epochs")
def scicode_epochs() -> ScoreReducer:
    """Average each step over epochs; keep how often the whole problem was solved, and pass@k
    of the problem and of each step for every k up to the number of epochs."""

    def reduce(scores: list[Score]) -> Score:
        keys = list(scores[0].value) if isinstance(scores[0].value, dict) else []
        value = {k: sum(float(s.value[k]) for s in scores) / len(scores) for k in keys}  # type: ignore[index]
        solved = [problem_solved(s.value) for s in scores]  # type: ignore[arg-type]
        metadata: dict[str, Any] = dict(scores[0].metadata or {})
        metadata[MAIN_SOLVED] = sum(solved) / len(scores)
        metadata["epochs"] = len(scores)
        ks = range(1, len(scores) + 1)
        metadata[PASS_AT] = {
            "main": {str(k): pass_at_main(scores, k) for k in ks},
            "steps": {str(k): pass_at_steps(scores, k) for k in ks},
        }
        if len(scores) > 1:
            metadata["steps_by_epoch"] = [s.metadata.get("steps") for s in scores if s.metadata]
        return Score(
            value=value,
            answer=scores[0].answer,
            explanation=scores[0].explanation,
            metadata=metadata,
        )

    return reduce
