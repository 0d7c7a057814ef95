"""What every ``scievals regrade`` source writes: its terminal table, and its JSON file whole.

Shared by the SciCode and SciBench re-grades, which import nothing of each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from scievals.inputs import InputError

OUT_FILE = "regrade.json"
"""The comparison a re-grade writes into ``--out``."""
VERIFY_FILE = "verify.json"
"""What ``--verify`` writes into ``--out``."""


def out_file(out: str | None, overwrite: bool, name: str) -> Path | None:
    """Where the JSON goes, checked before any grading (one line when it cannot go there)."""
    if out is None:
        return None
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out} is not a folder: name a folder for {name}")
    if not folder.parent.is_dir():
        raise InputError(f"--out {out}: folder {folder.parent} does not exist")
    target = folder / name
    if target.exists() and not overwrite:
        raise InputError(f"{target} exists: pass --overwrite to replace it")
    return target


def counted(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def stamp() -> dict[str, str]:
    """Which scievals wrote a result file, and when (every result file carries it)."""
    return {"scievals": version("scievals"), "date": datetime.now(UTC).date().isoformat()}


def columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns (the last column is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([cell.ljust(w) for cell, w in zip(row, widths, strict=False)] + [row[-1]])
        for row in rows
    ]


Row = tuple[str, str, str, Mapping[str, Any]]
"""A unit the source and the official rule judge differently: its name, the source's word, the
official rule's word, and the difference's record (its ``cause`` and ``detail``)."""


def difference_table(header: tuple[str, str, str], rows: Iterable[Row]) -> list[str]:
    """The indented table of what a source and the official rule judge differently: a row per
    unit, its ``cause`` and ``detail`` closing the row."""
    table = [(*header, "cause", "detail")]
    table += [
        (name, theirs, ours, r["cause"] or "-", r["detail"]) for name, theirs, ours, r in rows
    ]
    return ["  " + line for line in columns(table)]


def log_entry(
    source: Mapping[str, Any],
    run: str,
    model: str,
    recorded: Any,
    scores: Mapping[str, float | None],
    rows: Iterable[Row],
) -> dict[str, Any]:
    """The ``regrade`` entry of a re-graded run's scievals log (its metadata), the same for
    every source and benchmark, which ``scievals report`` reads: where the answers came from,
    what the source recorded (``recorded``, its own numbers as the comparison holds them), its
    score for each of the log's metrics (percent; None where it recorded none), and each unit
    judged differently with its cause."""
    return {
        **source,
        "run": run,
        "model": model,
        "recorded": recorded,
        "source_scores": dict(scores),
        "differing": [
            {"unit": n, "source": t, "official": o, "cause": r["cause"], "detail": r["detail"]}
            for n, t, o, r in rows
        ],
    }
