"""The results tables as plain text that fits a terminal (80 to 120 columns).

Scores and counts are never cut; headers wrap, and the protocol column, then the model name,
give way with an ellipsis, so a reader sees who scored what and where the full report is.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import replace

from scievals.report.build import DIFFERS, Section
from scievals.report.tables import Table, text

WIDTH = 110
SQUEEZABLE = (
    (DIFFERS, 16),
    ("detail", 16),
    ("source", 16),
    ("model", 16),
)  # (column, narrowest it may become)
HEADER_MIN = 3
GAP = "  "


def printable(text: str) -> str:
    """``text`` with control characters escaped: names read from a log cannot drive the terminal
    (an ESC sequence in a model or benchmark name would recolour or rewrite the screen)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _cut(value: str, width: int) -> str:
    return value if len(value) <= width else value[: max(width - 1, 1)] + "…"


def render(table: Table, width: int = WIDTH) -> str:
    """One table: headers wrapped over lines, aligned columns, then its notes wrapped."""
    cells = [[printable(text(c)) for c in row] for row in table.rows]
    widths = [
        max([HEADER_MIN, *(len(w) for w in col.split()), *(len(r[i]) for r in cells)])
        for i, col in enumerate(table.columns)
    ]
    for label, floor in SQUEEZABLE:  # the protocol column gives way first, then the model
        if label in table.columns:
            i = table.columns.index(label)
            over = sum(widths) + len(GAP) * (len(widths) - 1) - width
            widths[i] = max(min(floor, widths[i]), widths[i] - max(over, 0))
    numeric = [
        i > 1 and all(r[i][:1].isdigit() or r[i] in ("-", "nan") for r in cells)
        for i in range(len(widths))
    ]

    def line(values: Sequence[str]) -> str:
        out = [
            _cut(v, w).rjust(w) if num else _cut(v, w).ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return GAP.join(out).rstrip()

    heads = [textwrap.wrap(col, w) or [""] for col, w in zip(table.columns, widths, strict=True)]
    depth = max(len(h) for h in heads)
    lines = [_cut(printable(table.title), width)]
    lines += [line([h[k] if k < len(h) else "" for h in heads]) for k in range(depth)]
    lines.append(line(["-" * w for w in widths]))
    lines += [line(r) for r in cells]
    for note in table.notes:
        lines += textwrap.wrap(printable(note), width, subsequent_indent="  ")
    return "\n".join(lines)


SUMMARY_TABLES = ("_versus_published", "_regrades", "_regrade_differences", "_usage")
"""Besides the results: ours beside published, re-graded sources beside their own scores, and
tokens, time and cost."""


TERMINAL_ROWS = 25
"""Rows of a summary table shown in the terminal; the full report has them all."""


def _first_rows(table: Table) -> Table:
    if len(table.rows) <= TERMINAL_ROWS:
        return table
    more = f"{len(table.rows) - TERMINAL_ROWS} more rows in the full report."
    return replace(table, rows=table.rows[:TERMINAL_ROWS], notes=[*table.notes, more])


def terminal_summary(sections: Sequence[Section], report: str, width: int = WIDTH) -> str:
    """Every benchmark's results table, ours beside published values, re-graded sources beside
    their own scores, tokens, time and cost, then where the full report is."""
    parts = []
    for section in sections:
        parts.append(render(section.tables[0], width))
        parts += [
            render(_first_rows(t), width) for t in section.tables if t.key.endswith(SUMMARY_TABLES)
        ]
    parts.append(f"Full report (protocol, breakdowns, comparisons, plots): {report}")
    return "\n\n".join(parts) + "\n"
