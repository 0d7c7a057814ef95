"""The ``regrade`` entry of a re-graded run's log, read as untrusted input.

``scievals regrade`` writes it (``regrade_out.log_entry``); a log from elsewhere may hold anything
under that name. What does not have the entry's shape is dropped, every text is cut short and
the list of differences is bounded, so a hostile log cannot blow up the report it is read into.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 200
"""Characters kept of each text of the entry."""
MAX_DIFFERENCES = 2000
"""Differences kept per run: more than SciCode's 338 steps and 80 problems, or SciBench's 757."""
MAX_METRICS = 16


@dataclass(frozen=True)
class Difference:
    """One unit the source and the official rule judge differently."""

    unit: str
    source: str
    official: str
    cause: str
    detail: str


@dataclass(frozen=True)
class Regrade:
    """Where a re-graded run's answers came from, and what the source itself said of them."""

    source: str
    run: str
    model: str
    scores: Mapping[str, float | None]
    """The source's own score per metric of the log, in percent (None: it recorded none)."""
    differences: tuple[Difference, ...]
    more: int
    """Differences the log holds beyond ``MAX_DIFFERENCES``."""


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else "" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _percent(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and 0 <= value <= 100 else None


def _difference(row: Any) -> Difference | None:
    if not isinstance(row, dict):
        return None
    fields = ("unit", "source", "official", "cause", "detail")
    return Difference(*(_text(row.get(name)) for name in fields))


def regrade_of(metadata: Mapping[str, Any] | None) -> Regrade | None:
    """The log's ``regrade`` entry, or None where the log has none of that shape."""
    entry = (metadata or {}).get("regrade")
    if not isinstance(entry, dict) or not isinstance(entry.get("run"), str):
        return None
    scores = entry.get("source_scores")
    scores = list(scores.items())[:MAX_METRICS] if isinstance(scores, dict) else []
    rows = entry.get("differing")
    rows = rows if isinstance(rows, list) else []
    kept = [d for row in rows[:MAX_DIFFERENCES] if (d := _difference(row)) is not None]
    return Regrade(
        source=_text(entry.get("source")),
        run=_text(entry["run"]),
        model=_text(entry.get("model")),
        scores={_text(name): _percent(value) for name, value in scores},
        differences=tuple(kept),
        more=max(len(rows) - MAX_DIFFERENCES, 0),
    )
