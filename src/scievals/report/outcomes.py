"""Runs -> outcomes per unit, following the score contract of each benchmark's task.

SciCode: one scorer whose value is ``{step_id: 1.0|0.0}``; a main problem is solved when every
step passed; failures carry ``reason_kind`` in ``Score.metadata["steps"]``.
SciBench: scorers ``faithful`` and/or ``robust`` with 1/0 (or C/I) per problem; sample metadata
names the ``book`` and ``subject``.
pass@k comes from a sample's epochs, by the benchmark's own functions (Inspect's ``pass_at``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from inspect_ai.scorer import Score, value_to_float

from scievals.report.load import Run, natural_key
from scievals.scibench import pass_at_problem
from scievals.scicode import REASON_KINDS, added_by, pass_at_main, pass_at_steps, problem_solved
from scievals.stats import Outcome

SCIBENCH_SCORERS = ("faithful", "robust")
FAILURE_KINDS = REASON_KINDS[:5]
"""Failure kinds that always get a column; the rarer ones appear when a run has them."""

_to_float = value_to_float()


def _scicode_score(scores: dict[str, Score]) -> Score | None:
    """The SciCode scorer's score: the first one whose value maps steps to results."""
    return next((s for s in scores.values() if isinstance(s.value, dict)), None)


def scicode_steps(run: Run) -> list[Outcome]:
    """One outcome per scored step, clustered by main problem."""
    out = []
    for s in run.samples:
        score = _scicode_score(s.scores)
        if score is None:
            continue
        for step, value in score.value.items():  # type: ignore[union-attr]
            out.append(Outcome(s.epoch, s.id, str(step), float(value)))
    return out


def scicode_problems(run: Run) -> list[Outcome]:
    """One outcome per main problem: 1 when every step passed."""
    out = []
    for s in run.samples:
        score = _scicode_score(s.scores)
        if score is None or not score.value:
            continue
        solved = problem_solved(score.value)  # type: ignore[arg-type]
        out.append(Outcome(s.epoch, s.id, s.id, 1.0 if solved else 0.0))
    return out


def scicode_per_problem(run: Run) -> dict[str, tuple[float, int]]:
    """Problem id -> (steps passed, averaged over epochs; steps scored)."""
    passed: dict[str, float] = defaultdict(float)
    steps: dict[str, int] = {}
    epochs: dict[str, int] = defaultdict(int)
    for o in scicode_steps(run):
        passed[o.cluster] += o.value
    for s in run.samples:
        score = _scicode_score(s.scores)
        if score is not None:
            steps[s.id] = len(score.value)  # type: ignore[arg-type]
            epochs[s.id] += 1
    return {pid: (passed[pid] / epochs[pid], steps[pid]) for pid in steps}


def scicode_step_grid(run: Run) -> dict[str, dict[str, float]]:
    """Problem id -> step id -> pass rate over epochs, for the heat map."""
    total: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    count: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for o in scicode_steps(run):
        total[o.cluster][o.unit] += o.value
        count[o.cluster][o.unit] += 1
    return {
        pid: {step: total[pid][step] / count[pid][step] for step in steps}
        for pid, steps in count.items()
    }


def scicode_failures(run: Run) -> Counter[str]:
    """Failed steps by ``reason_kind``, summed over epochs ("unknown" when the scorer gave none)."""
    kinds: Counter[str] = Counter()
    for s in run.samples:
        score = _scicode_score(s.scores)
        if score is None:
            continue
        for step in (score.metadata or {}).get("steps", []):
            if not step.get("passed", False):
                kinds[str(step.get("reason_kind") or "unknown")] += 1
    return kinds


def scicode_runtimes(run: Run) -> dict[str, Counter[str]]:
    """Per scoring runtime, over all epochs: steps it graded, passed, and ``added`` (passed where
    every runtime before it failed: what grading in it added). Empty for a one-runtime run."""
    names = list(run.protocol.get("runtimes") or [])
    if len(names) < 2:
        return {}
    counts: dict[str, Counter[str]] = {name: Counter() for name in names}
    for s in run.samples:
        score = _scicode_score(s.scores)
        for step in ((score.metadata or {}) if score else {}).get("steps", []):
            for name, verdict in (step.get("runtimes") or {}).items():
                if name in counts:
                    counts[name]["graded"] += 1
                    counts[name]["passed"] += bool(verdict.get("passed"))
            if (owed := added_by(step, names)) in counts:
                counts[owed]["added"] += 1
    return counts


def scibench_scorers(run: Run) -> list[str]:
    """Scorer names in the run, faithful and robust first."""
    names = {name for s in run.samples for name in s.scores}
    known = [n for n in SCIBENCH_SCORERS if n in names]
    return known + sorted(names - set(known))


def scibench_outcomes(run: Run, scorer: str, by: str | None = None) -> dict[str, list[Outcome]]:
    """One scorer's outcomes by a sample metadata field (all under "" if ``by`` is None)."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for s in run.samples:
        score = s.scores.get(scorer)
        if score is None:
            continue
        group = "" if by is None else str(s.metadata.get(by, "unknown"))
        groups[group].append(Outcome(s.epoch, s.id, s.id, _to_float(score.value)))
    return dict(sorted(groups.items(), key=lambda kv: natural_key(kv[0])))


def scibench_unextracted(run: Run, scorer: str) -> int:
    """Scored samples (all epochs) where the scorer found no answer to compare."""
    return sum(
        1
        for s in run.samples
        if scorer in s.scores and (s.scores[scorer].metadata or {}).get("extracted") is False
    )


def outcomes_for(run: Run, metric: str) -> list[Outcome]:
    """Outcomes behind one headline metric: scicode "main" or "sub", or a SciBench scorer name."""
    if run.benchmark == "scicode":
        return scicode_problems(run) if metric == "main" else scicode_steps(run)
    return scibench_outcomes(run, metric).get("", [])


def _epochs_of(run: Run, metric: str) -> dict[str, list[Score]]:
    """Sample id -> the score behind ``metric`` in each epoch it was scored in."""
    by_sample: dict[str, list[Score]] = defaultdict(list)
    for s in sorted(run.samples, key=lambda s: s.epoch):
        score = _scicode_score(s.scores) if run.benchmark == "scicode" else s.scores.get(metric)
        if score is not None:
            by_sample[s.id].append(score)
    return by_sample


def max_k(run: Run) -> int:
    """The largest k pass@k is defined for: the fewest epochs any sample was scored in."""
    metric = metrics_of(run)[0] if metrics_of(run) else ""
    return min((len(v) for v in _epochs_of(run, metric).values()), default=0)


def pass_at_outcomes(run: Run, metric: str, k: int) -> list[Outcome]:
    """One outcome per unit (a main problem, a step, a SciBench problem) whose value is its
    pass@k over the run's epochs, clustered by problem as ``outcomes_for``."""
    out = []
    for sid, scores in _epochs_of(run, metric).items():
        if run.benchmark != "scicode":
            out.append(Outcome(0, sid, sid, pass_at_problem(scores, k)))
        elif metric == "main":
            out.append(Outcome(0, sid, sid, pass_at_main(scores, k)))
        else:
            out += [Outcome(0, sid, step, v) for step, v in pass_at_steps(scores, k).items()]
    return out


def metrics_of(run: Run) -> list[str]:
    """Headline metrics of a run, in display order."""
    return ["main", "sub"] if run.benchmark == "scicode" else scibench_scorers(run)


METRIC_LABELS: dict[str, str] = {"main": "main problems", "sub": "subproblems (steps)"}


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, f"{metric} accuracy")


def describe(value: Any) -> str:
    """A protocol value as a table cell."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)
