"""How a local model runs by default: its context, batch, reply length and threads (read by the
server's command line without loading the engine)."""

from __future__ import annotations

import os

DEFAULT_N_CTX = 16384
DEFAULT_N_BATCH = 512
DEFAULT_MAX_TOKENS = 2048


def default_threads() -> int:
    """One less than the CPUs this process may use (affinity-aware), at least one.

    llama.cpp's threads spin while they wait, so a thread that competes with the sandboxes
    running the model's code (or another engineer's job) slows every token: with Qwen-0.5B on
    2 busy cores, 1 thread decoded 28-32 tok/s and 2 threads 10-20 tok/s.
    """
    return max(1, len(os.sched_getaffinity(0)) - 1)
