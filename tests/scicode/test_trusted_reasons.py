"""Every reason kind of the trusted side, through the trusted worker: a test's failure crosses
from the worker as a (category, type, message, before_tests) record and the runner rebuilds the
same reason from it as it did from the exception itself. Records are written here (no sandbox),
and judged by the real path (``runner.judge_tests`` in a trusted worker, then ``judge``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from scievals.sandbox.ending import Ending
from scievals.sandbox.kept import keep_bytes
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.grading import runner
from scievals.scicode.grading.program import plans_for
from scievals.scicode.grading.runner import Execution, judge, judge_tests
from scievals.trusted.pool import JobFailed, out_of_memory

BIND = [
    {"e": "bind", "name": "f", "r": {"handle": 1, "type": "function"}},
    {"e": "armed"},
    {"e": "begin", "t": 0, "rng": {}},
]
TEST = "assert f(1) == target"
CRASH = "Traceback (most recent call last):\n  File ...\nZeroDivisionError: boom\n"


def _judged(
    events: list[dict[str, Any]],
    test: str = TEST,
    returncode: int = 0,
    stderr: str = "",
    timeout: int = 20,
) -> tuple[str | None, str | None]:
    step = Step("900.1", "", "", "def f(x):\n    '''doc'''", "", (test,), None, None)
    problem = Problem("900", "test", "import numpy as np", (step,), "dev")
    records = "".join(json.dumps(e) + "\n" for e in events).encode()
    run = Execution(Ending(returncode, "", stderr, None, None, 0.1), keep_bytes(records), None)
    replayed = anyio.run(judge_tests, problem, plans_for(problem, step), run, [1.0], timeout)
    verdict = judge(step, run, replayed, timeout)
    return verdict.reason_kind, verdict.reason


def _call(**fields: Any) -> list[dict[str, Any]]:
    return [*BIND, {"e": "call", "h": 1, "n": 1, **fields}, {"e": "end", "t": 0}]


CASES = {
    "passes": (_call(r={"float": "1.0"}), {}, (None, None)),
    "assertion": (
        _call(r={"float": "2.0"}),
        {},
        ("assertion", "test 1: assertion failed: value[0] == target"),
    ),
    "assertion-error-classified": (
        _call(**{"raise": ["AssertionError", "F"]}),
        {},
        ("assertion", "test 1: AssertionError: F"),
    ),
    "exception": (
        _call(**{"raise": ["ZeroDivisionError", "boom"]}),
        {},
        ("exception", "test 1: ZeroDivisionError: boom"),
    ),
    "model-memory-error-is-the-model's": (
        _call(**{"raise": ["MemoryError", "no room"]}),
        {},
        ("exception", "test 1: MemoryError: no room"),
    ),
    "model-exit": (
        _call(**{"raise": ["SystemExit", "0"]}),
        {},
        ("missing_record", "test 1 did not run to its end (SystemExit: 0)"),
    ),
    "unsupported": (
        [*BIND, {"e": "get", "h": 1, "attr": "x", "r": 1, "n": 1}, {"e": "end", "t": 0}],
        {},
        ("unsupported", "test 1: the program's recorded "),
    ),
    "invalid-record": (
        _call(r={"float": "1.0"}, rng={"numpy": {"list": []}}),
        {},
        ("invalid_record", "test 1: malformed random state: numpy's is not a tuple of 5"),
    ),
    "unknown-generator": (
        _call(r={"float": "1.0"}, rng={"secrets": None}),
        {},
        ("invalid_record", "test 1: malformed random state: unknown generator 'secrets'"),
    ),
    "stopped-exit-0": (
        BIND[:2],
        {},
        ("missing_record", "test 1 did not run to its end (exited early)"),
    ),
    "stopped-crash-in-test": (
        [*BIND],
        {"returncode": 1, "stderr": CRASH},
        ("exception", "test 1: ZeroDivisionError: boom"),
    ),
    "stopped-crash-before-tests": (
        BIND[:1],
        {"returncode": 1, "stderr": CRASH},
        ("exception", "ZeroDivisionError: boom"),
    ),
    "unreadable-records": (
        [{"e": "nonsense"}],
        {},
        ("invalid_record", "unreadable records: line 1: unknown event 'nonsense'"),
    ),
    "missing-function": (
        [{"e": "armed"}, {"e": "begin", "t": 0, "rng": {}}, {"e": "end", "t": 0}],
        {},
        ("missing_function", "test 1: NameError: name 'f' is not defined"),
    ),
    "trusted-memory-is-a-limit": (
        _call(r={"float": "1.0"}),
        {"test": "x = bytearray(1 << 40)\n" + TEST},
        ("limit", f"test 1: the trusted re-run of its tests {out_of_memory()}"),
    ),
    "trusted-cpu-is-a-limit-of-its-own": (
        _call(r={"float": "1.0"}),
        {"test": "while True:\n    pass\n" + TEST, "timeout": 300},
        (
            "limit",
            "the trusted re-run of its tests used more than 1 s of CPU (its budget: 1 s of CPU "
            "plus 0.25 s per MiB of records)",
        ),
    ),
}


@pytest.mark.parametrize(("events", "options", "expected"), CASES.values(), ids=list(CASES))
def test_reason(events, options, expected, monkeypatch):
    """The re-run's CPU budget is its own, not the step's timeout (1 s here, to be quick)."""
    monkeypatch.setattr(runner, "REPLAY_CPU_SECONDS", 1.0)
    kind, reason = _judged(events, **options)
    assert kind == expected[0], reason
    assert (reason or "").startswith(expected[1] or ""), reason


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (
            JobFailed("wall", "ran past 20 s"),
            (
                "limit",
                "the trusted re-run of its tests ran past 20 s (its budget: 10 s of CPU plus "
                "0.25 s per MiB of records)",
            ),
        ),
        (
            JobFailed("crash", "crashed (SIGSEGV)"),
            ("limit", "the trusted re-run of its tests crashed (SIGSEGV)"),
        ),
        (
            JobFailed("start", "could not start a worker: x"),
            ("infrastructure", "the trusted re-run of its tests could not start a worker: x"),
        ),
        (
            JobFailed("error", "failed: KeyError: 'x'"),
            ("exception", "the trusted re-run of its tests failed: KeyError: 'x'"),
        ),
    ],
)
def test_halted_reruns(failure, expected):
    step = Step("900.1", "", "", "def f(x):\n    '''doc'''", "", (TEST,), None, None)
    run = Execution(Ending(0, "", "", None, None, 0.1), keep_bytes(b""), None)
    verdict = judge(step, run, failure, 20)
    assert (verdict.reason_kind, verdict.reason) == expected
