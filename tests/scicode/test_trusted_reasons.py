"""Every reason kind of the trusted side, through the trusted worker: a test's failure crosses
from the worker as a (category, type, message, before_tests) record and the runner rebuilds the
same reason from it as it did from the exception itself. Records are written here (no sandbox),
and judged by the real path (``runner.judge_tests`` in a trusted worker, then ``judge``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from scievals.sandbox.outcome import Outcome
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.grading.program import plans_for
from scievals.scicode.grading.runner import Execution, judge, judge_tests
from scievals.trusted.pool import JobFailed

BIND = [{"e": "bind", "name": "f", "r": {"handle": 1}}, {"e": "armed"}, {"e": "begin", "t": 0}]
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
    run = Execution(Outcome(returncode, "", stderr, None, None, 0.1), records, None)
    replayed = anyio.run(judge_tests, problem, plans_for(problem, step), run, [1.0], timeout)
    verdict = judge(step, run, replayed, timeout)
    return verdict.reason_kind, verdict.reason


def _call(**fields: Any) -> list[dict[str, Any]]:
    return [*BIND, {"e": "call", "h": 1, **fields}, {"e": "end", "t": 0}]


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
        [*BIND, {"e": "get", "h": 1, "attr": "x", "r": 1}, {"e": "end", "t": 0}],
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
        ("missing_record", "unreadable records: unknown event on line 1"),
    ),
    "missing-function": (
        [{"e": "armed"}, {"e": "begin", "t": 0}, {"e": "end", "t": 0}],
        {},
        ("missing_function", "test 1: NameError: name 'f' is not defined"),
    ),
    "trusted-memory-is-a-limit": (
        _call(r={"float": "1.0"}),
        {"test": "x = bytearray(1 << 40)\n" + TEST},
        ("limit", "test 1: the trusted re-run of its tests ran out of memory (8 GiB)"),
    ),
    "trusted-time-is-a-limit": (
        _call(r={"float": "1.0"}),
        {"test": "while True:\n    pass\n" + TEST, "timeout": 2},
        ("limit", "the trusted re-run of its tests ran past 2 s"),
    ),
}


@pytest.mark.parametrize(("events", "options", "expected"), CASES.values(), ids=list(CASES))
def test_reason(events, options, expected):
    kind, reason = _judged(events, **options)
    assert kind == expected[0], reason
    assert (reason or "").startswith(expected[1] or ""), reason


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (
            JobFailed("wall", "ran past 20 s"),
            ("limit", "the trusted re-run of its tests ran past 20 s"),
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
    run = Execution(Outcome(0, "", "", None, None, 0.1), b"", None)
    verdict = judge(step, run, failure, 20)
    assert (verdict.reason_kind, verdict.reason) == expected
