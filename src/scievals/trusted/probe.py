"""The pool's self-check job: it does what it is asked, so that each limit can be shown to hold.

Tests (and anyone checking a machine) use it to make a worker overrun its CPU, memory or wall
clock, crash, or answer too much, and to time a bare round trip.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any


def probe(action: str, amount: float = 0.0) -> Any:
    """Do ``action``: ``echo`` (answer ``amount``), ``pid``, ``burn`` or ``sleep`` for ``amount``
    seconds (answering when it started and ended), ``allocate`` ``amount`` bytes, ``segfault``,
    or ``answer`` a string of ``amount`` characters."""
    if action == "echo":
        return amount
    if action == "pid":
        return os.getpid()
    if action == "burn":
        started = time.time()
        end = time.process_time() + amount
        while time.process_time() < end:
            pass
        return [started, time.time()]
    if action == "sleep":
        started = time.time()
        time.sleep(amount)
        return [started, time.time()]
    if action == "allocate":
        return len(bytearray(int(amount)))
    if action == "segfault":
        return ctypes.string_at(0)
    if action == "answer":
        return "x" * int(amount)
    raise ValueError(f"unknown probe action {action!r}")
