"""Reports over scievals logs: results with intervals and their protocol, breakdowns, paired
comparisons, published reference rows, plots and a static HTML page (``scievals report``).
Names are imported on first use, so ``import scievals.report`` stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.report.terminal import terminal_summary
    from scievals.report.write import write_report

_EXPORTS = {"terminal_summary": "terminal", "write_report": "write"}
__all__ = [
    "terminal_summary",
    "write_report",
]

lazy_exports(__name__, _EXPORTS)
