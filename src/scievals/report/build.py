"""Runs -> the report's tables, section by section: results, published figures, breakdowns,
paired comparisons. Pure over the loaded runs, so tests can check every cell."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from scievals.report import outcomes as oc
from scievals.report.evaluation import evaluation_table
from scievals.report.load import Run, natural_key
from scievals.report.published import Reference, references_for
from scievals.report.regrades import regrade_differences_table, regrade_table
from scievals.report.tables import Pct, Table, count, passed_of
from scievals.report.usage import Price, usage_table
from scievals.report.weak import weak_note, weak_table
from scievals.scicode import REASON_KINDS
from scievals.stats import Estimate, Paired, estimate, paired

PROTOCOL_LABELS = {
    "benchmark": "benchmark",
    "dataset": "dataset",
    "data_version": "data version",
    "split": "split",
    "steps_counted": "steps counted",
    "step_count": "step count",
    "background": "background",
    "prompt": "prompt / setting",
    "scorer": "scorer",
    "timeout": "timeout (s)",
    "runtime": "runtime",
    "runtimes": "runtimes",
    "sandbox": "sandbox",
    "memory_limit": "memory per program",
}
# Where a key means something else for one benchmark; any key not named here is labelled by name.
BENCHMARK_LABELS = {
    "scicode": {"prompt": "prompt", "steps_counted": "steps in the split"},
    "scibench": {"steps_counted": "dataset problems", "prompt": "setting"},
}
INTERVAL_NOTE = (
    "95% intervals: exact (Clopper-Pearson) over problems; steps and epochs of one problem are "
    "one cluster (effective sample size, kept wide at 0% and 100%). See docs/statistics.md."
)
PASS_AT_NOTE = (
    "pass@k: per unit, the unbiased estimator of Chen et al. (2021), 1 - C(N-c, k)/C(N, k) for c "
    "of N epochs passed (Inspect's pass_at), averaged over units; its 95% interval by the same "
    "rule, each problem one cluster."
)
REPEATED_NOTE = "With several epochs (N), % is pass@1 averaged over the N, and pass@k is pass@N. "
COUNT_LABELS = {"main": "problems solved", "sub": "steps passed"}
DIFFERS = "protocol where rows differ"


@dataclass
class Comparison:
    benchmark: str
    metric: str
    a: Run
    b: Run
    result: Paired


@dataclass
class Section:
    """One benchmark's part of the report; ``figures`` are (file name, caption), filled by plots.

    ``tables[0]`` is the results table and ``tables[1]`` the full protocol record."""

    benchmark: str
    runs: list[Run]
    tables: list[Table]
    comparisons: list[Comparison]
    figures: list[tuple[str, str]] = field(default_factory=list)


def protocol_label(benchmark: str, key: str) -> str:
    return BENCHMARK_LABELS.get(benchmark, {}).get(key) or PROTOCOL_LABELS.get(
        key, key.replace("_", " ")
    )


def overridden(run: Run) -> dict[str, object] | None:
    """What the run changed of its preset: the parameters the task recorded, and generation
    settings that ran otherwise than the preset set them (an eval-level ``--epochs``, say)."""
    preset = run.protocol.get("preset_fields")
    if not isinstance(preset, dict):
        return None
    changed = dict(run.protocol.get("overridden") or {})
    ran = {"temperature": run.temperature, "max_tokens": run.max_tokens, "epochs": run.epochs}
    changed |= {k: v for k, v in ran.items() if k in preset and preset[k] != v}
    return changed or None


def settings(run: Run) -> dict[str, str]:
    """Everything that defines a run besides its model, label -> text: the protocol record the
    task wrote (whatever its keys), then the generation settings and epochs. A preset's fields
    are not repeated (they are the record's own fields; its name says which preset)."""
    out = {
        protocol_label(run.benchmark, k): oc.describe(overridden(run) if k == "overridden" else v)
        for k, v in run.protocol.items()
        if k not in ("benchmark", "preset_fields")
    }
    out["temperature"] = oc.describe(run.temperature) if run.temperature is not None else "default"
    out["max tokens"] = oc.describe(run.max_tokens) if run.max_tokens is not None else "default"
    out["epochs"] = str(run.epochs)
    return out


def applicable(runs: Sequence[Run]) -> list[str]:
    """Setting labels that some run fills in (SciBench rows get no SciCode-only fields)."""
    labels = list(dict.fromkeys(label for run in runs for label in settings(run)))
    return [label for label in labels if any(settings(r).get(label, "-") != "-" for r in runs)]


def differing(runs: Sequence[Run]) -> list[str]:
    """Setting labels whose value is not the same for every run."""
    return [
        label for label in applicable(runs) if len({settings(r).get(label, "-") for r in runs}) > 1
    ]


def describe_settings(run: Run, labels: Sequence[str]) -> str:
    values = settings(run)
    return "; ".join(f"{label} {values.get(label, '-')}" for label in labels)


def k_of_n(est: Estimate | None) -> str:
    """Passed of scored units, per epoch (a mean when there are several)."""
    if est is None:
        return "-"
    return passed_of((est.value * est.n, est.n)) or "-"


def _pct(est: Estimate | None) -> Pct | None:
    return None if est is None else Pct.of(est)


def headline_metrics(runs: Sequence[Run]) -> list[str]:
    metrics: list[str] = []
    for run in runs:
        metrics += [m for m in oc.metrics_of(run) if m not in metrics]
    return metrics


def count_label(metric: str) -> str:
    return COUNT_LABELS.get(metric, f"{metric} correct")


def _worth(benchmark: str, runs: Sequence[Run]) -> list[str]:
    """What one unit is worth, for the counts each row actually scored."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        ests = {m: estimate(oc.outcomes_for(run, m)) for m in oc.metrics_of(run)}
        if benchmark == "scicode" and ests.get("main") and ests.get("sub"):
            n, steps = ests["main"].n, ests["sub"].n  # type: ignore[union-attr]
            line = (
                f"one main problem of {n} is worth {100 / n:.1f} points, "
                f"one step of {steps} {100 / steps:.2f} points"
            )
        elif ests and (first := next(iter(ests.values()))):
            line = f"one problem of {first.n} is worth {100 / first.n:.1f} points"
        else:
            continue
        groups.setdefault(line, []).append(run.name)
    if len(groups) == 1 and len(runs) > 1:
        return [f"Every row: {line}." for line in groups]
    return [f"{', '.join(names)}: {line}." for line, names in groups.items()]


def pass_at_label(metric: str) -> str:
    return f"{oc.metric_label(metric)} pass@k %"


def pass_at_estimate(run: Run, metric: str, k: int) -> Estimate | None:
    """pass@k with its interval; k = 1 is the epochs-as-units rate (pass@1 averaged over the
    epochs, the results' own column); None past the epochs every sample has."""
    if k == 1:
        return estimate(oc.outcomes_for(run, metric))
    if k > oc.max_k(run):
        return None
    return estimate(oc.pass_at_outcomes(run, metric, k))


def pass_at_cell(run: Run, metric: str) -> Pct | None:
    """pass@N of one run and metric, N its epochs; None at one epoch (pass@1 is the % column)."""
    return None if run.epochs < 2 else _pct(pass_at_estimate(run, metric, run.epochs))


def results_table(benchmark: str, runs: Sequence[Run]) -> Table:
    """Scores first: one row per run (model x protocol), each headline metric with its interval
    and count (pass@1), pass@k beside it when a run has several epochs, then the protocol fields
    in which the rows differ (the rest in a note)."""
    metrics = headline_metrics(runs)
    differ = differing(runs)
    repeated = any(run.epochs > 1 for run in runs)
    columns = ["run", "model"]
    for m in metrics:
        columns += [f"{oc.metric_label(m)} %", count_label(m)]
        columns += [pass_at_label(m)] if repeated else []
    if benchmark == "scibench":
        columns += [f"{m} no answer" for m in metrics]
    if differ:
        columns.append(DIFFERS)
    errors = any(run.errors for run in runs)
    if errors:
        columns.append("errors")
    rows = []
    for run in runs:
        row: list = [run.name, run.model]
        ests = {m: estimate(oc.outcomes_for(run, m)) for m in oc.metrics_of(run)}
        for m in metrics:
            row += [_pct(ests.get(m)), k_of_n(ests.get(m))]
            row += [pass_at_cell(run, m) if m in ests else None] if repeated else []
        if benchmark == "scibench":
            row += [oc.scibench_unextracted(run, m) if m in ests else None for m in metrics]
        if differ:
            row.append(describe_settings(run, differ))
        if errors:
            row.append(run.errors)
        rows.append(row)
    shared = [label for label in applicable(runs) if label not in differ]
    notes = [INTERVAL_NOTE, *([REPEATED_NOTE + PASS_AT_NOTE] if repeated else [])]
    notes += _worth(benchmark, runs)
    if shared and runs:
        notes.append(
            ("Protocol of every row: " if len(runs) > 1 else "Protocol: ")
            + describe_settings(runs[0], shared)
            + " (full record: protocol table)."
        )
    notes += [f"{run.name}: {note}" for run in runs for note in run.notes]
    if benchmark == "scicode":
        notes += [f"{run.name}: {note}" for run in runs if (note := weak_note(run))]
    return Table(f"{benchmark}_results", f"{benchmark}: results", columns, rows, notes)


def pass_at_table(benchmark: str, runs: Sequence[Run]) -> Table | None:
    """pass@k for every k up to each run's epochs (runs of one epoch have only pass@1)."""
    repeated = [run for run in runs if run.epochs > 1]
    if not repeated:
        return None
    metrics = headline_metrics(repeated)
    rows = []
    for run in repeated:
        for k in range(1, oc.max_k(run) + 1):
            rows.append(
                [
                    run.name,
                    run.model,
                    k,
                    *[
                        _pct(pass_at_estimate(run, m, k)) if m in oc.metrics_of(run) else None
                        for m in metrics
                    ],
                ]
            )
    return Table(
        f"{benchmark}_pass_at_k",
        f"{benchmark}: pass@k",
        ["run", "model", "k", *[f"{oc.metric_label(m)} pass@k %" for m in metrics]],
        rows,
        [PASS_AT_NOTE, INTERVAL_NOTE],
    )


def protocol_table(benchmark: str, runs: Sequence[Run]) -> Table:
    """The full record of every run: each protocol field, generation setting and its logs."""
    labels = applicable(runs)
    rows = [
        [run.name, run.model, *[settings(run).get(label, "-") for label in labels], run.path]
        for run in runs
    ]
    return Table(
        f"{benchmark}_protocol",
        f"{benchmark}: protocol of each run",
        ["run", "model", *labels, "log"],
        rows,
        ["As each task recorded it in its log (metadata.protocol), and Inspect's settings."],
    )


def _coverage(run: Run) -> str | None:
    """Why a run is not yet comparable with a published figure: it scored fewer units."""
    expected = run.protocol.get("steps_counted")
    if not isinstance(expected, int):
        return None
    metric = "sub" if run.benchmark == "scicode" else oc.metrics_of(run)[0]
    scored = len(oc.outcomes_for(run, metric)) / max(run.epochs, 1)
    if scored < expected:
        unit = "steps" if run.benchmark == "scicode" else "problems"
        return f"{run.name} scored {count(scored)} of {expected} {unit}: a partial run"
    return None


def published_table(benchmark: str, runs: Sequence[Run]) -> Table | None:
    """Published rows whose protocol some run matches, with the runs they are comparable with."""
    matched: dict[int, tuple[Reference, list[str]]] = {}
    for run in runs:
        for ref in references_for(run.protocol):
            matched.setdefault(id(ref), (ref, []))[1].append(run.name)
    if not matched:
        return None
    metrics = ["main", "sub"] if benchmark == "scicode" else ["faithful"]
    columns = [
        "source",
        "model",
        "setting",
        *[f"{oc.metric_label(m)} %" for m in metrics],
        "comparable with",
    ]
    rows = [
        [
            ref.source,
            ref.model,
            ref.setting,
            *[Pct(ref.metrics[m]) if m in ref.metrics else None for m in metrics],
            ", ".join(names),
        ]
        for ref, names in matched.values()
    ]
    notes = ["Published figures, not run here; shown only beside runs of the same protocol."]
    notes += [
        c
        for run in runs
        if any(run.name in n for _, n in matched.values())
        if (c := _coverage(run))
    ]
    return Table(
        f"{benchmark}_published",
        f"{benchmark}: published figures (reference)",
        columns,
        rows,
        notes,
    )


def _run_metric_columns(runs: Sequence[Run]) -> list[tuple[Run, str]]:
    return [(run, m) for run in runs for m in oc.scibench_scorers(run)]


def scibench_group_table(runs: Sequence[Run], by: str) -> Table:
    """Accuracy per book or per subject: one column per (run, scorer), one row per group."""
    pairs = _run_metric_columns(runs)
    grouped = {(r.name, m): oc.scibench_outcomes(r, m, by) for r, m in pairs}
    groups = sorted({g for d in grouped.values() for g in d}, key=natural_key)
    refs: list[tuple[Reference, str]] = []
    if by == "book":
        for run in runs:
            refs += [
                (ref, run.name)
                for ref in references_for(run.protocol, ("steps_counted",))
                if ref.books and all(ref is not r for r, _ in refs)
            ]
    columns = [by, "problems", *[f"{r.name} {m} %" for r, m in pairs]]
    columns += [f"published {ref.model} ({ref.setting}, beside {name}) %" for ref, name in refs]
    rows: list[list] = []
    for g in groups:
        n = max((len({o.unit for o in d.get(g, [])}) for d in grouped.values()), default=0)
        row: list = [g, n, *[_pct(estimate(grouped[(r.name, m)].get(g, []))) for r, m in pairs]]
        row += [Pct(ref.books[g]) if g in ref.books else None for ref, _ in refs]
        rows.append(row)
    if by == "book" and groups:
        macro: list = ["macro average", None]
        for r, m in pairs:
            ests = [e for g in groups if (e := estimate(grouped[(r.name, m)].get(g, [])))]
            macro.append(Pct(100 * sum(e.value for e in ests) / len(ests)) if ests else None)
        macro += [None] * len(refs)
        rows.append(macro)
    notes = [INTERVAL_NOTE]
    if refs:
        notes.append("Published columns: the paper's figures (old 583-item split), not run here.")
    return Table(f"scibench_by_{by}", f"scibench: accuracy by {by}", columns, rows, notes)


def scicode_problem_table(runs: Sequence[Run]) -> Table:
    """Steps passed of steps scored, per main problem and run (a mean over epochs)."""
    per = {run.name: oc.scicode_per_problem(run) for run in runs}
    problems = sorted({p for d in per.values() for p in d}, key=natural_key)
    rows = [[pid, *[passed_of(per[run.name].get(pid)) for run in runs]] for pid in problems]
    return Table(
        "scicode_problems",
        "scicode: steps passed per problem",
        ["problem", *[r.name for r in runs]],
        rows,
        ["Steps passed of steps scored; with several epochs, the mean over epochs."],
    )


def scicode_failure_table(runs: Sequence[Run]) -> Table:
    """Failed steps by reason kind, per run (all epochs together)."""
    per = {run.name: oc.scicode_failures(run) for run in runs}
    present = {k for c in per.values() for k in c} - set(oc.FAILURE_KINDS)
    order = {kind: i for i, kind in enumerate(REASON_KINDS)}
    kinds = [*oc.FAILURE_KINDS, *sorted(present, key=lambda k: (order.get(k, len(order)), k))]
    rows = [
        [run.name, run.model, sum(per[run.name].values()), *[per[run.name][k] for k in kinds]]
        for run in runs
    ]
    return Table(
        "scicode_failures",
        "scicode: failed steps by reason",
        ["run", "model", "failed steps", *kinds],
        rows,
        ["Counts over all epochs, from the scorer's reason_kind per failed step."],
    )


def scicode_runtime_table(runs: Sequence[Run]) -> Table | None:
    """What each later scoring runtime added, for runs graded in several (None if none was)."""
    rows = []
    for run in runs:
        per = oc.scicode_runtimes(run)
        for index, (name, counts) in enumerate(per.items()):
            added = "-" if index == 0 else counts["added"]
            rows.append([run.name, run.model, name, counts["graded"], counts["passed"], added])
    if not rows:
        return None
    return Table(
        "scicode_runtimes",
        "scicode: what each scoring runtime added",
        ["run", "model", "runtime", "steps graded", "passed there", "added"],
        rows,
        [
            "A step passes if any runtime passes. Runtimes are tried in the order listed; a "
            "later one grades only what the earlier ones failed (unless all_runtimes). "
            "'added': steps that passed there and in no runtime before it. Counts over all "
            "epochs."
        ],
    )


def default_pairs(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """Every pair of runs of one benchmark that scored at least one sample in common."""
    out = []
    for a, b in combinations(runs, 2):
        if a.benchmark == b.benchmark and {s.id for s in a.samples} & {s.id for s in b.samples}:
            out.append((a, b))
    return out


def compare_runs(a: Run, b: Run) -> list[Comparison]:
    metrics = [m for m in oc.metrics_of(a) if m in oc.metrics_of(b)]
    out = []
    for m in metrics:
        result = paired(oc.outcomes_for(a, m), oc.outcomes_for(b, m))
        if result is not None:
            out.append(Comparison(a.benchmark, m, a, b, result))
    return out


def _differs(a: Run, b: Run) -> str:
    """What separates two runs: the model, any protocol field or generation setting, epochs."""
    sa, sb = settings(a), settings(b)
    diffs = [f"model: {a.model} -> {b.model}"] if a.model != b.model else []
    diffs += [
        f"{label}: {sa.get(label, '-')} -> {sb.get(label, '-')}"
        for label in dict.fromkeys([*sa, *sb])
        if sa.get(label, "-") != sb.get(label, "-")
    ]
    return "; ".join(diffs) or "nothing (a repeat)"


def comparison_tables(benchmark: str, comparisons: Sequence[Comparison]) -> list[Table]:
    """The paired differences, and the units that flipped between the two runs."""
    rows, flips = [], []
    for c in comparisons:
        r = c.result
        label = oc.metric_label(c.metric)
        rows.append(
            [
                label,
                c.a.name,
                c.b.name,
                _differs(c.a, c.b),
                r.n,
                Pct(100 * r.a),
                Pct(100 * r.b),
                Pct(100 * r.diff, 100 * r.lo, 100 * r.hi, signed=True),
                r.lost,
                r.gained,
                r.p_value,
            ]
        )
        flips.append(
            [
                label,
                c.a.name,
                c.b.name,
                ", ".join(sorted(r.lost_units, key=natural_key)) or "-",
                ", ".join(sorted(r.gained_units, key=natural_key)) or "-",
            ]
        )
    unit = "problem" if benchmark == "scibench" else "main problem (main) or step (subproblems)"
    return [
        Table(
            f"{benchmark}_comparisons",
            f"{benchmark}: paired comparisons (B - A)",
            [
                "metric",
                "A",
                "B",
                "A and B differ in",
                "pairs",
                "A %",
                "B %",
                "B - A (points) [95% CI]",
                "passed only in A",
                "passed only in B",
                "McNemar p",
            ],
            rows,
            [
                f"Paired by sample id and epoch; unit = {unit}. Interval: units gained and lost, "
                "each clustered by problem, combined (MOVER); p: exact two-sided McNemar on the "
                "discordant pairs (units taken as independent)."
            ],
        ),
        Table(
            f"{benchmark}_flips",
            f"{benchmark}: units that flipped",
            ["metric", "A", "B", "passed only in A", "passed only in B"],
            flips,
            ["With several epochs a unit is written id#epoch."],
        ),
    ]


def build_sections(
    runs: Sequence[Run],
    pairs: Sequence[tuple[Run, Run]] | None = None,
    prices: Mapping[str, Price] | None = None,
) -> list[Section]:
    """All tables of the report, one section per benchmark that has runs (costs from
    ``prices``, dollars per million tokens by model)."""
    pairs = default_pairs(runs) if pairs is None else pairs
    prices = prices or {}
    sections = []
    for bench in dict.fromkeys(r.benchmark for r in runs):  # in run order: scicode first
        bruns = [r for r in runs if r.benchmark == bench]
        tables = [results_table(bench, bruns), protocol_table(bench, bruns)]
        if passes := pass_at_table(bench, bruns):
            tables.append(passes)
        if pub := published_table(bench, bruns):
            tables.append(pub)
        if beside := evaluation_table(bench, bruns, prices):
            tables.append(beside)
        tables += [
            t for t in (regrade_table(bench, bruns), regrade_differences_table(bench, bruns)) if t
        ]
        tables.append(usage_table(bench, bruns, prices))
        if bench == "scibench":
            tables += [scibench_group_table(bruns, "book"), scibench_group_table(bruns, "subject")]
        elif bench == "scicode":
            tables.append(scicode_problem_table(bruns))
            if weak := weak_table(bruns):
                tables.append(weak)
            tables.append(scicode_failure_table(bruns))
            if runtimes := scicode_runtime_table(bruns):
                tables.append(runtimes)
        comparisons = [c for a, b in pairs if a.benchmark == bench for c in compare_runs(a, b)]
        if comparisons:
            tables += comparison_tables(bench, comparisons)
        sections.append(Section(bench, bruns, tables, comparisons))
    return sections
