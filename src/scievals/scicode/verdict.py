"""A SciCode step's verdict and when a main problem counts as solved: one definition for
grading, scoring, ``scievals grade`` and the reports (plain data only, so that reading a verdict
loads no Inspect, sandbox or SciPy)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

REASON_KINDS = (
    "syntax_error",
    "exception",
    "assertion",
    "timeout",
    "missing_function",
    "missing_record",
    "limit",
    "unsupported",
    "invalid_record",
    "too_large",
    "infrastructure",
)
"""Why a step failed (``StepVerdict.reason_kind``), as docs/scicode-grading.md explains each."""


@dataclass
class StepVerdict:
    """One step's verdict, as the scorer's metadata, ``scievals grade`` and the log carry it."""

    step: str
    passed: bool
    reason_kind: str | None = None
    """One of ``REASON_KINDS``, None when the step passed."""
    reason: str | None = None
    seconds: float = 0.0
    reused: bool = False
    """The same program was already graded in this run: this is its verdict."""
    runtime: str | None = None
    """The scoring runtime whose verdict this is (with several: the first that passed, else
    the first tried)."""
    runtimes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Runtime name -> that runtime's own verdict, for every runtime that graded the step."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def added_by(verdict: Mapping[str, Any], runtimes: Sequence[str]) -> str | None:
    """The later runtime a step's pass is owed to (it failed in every runtime before), or None:
    read from a verdict as ``StepVerdict.as_dict`` writes it (its ``runtime`` is the first
    that passed)."""
    runtime = verdict.get("runtime")
    if verdict.get("passed") and runtimes and runtime != runtimes[0]:
        return runtime
    return None


def problem_solved(steps: Mapping[str, Any]) -> bool:
    """The one definition of a solved main problem: it has scored steps and every one passed."""
    return bool(steps) and all(float(v) == 1.0 for v in steps.values())
