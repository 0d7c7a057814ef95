"""The steps whose tests accept a trivial answer (``scievals audit scicode``), flagged per step.

A pass on such a step says little about the model: the report lists, for every audited weak step a
run scored, the trivial answers its tests took and each run's passes there, and names the
problems that hold one. The audit shipped with the package covers the dev split of the original
dataset (the test split's targets are not here to audit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from scievals.report import outcomes as oc
from scievals.report.load import Run, natural_key
from scievals.report.tables import Table, passed_of
from scievals.scicode import Finding, shipped_audit


def _findings() -> dict[str, list[Finding]]:
    return {step: [Finding(**f) for f in found] for step, found in shipped_audit().items()}


def _audited(run: Run) -> bool:
    """The shipped audit holds for the original dataset's steps (Verified changed its tests)."""
    return run.protocol.get("dataset") in ("original", None)


def weak_steps(run: Run) -> list[str]:
    """The audited weak steps this run scored, in order."""
    if not _audited(run):
        return []
    found = _findings()
    return sorted({o.unit for o in oc.scicode_steps(run) if o.unit in found}, key=natural_key)


def _passes(run: Run) -> dict[str, tuple[float, int]]:
    """Step -> (epochs passed, epochs scored)."""
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for o in oc.scicode_steps(run):
        out[o.unit][0] += o.value
        out[o.unit][1] += 1
    return {step: (v[0], int(v[1])) for step, v in out.items()}


def _strongest(found: Sequence[Finding]) -> Finding:
    """The finding to show first: a whole-step pass, else the most tests accepted."""
    return max(found, key=lambda f: (f.passed, f.accepted))


def weak_table(runs: Sequence[Run]) -> Table | None:
    """One row per audited weak step some run scored: what the tests accept, each run's passes."""
    steps = sorted({s for run in runs for s in weak_steps(run)}, key=natural_key)
    if not steps:
        return None
    found = _findings()
    passes = {run.name: _passes(run) for run in runs}
    rows: list[list[Any]] = []
    for step in steps:
        best = _strongest(found[step])
        taken = [f.answer for f in found[step] if f.passed]
        row: list[Any] = [
            step,
            "whole step" if taken else f"{best.accepted} of {best.tests} tests",
            ", ".join(taken) or best.answer,
            best.code,
        ]
        rows.append([*row, *[passed_of(passes[run.name].get(step)) for run in runs]])
    return Table(
        "scicode_weak_steps",
        "scicode: steps whose tests accept a trivial answer",
        ["step", "accepted by", "trivial answer", "code", *[f"{r.name} passed" for r in runs]],
        rows,
        [
            "From `scievals audit scicode` (dev split, original dataset; docs/scicode-audit.md): "
            "each trivial answer graded as the step's function through the real grader. "
            "'whole step': the answer passes every test; 'k of n tests': the first k tests "
            "accepted it before one rejected it. A pass here says little about the model.",
        ],
    )


def weak_note(run: Run) -> str | None:
    """A results note: how many of the run's scored steps a trivial answer passes."""
    found = _findings()
    whole = [s for s in weak_steps(run) if any(f.passed for f in found[s])]
    if not whole:
        return None
    return (
        f"{len(whole)} of its steps ({', '.join(whole)}) pass with a trivial answer "
        "(scievals audit scicode; table 'steps whose tests accept a trivial answer')."
    )
