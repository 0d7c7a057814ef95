"""A neutral table (typed cells) and its Markdown and CSV forms.

Tables keep numbers as numbers until rendered: Markdown rounds percentages to one decimal for
reading, CSV keeps four decimals and puts each interval bound in its own column for analysis.
Text in a CSV cell that a spreadsheet would run as a formula (a model name ``=HYPERLINK(...)``
from a log) is written so that it is read as text.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field

from scievals.stats import Estimate


@dataclass(frozen=True)
class Pct:
    """A percentage cell, optionally with a 95% interval and its standard error (all in %).

    The standard error goes to CSV only; people read the interval."""

    value: float
    lo: float | None = None
    hi: float | None = None
    se: float | None = None
    signed: bool = False  # a difference: show "+" on gains

    @classmethod
    def of(cls, est: Estimate) -> Pct:
        return cls(100 * est.value, 100 * est.lo, 100 * est.hi, 100 * est.se)


Cell = str | int | float | Pct | None


@dataclass
class Table:
    """``key`` names the CSV file; ``notes`` explain how the numbers were made."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)


def count(value: float) -> str:
    """A count that may be a mean over epochs: 3 -> "3", 1.5 -> "1.5"."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def passed_of(got: tuple[float, int] | None) -> str | None:
    """``(passed, scored)`` as "passed/scored" (passed may be a mean over epochs); None: not
    scored."""
    return None if got is None else f"{count(round(got[0], 6))}/{got[1]}"


def _num(value: float, signed: bool = False) -> str:
    return "nan" if math.isnan(value) else (f"{value:+.1f}" if signed else f"{value:.1f}")


def text(cell: Cell) -> str:
    """The human-readable form of a cell (Markdown and HTML)."""
    if cell is None:
        return "-"
    if isinstance(cell, Pct):
        out = _num(cell.value, cell.signed)
        if cell.lo is not None and cell.hi is not None:
            out += f" [{_num(cell.lo, cell.signed)}, {_num(cell.hi, cell.signed)}]"
        return out
    if isinstance(cell, float):
        return f"{cell:.3g}"
    return str(cell)


def to_markdown(table: Table) -> str:
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    lines = [f"### {table.title}", ""]
    lines.append("| " + " | ".join(esc(c) for c in table.columns) + " |")
    lines.append("|" + "---|" * len(table.columns))
    for row in table.rows:
        lines.append("| " + " | ".join(esc(text(c)) for c in row) + " |")
    lines += [""] + [f"_{esc(n)}_  " for n in table.notes]
    return "\n".join(lines).rstrip() + "\n"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (or, a tab or carriage return, skips to
one): OWASP's list for CSV injection."""
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|-")


def spreadsheet_text(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows and never runs: a formula start gains a
    leading ``'`` (which spreadsheets hide); a number, or the ``-`` of an empty cell, stays. A
    carriage return inside becomes a line feed, which the writer quotes: left bare, it would end
    the row, and what follows it would start a cell of its own."""
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        text = "'" + text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _csv_value(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.4f}"


def to_csv(table: Table) -> str:
    """CSV with interval bounds and stderr in columns of their own next to each percentage."""
    pct_cols = [any(isinstance(r[i], Pct) for r in table.rows) for i in range(len(table.columns))]
    se_cols = [
        any(isinstance(r[i], Pct) and r[i].se is not None for r in table.rows)  # type: ignore[union-attr]
        for i in range(len(table.columns))
    ]
    header: list[str] = []
    for i, col in enumerate(table.columns):
        names = [col]
        if pct_cols[i]:
            names += [f"{col} lo", f"{col} hi"] + ([f"{col} se"] if se_cols[i] else [])
        header += [spreadsheet_text(name) for name in names]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in table.rows:
        out: list[str] = []
        for i, cell in enumerate(row):
            if pct_cols[i]:
                p = cell if isinstance(cell, Pct) else None
                out += [_csv_value(p and p.value), _csv_value(p and p.lo), _csv_value(p and p.hi)]
                if se_cols[i]:
                    out.append(_csv_value(p and p.se))
            elif isinstance(cell, float):
                out.append(repr(cell))
            else:
                out.append("" if cell is None else spreadsheet_text(str(cell)))
        writer.writerow(out)
    return buf.getvalue()
