"""The jobs a trusted worker runs: a fixed allowlist, name -> function.

The harness sends a job's name, never code: a worker imports exactly these functions when it
starts (which also warms their imports), and refuses any other name. A job takes plain
arguments (the harness pickles them: it is the trusted side) and returns JSON-ready data.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

JOBS: dict[str, str] = {
    "scicode.replay": "scievals.scicode.grading.replay:replay_job",
    "trusted.probe": "scievals.trusted.probe:probe",
}


def load_jobs() -> dict[str, Callable[..., Any]]:
    """Every allowlisted job's function, imported."""
    functions = {}
    for name, where in JOBS.items():
        module, _, attr = where.partition(":")
        functions[name] = getattr(importlib.import_module(module), attr)
    return functions
