"""When a SciCode main problem counts as solved: one rule for the metrics, ``scievals grade`` and
the reports (plain data only, so that grading loads no Inspect or SciPy for it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def problem_solved(steps: Mapping[str, Any]) -> bool:
    """The one definition of a solved main problem: it has scored steps and every one passed."""
    return bool(steps) and all(float(v) == 1.0 for v in steps.values())
