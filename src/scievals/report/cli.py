"""``scievals report LOG_OR_DIR... [--out DIR] [--format md|csv|html] [--compare A B]``."""

from __future__ import annotations

import argparse
import sys

HELP = "tables, intervals, comparisons, plots and an HTML page from scievals logs"
DESCRIPTION = (
    "Read Inspect logs of scievals tasks (files or directories) and write a report: results per "
    "benchmark with their protocol and 95% intervals, breakdowns, paired comparisons, "
    "published reference rows where the protocol matches, and re-graded sources beside the "
    "scores they recorded."
)


def _cmd_report(ns: argparse.Namespace) -> int:
    """Write the report, then print the results tables (fit to a terminal) and where it is."""
    from scievals.report import terminal
    from scievals.report.usage import parse_price, read_prices
    from scievals.report.write import write_report

    prices = read_prices(ns.prices) if ns.prices else {}
    prices |= dict(parse_price(spec) for spec in ns.price or [])
    written = write_report(ns.logs, ns.out, ns.format, ns.compare, prices)
    for note in written.notes:
        print(f"scievals report: {terminal.printable(note)}", file=sys.stderr)
    print(f"wrote {len(written.files)} file(s) to {ns.out}", file=sys.stderr)
    print(terminal.terminal_summary(written.sections, str(written.main or ns.out)), end="")
    return 0


def register(groups: dict) -> None:
    """Add ``report`` to the root command."""
    parser = groups["root"].add_parser("report", help=HELP, description=DESCRIPTION)
    parser.add_argument("logs", nargs="+", metavar="LOG_OR_DIR")
    parser.add_argument("--out", default="./scievals-report", help="output folder")
    parser.add_argument(
        "--format",
        choices=("md", "csv", "html"),
        default="md",
        help="html also writes report.md and the PNGs it shows",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        action="append",
        metavar=("A", "B"),
        help="compare run A with run B (r1, r2, ... or a log path); repeatable; "
        "default: every pair of runs of one benchmark sharing problems",
    )
    parser.add_argument(
        "--price",
        action="append",
        metavar="MODEL=IN,OUT",
        help="dollars per million input and output tokens of a model (full name or its last "
        "part), for the cost of each run; repeatable, and wins over --prices",
    )
    parser.add_argument(
        "--prices", metavar="FILE", help="a file of MODEL=IN,OUT lines (# comments)"
    )
    parser.set_defaults(func=_cmd_report)
