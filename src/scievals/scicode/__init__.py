"""SciCode (Tian et al., NeurIPS 2024): research coding problems, graded in a sandbox.

The task is ``scicode`` (``inspect eval scievals/scicode``); the rest is what users script with.
Names are imported on first use, so ``import scievals.scicode`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.scicode.audit import Finding, shipped_audit
    from scievals.scicode.config import SciCodeConfig
    from scievals.scicode.data.dataset import Problem, Step, load_problems
    from scievals.scicode.extract import extract_code, original_extract
    from scievals.scicode.grade import grade
    from scievals.scicode.metrics import pass_at_main, pass_at_steps
    from scievals.scicode.regrade.cli import regrade_scicode
    from scievals.scicode.scorer import scicode_scorer
    from scievals.scicode.solver import chat_solver, single_turn_solver
    from scievals.scicode.task import scicode, scicode_verified
    from scievals.scicode.verdict import REASON_KINDS, added_by, problem_solved

_EXPORTS = {
    "Finding": "audit",
    "Problem": "data.dataset",
    "REASON_KINDS": "verdict",
    "SciCodeConfig": "config",
    "Step": "data.dataset",
    "added_by": "verdict",
    "chat_solver": "solver",
    "extract_code": "extract",
    "grade": "grade",
    "load_problems": "data.dataset",
    "original_extract": "extract",
    "pass_at_main": "metrics",
    "pass_at_steps": "metrics",
    "problem_solved": "verdict",
    "regrade_scicode": "regrade.cli",
    "scicode": "task",
    "scicode_scorer": "scorer",
    "scicode_verified": "task",
    "shipped_audit": "audit",
    "single_turn_solver": "solver",
}
__all__ = [
    "Finding",
    "Problem",
    "REASON_KINDS",
    "SciCodeConfig",
    "Step",
    "added_by",
    "chat_solver",
    "extract_code",
    "grade",
    "load_problems",
    "original_extract",
    "pass_at_main",
    "pass_at_steps",
    "problem_solved",
    "regrade_scicode",
    "scicode",
    "scicode_scorer",
    "scicode_verified",
    "shipped_audit",
    "single_turn_solver",
]

lazy_exports(__name__, _EXPORTS)
