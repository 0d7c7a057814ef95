"""SciBench metrics: accuracy per book and subject, micro and macro, unextracted rate, Wilson CIs.

The pure functions take (book, correct, extracted) rows so that the grade CLI and the Inspect
metrics share one implementation. The paper's "Avg" is the micro average (weighted by problems);
OpenCompass reports the macro one; both are given, with the number of problems behind them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from inspect_ai.scorer import Metric, SampleScore, metric

from scievals.scibench.dataset import SUBJECTS


@dataclass(frozen=True)
class Row:
    book: str
    correct: bool
    extracted: bool = True


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials (95% by default); (0, 1) when n == 0."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _accuracy(rows: list[Row]) -> float:
    return sum(r.correct for r in rows) / len(rows) if rows else 0.0


def group(rows: Iterable[Row], by_subject: bool = False) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[SUBJECTS.get(row.book, "unknown") if by_subject else row.book].append(row)
    return dict(sorted(groups.items()))


def summary(rows: list[Row]) -> dict[str, object]:
    """Everything the report needs in one dict: counts, accuracies and intervals."""
    k, n = sum(r.correct for r in rows), len(rows)
    books = group(rows)
    low, high = wilson(k, n)
    return {
        "correct": k,
        "total": n,
        "micro": _accuracy(rows),
        "macro": sum(_accuracy(v) for v in books.values()) / len(books) if books else 0.0,
        "wilson_low": low,
        "wilson_high": high,
        "unextracted_rate": sum(not r.extracted for r in rows) / n if n else 0.0,
        "by_book": {
            b: {"correct": sum(r.correct for r in v), "total": len(v)} for b, v in books.items()
        },
        "by_subject": {
            s: {"correct": sum(r.correct for r in v), "total": len(v)}
            for s, v in group(rows, by_subject=True).items()
        },
    }


def _rows(scores: list[SampleScore]) -> list[Row]:
    rows = []
    for item in scores:
        meta = item.sample_metadata or {}
        score_meta = item.score.metadata or {}
        rows.append(
            Row(
                book=str(meta.get("book", "unknown")),
                correct=item.score.as_float() >= 1.0,
                extracted=bool(score_meta.get("extracted", True)),
            )
        )
    return rows


@metric
def by_book() -> Metric:
    """Accuracy per textbook."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {book: _accuracy(rows) for book, rows in group(_rows(scores)).items()}

    return compute


@metric
def by_subject() -> Metric:
    """Accuracy per subject (chemistry, physics, math)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {s: _accuracy(rows) for s, rows in group(_rows(scores), by_subject=True).items()}

    return compute


@metric
def micro() -> Metric:
    """Accuracy over all problems (the paper's average)."""

    def compute(scores: list[SampleScore]) -> float:
        return _accuracy(_rows(scores))

    return compute


@metric
def macro() -> Metric:
    """Mean of the per-book accuracies (each textbook weighs the same)."""

    def compute(scores: list[SampleScore]) -> float:
        books = group(_rows(scores))
        return sum(_accuracy(v) for v in books.values()) / len(books) if books else 0.0

    return compute


@metric
def unextracted() -> Metric:
    """Share of replies from which the scorer could not read a number."""

    def compute(scores: list[SampleScore]) -> float:
        rows = _rows(scores)
        return sum(not r.extracted for r in rows) / len(rows) if rows else 0.0

    return compute


@metric
def wilson_ci() -> Metric:
    """Wilson 95% interval of the micro accuracy."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        rows = _rows(scores)
        low, high = wilson(sum(r.correct for r in rows), len(rows))
        return {"wilson_low": low, "wilson_high": high}

    return compute


def scibench_metrics() -> list[Metric]:
    return [micro(), macro(), wilson_ci(), unextracted(), by_subject(), by_book()]
