"""What both SciBench scorers return, and the tolerance both compare with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

REL_TOL = 0.05  # the official math.isclose(rel_tol=0.05); the robust scorer keeps it


@dataclass(frozen=True)
class Verdict:
    """One scored answer: what was parsed, by which rule, and whether it counts as extracted."""

    correct: bool
    parsed: str | float | None
    rule: str
    extracted: bool
    details: dict[str, Any] = field(default_factory=dict)
