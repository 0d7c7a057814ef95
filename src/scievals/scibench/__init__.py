"""SciBench (Wang et al., ICML 2024) as an Inspect task: faithful to the official code, and better.

The task is ``scibench``; the scorers ``faithful`` and ``robust``; the pure rules behind them
(``faithful_score``, ``robust_score``, ``parse_number``, ``official_unit``) grade replies made
anywhere, as ``grade_file`` does for ``scievals grade scibench``. Names are imported on first use,
so ``import scievals.scibench`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.scibench.config import SciBenchConfig
    from scievals.scibench.faithful import faithful_score, faithful_tool_score
    from scievals.scibench.grade import grade_file
    from scievals.scibench.metrics import pass_at_problem
    from scievals.scibench.regrade.cli import regrade_opencompass
    from scievals.scibench.regrade.layout import is_opencompass_output
    from scievals.scibench.regrade.own_log import is_scibench_log
    from scievals.scibench.regrade.verify import verify_scibench
    from scievals.scibench.robust import parse_number, robust_score, robust_tool_score
    from scievals.scibench.scorer import faithful, robust
    from scievals.scibench.task import scibench
    from scievals.scibench.units import Unit, official_unit
    from scievals.scibench.verdict import Verdict

_EXPORTS = {
    "SciBenchConfig": "config",
    "Unit": "units",
    "Verdict": "verdict",
    "faithful": "scorer",
    "faithful_score": "faithful",
    "faithful_tool_score": "faithful",
    "grade_file": "grade",
    "is_opencompass_output": "regrade.layout",
    "is_scibench_log": "regrade.own_log",
    "official_unit": "units",
    "parse_number": "robust",
    "pass_at_problem": "metrics",
    "regrade_opencompass": "regrade.cli",
    "robust": "scorer",
    "robust_score": "robust",
    "robust_tool_score": "robust",
    "scibench": "task",
    "verify_scibench": "regrade.verify",
}
__all__ = [
    "SciBenchConfig",
    "Unit",
    "Verdict",
    "faithful",
    "faithful_score",
    "faithful_tool_score",
    "grade_file",
    "is_opencompass_output",
    "is_scibench_log",
    "official_unit",
    "parse_number",
    "pass_at_problem",
    "regrade_opencompass",
    "robust",
    "robust_score",
    "robust_tool_score",
    "scibench",
    "verify_scibench",
]

lazy_exports(__name__, _EXPORTS)
