"""``scievals regrade SOURCE``: completions another harness already produced, graded under the
official rule and set beside the scores that harness recorded.

One command for every source; what SOURCE is, is told by its content, once, here: OpenCompass's
SciBench output, and with ``--verify`` a scievals SciBench log (its header's task), go to
``scibench``; everything else (the official SciCode harness's folders, inspect_evals logs, and
with ``--verify`` a scievals SciCode log) to ``scicode``, which tells those apart.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scievals.regrade_out import OUT_FILE, VERIFY_FILE


def _run(ns: argparse.Namespace) -> int:
    from scievals.scibench import (
        is_opencompass_output,
        is_scibench_log,
        regrade_opencompass,
        verify_scibench,
    )
    from scievals.scicode import regrade_scicode

    if ns.verify and is_scibench_log(Path(ns.source)):
        return verify_scibench(ns)
    if not ns.verify and is_opencompass_output(Path(ns.source)):
        return regrade_opencompass(ns)
    return regrade_scicode(ns)


def register(groups: dict) -> None:
    """Add ``regrade`` to the root command."""
    parser = groups["root"].add_parser(
        "regrade",
        help="grade what another harness already ran, and compare with the scores it recorded",
        description="Grades every answer SOURCE holds under the official rule and compares the "
        "scores, answer by answer, with the ones SOURCE recorded. SOURCE is told by its content: "
        "the official SciCode harness's generated code (eval_results/, its generated_code/, or "
        "one model's folder, with its verdict files); an inspect_evals scicode log (.eval or "
        ".json: each step's reply graded, its per-step scores compared); OpenCompass's SciBench "
        "output (outputs/<config>/[<timestamp>/], its predictions/, one model's folder or a "
        "scibench-<book>*.json file: every reply graded by the opencompass, faithful and robust "
        "scorers, compared with its results files). With --verify, SOURCE is a scievals SciCode "
        "or SciBench log: every sample is re-graded and compared verdict by verdict with what "
        "the log records (a SciBench log's Python programs run again), its metrics recomputed "
        "and its protocol checked against this install's; each difference is a line and the "
        "exit status is 1.",
    )
    parser.add_argument(
        "source",
        help="a SciCode eval_results/ or generated_code/[<model>/] folder, an inspect_evals "
        "scicode log, OpenCompass SciBench output; with --verify, a scievals log",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="SOURCE is a scievals SciCode or SciBench log: re-grade it and list every difference",
    )
    parser.add_argument(
        "--out", default=None, help=f"write {OUT_FILE} (with --verify: {VERIFY_FILE}) here"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing file of that name in --out (and logs in --log-dir)",
    )
    parser.add_argument(
        "--log-dir",
        default=None,
        help="write a scievals log of each re-graded run here (every source), for `scievals "
        "report` and `inspect view` (default: DIR/logs with --out DIR, else none)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="grade only the runs whose log is not written yet (an interrupted re-grade, of "
        "any source), the rest read back from their logs",
    )
    scicode = parser.add_argument_group("SciCode sources")
    scicode.add_argument(
        "--split",
        choices=["dev", "test", "all"],
        default=None,
        help="default: inferred from the steps SOURCE holds",
    )
    scicode.add_argument("--h5", default=None, help="the official test_data.h5 (test split)")
    scicode.add_argument(
        "--timeout", type=int, default=None, help="seconds per step program (default 300)"
    )
    scicode.add_argument(
        "--sandbox", default=None, help="sandbox provider (default scievals, also for --verify)"
    )
    scibench = parser.add_argument_group("SciBench sources")
    scibench.add_argument(
        "--version",
        choices=["auto", "main", "old"],
        default="auto",
        help="SciBench data of OpenCompass predictions (auto: the version they fit)",
    )
    scibench.add_argument(
        "--data-dir",
        help="local SciBench copy, also for --verify (else SCIEVALS_SCIBENCH_DIR, else download)",
    )
    parser.set_defaults(func=_run)
