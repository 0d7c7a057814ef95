"""A trusted worker's main loop: run allowlisted jobs, one at a time, and answer in JSON.

Started by the pool as a fresh interpreter (``python -I``), never a fork of the harness. It dies
with the harness: ``PR_SET_PDEATHSIG`` kills it when the thread that started it ends (the pool
starts workers from one thread that lives as long as the harness), and end of file on stdin
ends its loop. It limits its own address space (the harness's ``pool.memory_limit``, its second
argument) and, before each job, its CPU
time (the time used so far plus the job's budget: SIGXCPU ends it); the harness enforces the
wall clock. Whatever a job prints goes to /dev/null, never into the answers.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import pickle
import resource
import signal
import sys
from collections.abc import Callable
from typing import Any

from scievals.trusted.jobs import load_jobs
from scievals.trusted.protocol import (
    HEADER,
    MAX_ANSWER_BYTES,
    frame,
    read_exact,
    write_all,
)

PR_SET_PDEATHSIG = 1


def _give_back_memory() -> None:
    """Return the heap a job freed to the system (glibc keeps it otherwise), so that a worker's
    memory after many jobs is that of its largest, not of their sum."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not glibc
            ctypes.CDLL(None).malloc_trim(0)


def _die_with(parent: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the harness died before the line above
        os._exit(0)


def _limit(kind: int, soft: int, fixed: bool = False) -> None:
    """Lower a limit to ``soft`` (and its hard limit too when ``fixed``: no raising it back)."""
    hard = resource.getrlimit(kind)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(kind, (soft, soft if fixed else hard))


def _limit_cpu(seconds: float) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    _limit(resource.RLIMIT_CPU, math.ceil(used.ru_utime + used.ru_stime) + math.ceil(seconds))


def _answer(message: dict[str, Any]) -> bytes:
    return json.dumps(message, allow_nan=False, separators=(",", ":")).encode()


_OUT_OF_MEMORY = _answer({"failed": "memory"})


def _run(jobs: dict[str, Callable[..., Any]], name: Any, args: Any) -> bytes:
    function = jobs.get(name) if isinstance(name, str) else None
    if function is None:
        return _answer({"failed": "error", "message": f"unknown job {str(name)[:80]!r}"})
    try:
        body = _answer({"ok": function(*args)})
    except MemoryError:
        return _OUT_OF_MEMORY
    except Exception as exc:  # noqa: BLE001 - the job's failure is its answer
        return _answer({"failed": "error", "message": f"{type(exc).__name__}: {exc}"[:500]})
    if len(body) > MAX_ANSWER_BYTES:
        return _answer({"failed": "answer", "message": f"{len(body)} bytes"})
    return body


def _frame() -> bytearray | None:
    """The next frame from the harness, or None when its end of the pipe closed."""
    header = read_exact(0, HEADER.size)
    return None if header is None else read_exact(0, HEADER.unpack(header)[0])


def main() -> None:
    _die_with(int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides what an interrupt stops
    answers = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _limit(resource.RLIMIT_AS, int(sys.argv[2]), fixed=True)
    try:
        jobs = load_jobs()
    except Exception as exc:  # noqa: BLE001 - said to the harness, which fails the job
        write_all(answers, frame(_answer({"ready": False, "error": f"{exc!r}"[:500]})))
        return
    write_all(answers, frame(_answer({"ready": True})))
    while (body := _frame()) is not None:
        name, args, cpu, raw = pickle.loads(
            body
        )  # inspect-evals-lint: ignore[host_code_execution] -- the harness's own request (job name, arguments), never model output
        args = list(args)
        for index in raw:
            args[index] = _frame()
            if args[index] is None:
                return
        _limit_cpu(cpu)
        answer = _run(jobs, name, args)
        del args
        write_all(answers, frame(answer))
        if answer is _OUT_OF_MEMORY:
            return  # the pool starts a fresh worker in its place
        _give_back_memory()
