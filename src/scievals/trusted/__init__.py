"""Work the harness does on model-influenced data, in worker processes that cannot take it down.

Judging a step means computing on values a model's code chose: decoding them, then running the
benchmark's own tests on them. That work is bounded here, in a pool of persistent worker
processes (``pool.py``): fresh interpreters, each with an address-space limit, a CPU limit per
job and a wall-clock limit enforced by the harness, killed and replaced on overrun. A worker
runs only the jobs of a fixed allowlist (``jobs.py``), and answers in JSON, never pickle
(``worker.py``), so a worker that crashed or was subverted cannot hand the harness an object.
Other packages import the names below from here, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.trusted.pool import JobFailed, out_of_memory, run_job, shared_pool

_EXPORTS = {
    "JobFailed": "pool",
    "out_of_memory": "pool",
    "run_job": "pool",
    "shared_pool": "pool",
}
__all__ = [
    "JobFailed",
    "out_of_memory",
    "run_job",
    "shared_pool",
]

lazy_exports(__name__, _EXPORTS)
