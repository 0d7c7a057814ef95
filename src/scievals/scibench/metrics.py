# inspect-evals-lint: ignore-file[custom_metric_tests] -- unextracted runs through the real reducer with disagreeing epochs in tests/scibench/test_scibench_task.py
"""SciBench metrics: accuracy (micro), its 95% interval, per book and macro mean, per subject, unread.

The Inspect metrics are Inspect's own where they give the numbers we want: ``accuracy`` is the
paper's "Avg" (micro, weighted by problems), ``grouped(accuracy(), "book", all="groups")`` gives
each book and the mean of the books (OpenCompass's macro average). The interval is ours
(``accuracy_interval``, from ``scievals.stats``, the report's own rule on the same per-epoch
scores, so Inspect's ``lower``/``upper`` and the report agree): Inspect's ``ci_wilson`` covers
as little as 84% at small counts (docs/statistics.md). Also ours: the share of replies without a
readable number, and the epoch reducer that keeps it and pass@k (Inspect's ``pass_at`` over a
problem's epochs, for every k up to their number; ``pass_at_k`` averages them). ``summary`` is
the same arithmetic as one pure function over (book, correct, extracted) rows, for ``scievals
grade``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import mean

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    accuracy,
    grouped,
    metric,
    pass_at,
    score_reducer,
    value_to_float,
)

from scievals.scibench.dataset import SUBJECTS
from scievals.stats import Outcome, estimate, rate_interval


@dataclass(frozen=True)
class Row:
    book: str
    correct: bool
    extracted: bool = True


def _accuracy(rows: list[Row]) -> float:
    return sum(r.correct for r in rows) / len(rows) if rows else 0.0


def group(rows: Iterable[Row], by_subject: bool = False) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[SUBJECTS.get(row.book, "unknown") if by_subject else row.book].append(row)
    return dict(sorted(groups.items()))


def summary(rows: list[Row]) -> dict[str, object]:
    """Everything ``scievals grade scibench`` reports: counts, accuracies and the interval."""
    k, n = sum(r.correct for r in rows), len(rows)
    books = group(rows)
    est = estimate([Outcome(1, str(i), str(i), float(r.correct)) for i, r in enumerate(rows)])
    return {
        "correct": k,
        "total": n,
        "micro": _accuracy(rows),
        "macro": sum(_accuracy(v) for v in books.values()) / len(books) if books else 0.0,
        "ci_low": est and est.lo,
        "ci_high": est and est.hi,
        "unextracted_rate": sum(not r.extracted for r in rows) / n if n else 0.0,
        "by_book": {
            b: {"correct": sum(r.correct for r in v), "total": len(v)} for b, v in books.items()
        },
        "by_subject": {
            s: {"correct": sum(r.correct for r in v), "total": len(v)}
            for s, v in group(rows, by_subject=True).items()
        },
    }


def _extracted(score: Score) -> float:
    """1 when a number was read, 0 when not; over epochs, the share read (``scibench_epochs``)."""
    return float((score.metadata or {}).get("extracted", True))


@metric
def unextracted() -> Metric:
    """Share of replies from which the scorer could not read a number."""

    def compute(scores: list[SampleScore]) -> float:
        return sum(1 - _extracted(s.score) for s in scores) / len(scores) if scores else 0.0

    return compute


_to_float = value_to_float()


@metric
def accuracy_interval() -> Metric:
    """The 95% interval of ``accuracy`` as ``lower``/``upper``: each problem one cluster of its
    epochs (``scibench_epochs`` records how many), the report's rule on the same outcomes."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        epochs = [int((s.score.metadata or {}).get("epochs", 1)) for s in scores]
        sums = [_to_float(s.score.value) * k for s, k in zip(scores, epochs, strict=True)]
        if not scores:
            return {"lower": 0.0, "upper": 1.0}
        _, _, lo, hi, _ = rate_interval(sums, epochs)
        return {"lower": float(lo), "upper": float(hi)}

    return compute


PASS_AT = "pass_at"
"""Score metadata key of ``scibench_epochs``: ``{k: pass@k of the problem}``."""


def pass_at_problem(scores: list[Score], k: int) -> float:
    """One problem's pass@k over its epochs (Inspect's ``pass_at``)."""
    return float(pass_at(k)(scores).value)  # type: ignore[arg-type]


@metric
def pass_at_k() -> Metric:
    """``pass_at_K``: the mean pass@k over problems, for every k up to the fewest epochs."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [(s.score.metadata or {}).get(PASS_AT) or {} for s in scores]
        if not values:
            return {}
        ks = sorted(set.intersection(*(set(v) for v in values)), key=int)
        return {f"pass_at_{k}": sum(float(v[k]) for v in values) / len(values) for k in ks}

    return compute


@score_reducer(name="scibench_epochs")
def scibench_epochs() -> ScoreReducer:
    """The mean over epochs, keeping in ``extracted`` the share of epochs whose number was read,
    in ``epochs`` how many there were (the interval counts each problem's epochs), and in
    ``pass_at`` the problem's pass@k for every k up to that number.

    Inspect's reducers keep the first epoch's metadata only, which would make ``unextracted``
    the rate of epoch 1.
    """

    def reduce(scores: list[Score]) -> Score:
        first = scores[0]
        return Score(
            value=sum(s.as_float() for s in scores) / len(scores),
            answer=first.answer,
            explanation=first.explanation,
            metadata={
                **(first.metadata or {}),
                "extracted": mean(map(_extracted, scores)),
                "epochs": len(scores),
                PASS_AT: {str(k): pass_at_problem(scores, k) for k in range(1, len(scores) + 1)},
            },
        )

    return reduce


def scibench_metrics() -> list[Metric]:
    """accuracy (micro), lower/upper (95%), each book and macro, each subject, unextracted,
    pass@k."""
    return [
        accuracy(),
        accuracy_interval(),
        grouped(accuracy(), "book", all="groups", all_label="macro"),
        grouped(accuracy(), "subject", all=False),
        unextracted(),
        pass_at_k(),
    ]
