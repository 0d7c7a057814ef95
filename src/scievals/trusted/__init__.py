"""Work the harness does on model-influenced data, in worker processes that cannot take it down.

Judging a step means computing on values a model's code chose: decoding them, then running the
benchmark's own tests on them. That work is bounded here, in a pool of persistent worker
processes (``pool.py``): fresh interpreters, each with an address-space limit, a CPU limit per
job and a wall-clock limit enforced by the harness, killed and replaced on overrun. A worker
runs only the jobs of a fixed allowlist (``jobs.py``), and answers in JSON, never pickle
(``worker.py``), so a worker that crashed or was subverted cannot hand the harness an object.
"""
