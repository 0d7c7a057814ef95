"""SciCode (Tian et al., NeurIPS 2024): research coding problems, graded in a sandbox.

The task is ``scicode`` (``inspect eval scievals/scicode``); the rest is what users script with.
Names are imported on first use, so ``import scievals.scicode`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.scicode.config import SciCodeConfig
    from scievals.scicode.data.dataset import Problem, Step, load_problems
    from scievals.scicode.extract import extract_code, original_extract
    from scievals.scicode.grade import grade
    from scievals.scicode.scorer import scicode_scorer
    from scievals.scicode.solver import chat_solver, single_turn_solver
    from scievals.scicode.task import scicode, scicode_verified

_EXPORTS = {
    "scicode": "task",
    "scicode_verified": "task",
    "SciCodeConfig": "config",
    "scicode_scorer": "scorer",
    "single_turn_solver": "solver",
    "chat_solver": "solver",
    "extract_code": "extract",
    "original_extract": "extract",
    "load_problems": "data.dataset",
    "Problem": "data.dataset",
    "Step": "data.dataset",
    "grade": "grade",
}
__all__ = [
    "scicode",
    "scicode_verified",
    "SciCodeConfig",
    "scicode_scorer",
    "single_turn_solver",
    "chat_solver",
    "extract_code",
    "original_extract",
    "load_problems",
    "Problem",
    "Step",
    "grade",
]

lazy_exports(__name__, _EXPORTS)
