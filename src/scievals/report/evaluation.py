"""Our numbers beside the published ones, in inspect_evals' evaluation-report form.

For each run whose protocol matches a published figure's (``published.references_for``) and
whose model is the published model (``published.same_model``), one row per metric: model, ours
with its 95% interval, the reference, the difference, whether the reference falls outside our
interval, samples, standard error and wall time, and the source with its link. Under it, the
reproducibility block: the scievals and Inspect versions the logs record, run dates, samples,
token totals and cost where prices are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scievals.report import outcomes as oc
from scievals.report.load import Run
from scievals.report.published import Reference, references_for, same_model
from scievals.report.tables import Pct, Table
from scievals.report.usage import Price, dollars, duration, usage
from scievals.stats import Estimate, estimate


@dataclass(frozen=True)
class Versus:
    """One run's metric beside one published value of the same model and protocol."""

    run: Run
    ref: Reference
    metric: str
    ours: Estimate

    @property
    def published(self) -> float:
        return self.ref.metrics[self.metric]

    @property
    def delta(self) -> float:
        """Ours minus published, in points."""
        return 100 * self.ours.value - self.published

    @property
    def outside(self) -> bool:
        """The published value is not in our 95% interval."""
        return not 100 * self.ours.lo <= self.published <= 100 * self.ours.hi


def versus(run: Run) -> list[Versus]:
    """Every published value of this run's model under this run's protocol."""
    out = []
    for ref in references_for(run.protocol):
        if not same_model(run.model, ref.model):
            continue
        for metric in oc.metrics_of(run):
            if metric in ref.metrics and (ours := estimate(oc.outcomes_for(run, metric))):
                out.append(Versus(run, ref, metric, ours))
    return out


def _span(runs: Sequence[Run]) -> str:
    starts = sorted(r.started[:10] for r in runs if r.started)
    ends = sorted(r.completed[:10] for r in runs if r.completed)
    if not starts or not ends:
        return "unknown"
    return starts[0] if starts[0] == ends[-1] else f"{starts[0]} to {ends[-1]}"


def _versions(runs: Sequence[Run], package: str) -> str:
    found = sorted({r.versions[package] for r in runs if package in r.versions})
    return ", ".join(found) or "not recorded"


def reproducibility(runs: Sequence[Run], prices: Mapping[str, Price]) -> str:
    """One line: versions, dates, samples, tokens and cost of the runs compared."""
    used = [usage(run, prices) for run in runs]
    costs = [u.cost for u in used]
    if any(not run.usage for run in runs):
        cost = "unknown (a log records no token counts)"
    elif any(run.usage_notes for run in runs):
        cost = "unknown (a log's token counts are not counts: see the usage table)"
    elif None in costs:
        cost = "not priced (no price for " + ", ".join(
            sorted({m for u in used for m in u.unpriced})
        )
        cost += "; --price MODEL=IN,OUT)"
    else:
        cost = dollars(sum(c for c in costs if c is not None))
    return (
        f"Reproducibility: scievals {_versions(runs, 'scievals')}, inspect_ai "
        f"{_versions(runs, 'inspect_ai')} (as the logs record); run dates {_span(runs)}; "
        f"{sum(len(r.samples) for r in runs)} samples (problems x epochs); tokens "
        f"{sum(u.input for u in used):,} input, {sum(u.output for u in used):,} output, "
        f"{sum(u.reasoning for u in used):,} reasoning; cost {cost}."
    )


def evaluation_table(
    benchmark: str, runs: Sequence[Run], prices: Mapping[str, Price]
) -> Table | None:
    """Ours beside published (None when no run has a published value of its model)."""
    pairs = [v for run in runs for v in versus(run)]
    if not pairs:
        return None
    rows = [
        [
            v.run.model,
            v.run.name,
            oc.metric_label(v.metric),
            Pct.of(v.ours),
            Pct(v.published),
            Pct(v.delta, signed=True),
            "outside" if v.outside else "inside",
            len(v.run.samples),
            round(100 * v.ours.se, 2),
            duration(v.run.seconds),
            f"{v.ref.source} ({v.ref.url})",
        ]
        for v in pairs
    ]
    compared = list({id(v.run): v.run for v in pairs}.values())
    notes = [
        "Published values of the same model measured under the same protocol (docs/presets.md "
        "names each protocol's preset). delta = ours - published, in points; 'outside': the "
        "published value is outside our 95% interval. stderr: clustered, in points.",
        reproducibility(compared, prices),
    ]
    return Table(
        f"{benchmark}_versus_published",
        f"{benchmark}: ours beside published",
        [
            "model",
            "run",
            "metric",
            "ours % [95% CI]",
            "reference %",
            "delta (points)",
            "published vs our CI",
            "samples",
            "stderr",
            "time",
            "source",
        ],
        rows,
        notes,
    )
