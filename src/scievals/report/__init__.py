"""Reports over scievals logs: results with intervals and their protocol, breakdowns, paired
comparisons, published reference rows, plots and a static HTML page (``scievals report``)."""

from scievals.report.write import write_report

__all__ = ["write_report"]
