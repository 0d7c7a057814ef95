"""The report's comparison of re-graded sources: the score a source recorded beside what its
own answers earn under the official rule, and each unit judged differently, with its cause.

A re-graded run is a log ``scievals regrade`` wrote (its ``regrade`` entry says so); its scores
are the official rule's, so the interval is this report's own, and the source's number is the
one it recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from scievals.report import outcomes as oc
from scievals.report.load import Run
from scievals.report.tables import Pct, Table
from scievals.stats import estimate

NOTE = (
    "official: this log's scores, its answers graded by scievals under the official rule (95% "
    "interval); source: the score the source recorded for the same answers; diff: official "
    "minus source, in points. `scievals regrade` wrote these logs (docs/regrade.md)."
)


def regrade_table(benchmark: str, runs: Sequence[Run]) -> Table | None:
    """A row per re-graded run: the source's score and the official rule's, per metric."""
    regraded = [(run, run.regrade) for run in runs if run.regrade is not None]
    if not regraded:
        return None
    metrics = list(dict.fromkeys(m for run, _ in regraded for m in oc.metrics_of(run)))
    columns = ["run", "source model", "source"]
    for m in metrics:
        label = oc.metric_label(m)
        columns += [f"{label}: source %", f"{label}: official %", f"{label}: diff"]
    columns.append("units judged differently")
    rows = []
    for run, entry in regraded:
        row: list = [run.name, entry.model, entry.source]
        own = oc.metrics_of(run)
        for m in metrics:
            ours = estimate(oc.outcomes_for(run, m)) if m in own else None
            theirs = entry.scores.get(m)
            official = Pct.of(ours) if ours is not None else None
            diff = (
                Pct(official.value - theirs, signed=True)
                if official is not None and theirs is not None
                else None
            )
            row += [None if theirs is None else Pct(theirs), official, diff]
        row.append(len(entry.differences) + entry.more)
        rows.append(row)
    title = f"{benchmark}: re-graded sources against the official rule"
    return Table(f"{benchmark}_regrades", title, columns, rows, [NOTE])


def regrade_differences_table(benchmark: str, runs: Sequence[Run]) -> Table | None:
    """Every unit a re-graded run's source and the official rule judge differently."""
    rows: list[list] = []
    notes = []
    for run in runs:
        entry = run.regrade
        if entry is None:
            continue
        rows += [
            [run.name, d.unit, d.source, d.official, d.cause or "-", d.detail]
            for d in entry.differences
        ]
        if entry.more:
            notes.append(f"{run.name}: {entry.more} more differences in its log, not shown")
    if not rows:
        return None
    columns = ["run", "unit", "source", "official", "cause", "detail"]
    title = f"{benchmark}: where the source and the official rule differ"
    return Table(f"{benchmark}_regrade_differences", title, columns, rows, notes)
