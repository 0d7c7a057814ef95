"""The two halves of a step meeting: a step program runs (here in a plain runtime process, with
no sandbox, so that each case is quick), then its tests are re-run on the trusted side on what
it recorded. Verdicts must follow the official rule for honest code, and a record can never
claim more than what the model's functions returned."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import numpy as np
import pytest

from scievals.sandbox.ending import Ending
from scievals.sandbox.kept import keep_bytes
from scievals.sandbox.runtime import ensure_runtime
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.grading.program import plans_for, step_program
from scievals.scicode.grading.replay import parse_records, replay_tests
from scievals.scicode.grading.runner import Execution, judge, judge_tests
from scievals.scicode.verdict import StepVerdict

DEPS = "import numpy as np\nfrom scipy.integrate import simps"
ARRAY = np.array([1.0, 2.0])


def _step(tests: list[str]) -> tuple[Problem, Step]:
    step = Step(
        "900.1", "", "", "def f(x):\n    '''doc'''", "    return y", tuple(tests), None, None
    )
    return Problem("900", "test", DEPS, (step,), "dev"), step


def run_locally(tmp_path, code: str, tests: list[str], targets: list[Any]) -> StepVerdict:
    """The step program in a fresh runtime interpreter, then the trusted side (in a trusted
    worker, as in grading)."""
    problem, step = _step(tests)
    plans = plans_for(problem, step)
    program = step_program(problem, step, {"900.1": code}, plans, "records.jsonl")
    proc = subprocess.run(
        [str(ensure_runtime().python), "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    path = tmp_path / "records.jsonl"
    records = keep_bytes(path.read_bytes()) if path.exists() else None
    outcome = Ending(proc.returncode, proc.stdout, proc.stderr, None, None, 0.0)
    run = Execution(outcome, records, None if records is not None else "no records")
    return judge(step, run, anyio.run(judge_tests, problem, plans, run, targets, 10), 10)


# (id, model code, tests, targets, passed, reason_kind, reason starts with)
CASES = [
    (
        "allclose-pass",
        "def f(x):\n    return x * 2",
        ["assert np.allclose(f(ARR), target)"],
        [ARRAY * 2],
        True,
        None,
        None,
    ),
    (
        "allclose-fail",
        "def f(x):\n    return x * 3",
        ["assert np.allclose(f(ARR), target)"],
        [ARRAY * 2],
        False,
        "assertion",
        "test 1: assertion failed: np.allclose(value[0], target)",
    ),
    # A buffer the model's function reuses: the official test's earlier result changes with it.
    (
        "reused-buffer-seen-changed",
        "BUF = np.zeros(2)\ndef f(x):\n    BUF[...] = x\n    return BUF",
        ["a = f(1.0)\nb = f(2.0)\nassert np.allclose(a, target)"],
        [np.ones(2)],
        False,
        "assertion",
        None,
    ),
    (
        "reused-buffer-inside-tuple",
        "BUF = np.zeros(2)\ndef f(x):\n    BUF[...] = x\n    return (BUF, x)",
        ["a = f(1.0)\nb = f(2.0)\nassert np.allclose(a[0], target) and np.allclose(b[0], 2.0)"],
        [2 * np.ones(2)],
        True,
        None,
        None,
    ),
    (
        "fresh-results-unchanged",
        "def f(x):\n    return np.full(2, x)",
        ["a = f(1.0)\nb = f(2.0)\nassert np.allclose(a, target)"],
        [np.ones(2)],
        True,
        None,
        None,
    ),
    (
        "defaultdict-default",
        "import collections\ndef f(x):\n    return collections.defaultdict(list, {0: [1.0]})",
        ["d = f(1)\nassert d[1] == target and len(d) == 2"],
        [[]],
        True,
        None,
        None,
    ),
    (
        "counter-default",
        "import collections\ndef f(x):\n    return collections.Counter('aab')",
        ["assert f(1)['z'] == target"],
        [0],
        True,
        None,
        None,
    ),
    (
        "generator-indexed",
        "def f(x):\n    return (v for v in [1.0, 2.0])",
        ["assert f(1)[-1] == target"],
        [2.0],
        False,
        "exception",
        "test 1: TypeError: 'generator' object is not subscriptable",
    ),
    (
        "array-only-object-iterated",
        "class A:\n    def __array__(self, dtype=None, copy=None):\n        return np.ones(2)\n"
        "def f(x):\n    return A()",
        ["assert list(f(1)) == target"],
        [[1.0, 1.0]],
        False,
        "exception",
        "test 1: TypeError: 'A' object is not iterable",
    ),
    (
        "deque-like-sequence",
        "import collections\ndef f(x):\n    return collections.deque([1.0, 2.0])",
        ["assert np.allclose(f(1), target) and len(f(1)) == 2 and f(1)[1] == 2.0"],
        [ARRAY],
        True,
        None,
        None,
    ),
    (
        "equality",
        "def f(x):\n    return 'spin'",
        ["assert f(1) == target"],
        ["spin"],
        True,
        None,
        None,
    ),
    (
        "equality-arrays-ambiguous",
        "def f(x):\n    return x",
        ["assert f(ARR) == target"],
        [ARRAY],
        False,
        "exception",
        "test 1: ValueError",
    ),
    (
        "boolop",
        "def f(x):\n    return (x, 3.0)",
        ["assert np.allclose(f(ARR)[0], target[0]) and np.allclose(f(ARR)[1], target[1])"],
        [(ARRAY, 3.0)],
        True,
        None,
        None,
    ),
    (
        "unpacked",
        "def f(x):\n    return True",
        ["s, v = target\nassert f(ARR) == s and np.allclose(ARR, v)"],
        [(True, ARRAY)],
        True,
        None,
        None,
    ),
    (
        "cmp-tuple-or-list",
        "def f(x):\n    return [x, np.ones(3)]",
        ["assert cmp_tuple_or_list(f(ARR), target)"],
        [[ARRAY, np.ones(3)]],
        True,
        None,
        None,
    ),
    (
        "test-defined-helper",
        "def f(x):\n    return np.zeros(2)",
        ["def same(a, b):\n    return a.shape == b.shape\nassert same(f(1), target)"],
        [ARRAY],
        True,
        None,
        None,
    ),
    (
        "shared-namespace",
        "def f(x):\n    return x + 1",
        ["y = f(1)", "assert np.allclose(f(y), target)"],
        [None, 3],
        True,
        None,
        None,
    ),
    (
        "self-checking-pass",
        "def f(x):\n    return 2 * x",
        [
            "def t():\n    expected = np.array([2.0, 4.0])\n    assert np.allclose(f(ARR), expected), 'F'\nt()"
        ],
        [None],
        True,
        None,
        None,
    ),
    (
        "self-checking-fail",
        "def f(x):\n    return x",
        [
            "def t():\n    expected = np.array([2.0, 4.0])\n    assert np.allclose(f(ARR), expected), 'F'\nt()"
        ],
        [None],
        False,
        "assertion",
        "test 1: AssertionError: F",
    ),
    (
        "trusted-computation-on-model-value",
        "def f(x):\n    return np.eye(2)",
        ["B = f(1)\nassert np.isclose(0, B[:, 0] @ B[:, 1]) == target"],
        [True],
        True,
        None,
        None,
    ),
    (
        "model-raises",
        "def f(x):\n    raise ZeroDivisionError('boom')",
        ["assert np.allclose(f(1), target)"],
        [ARRAY],
        False,
        "exception",
        "test 1: ZeroDivisionError: boom",
    ),
    (
        "missing-function",
        "def g(x):\n    return x",
        ["assert np.allclose(f(1), target)"],
        [ARRAY],
        False,
        "missing_function",
        "test 1: NameError: name 'f' is not defined",
    ),
    (
        "in-place-argument",
        "def f(x):\n    x *= 2",
        ["a = ARR.copy()\nf(a)\nassert np.allclose(a, target)"],
        [ARRAY * 2],
        True,
        None,
        None,
    ),
    (
        "random-state-follows-the-program",
        "def f(x):\n    return np.random.rand()",
        [
            "np.random.seed(0)\nf(1)\nv = np.random.rand(3)\nassert np.allclose(f(v) * 0 + v, target)"
        ],
        [np.random.RandomState(0).rand(4)[1:]],
        True,
        None,
        None,
    ),
    (
        "class-instance-methods-and-attributes",
        "class W:\n    def __init__(self, a):\n        self.a = a\n    def value(self, x):\n"
        "        return self.a * x\n",
        ["w = W(3.0)\nassert cmp_tuple_or_list((w.value(ARR), w.a), target)"],
        [(ARRAY * 3, 3.0)],
        True,
        None,
        None,
    ),
    (
        "object-passed-to-model-function",
        "class W:\n    a = 2.0\ndef f(w):\n    return w.a * ARR2\nARR2 = np.array([1.0, 2.0])",
        ["assert np.allclose(f(W()), target)"],
        [ARRAY * 2],
        True,
        None,
        None,
    ),
    (
        "zero-size-broadcast",
        "def f(x):\n    return np.zeros((0, 1, 1, 1))",
        ["assert np.allclose(f(1), target)"],
        [ARRAY],
        False,
        "assertion",
        "test 1: a zero-size value was compared with a non-empty target",
    ),
    (
        "zero-size-self-checking",
        "def f(x):\n    return np.zeros((0, 1))",
        ["def t():\n    assert np.allclose(f(ARR), np.array([2.0, 4.0])), 'F'\nt()"],
        [None],
        False,
        "assertion",
        "test 1: AssertionError: F",
    ),
    (
        "array-function-object",
        "class Y:\n    def __array_function__(self, *a, **k):\n        return True\n"
        "    def __eq__(self, o):\n        return True\ndef f(x):\n    return Y()",
        ["assert np.allclose(f(1), target)", "assert f(1) == target"],
        [ARRAY, ARRAY],
        False,
        "unsupported",
        "test 1: NumPy cannot make a plain array of the Y",
    ),
    (
        "patched-numpy-in-program",
        "import numpy\nnumpy.allclose = lambda *a, **k: True\nnp = None\ndef f(x):\n    return x",
        ["def t():\n    assert np.allclose(f(ARR), ARR * 2), 'F'\nt()"],
        [None],
        False,
        "assertion",
        "test 1: AssertionError: F",
    ),
    (
        "exit-early",
        "import os\ndef f(x):\n    os._exit(0)",
        ["assert np.allclose(f(1), target)"],
        [ARRAY],
        False,
        "missing_record",
        "test 1 did not run to its end (exited early)",
    ),
    (
        "system-exit-in-function",
        "def f(x):\n    raise SystemExit(0)",
        ["assert np.allclose(f(1), target)"],
        [ARRAY],
        False,
        "missing_record",
        "test 1 did not run to its end",
    ),
    (
        "shadowed-builtin-does-not-judge",
        "abs = lambda x: 0\ndef f(x):\n    return x",
        ["assert abs(f(5.0) - target) < 1e-9"],
        [1.0],
        False,
        "assertion",
        "test 1: assertion",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "tests", "targets", "passed", "kind", "reason"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_verdicts(tmp_path, code, tests, targets, passed, kind, reason):
    code = "ARR = np.array([1.0, 2.0])\n" + code
    verdict = run_locally(tmp_path, code, tests, targets)
    assert verdict.passed is passed, verdict
    assert verdict.reason_kind == kind, verdict
    if reason:
        assert verdict.reason.startswith(reason), verdict


def _forge(tmp_path, lines: list[dict[str, Any]], tests: list[str], targets: list[Any]):
    problem, step = _step(tests)
    plans = plans_for(problem, step)
    records = parse_records("\n".join(json.dumps(x) for x in lines).encode())
    return replay_tests(plans, records, DEPS, targets)


def test_forged_binds_never_replace_trusted_names(tmp_path):
    """A record claiming that ``np`` or ``abs`` is the model's (a handle whose calls answer
    True) is ignored: those names are always the harness's own."""
    true = {"e": "call", "h": 0, "r": True, "n": 2}
    lines = [
        {"e": "bind", "name": "np", "r": {"handle": 0, "type": "function"}},
        {"e": "bind", "name": "abs", "r": {"handle": 0, "type": "function"}},
        {"e": "bind", "name": "f", "r": {"handle": 1, "type": "function"}},
        {"e": "armed"},
        {"e": "begin", "t": 0, "rng": {}},
        {"e": "call", "h": 1, "r": {"float": "5.0"}, "n": 1},
        true,
        {"e": "end", "t": 0},
    ]
    (outcome,) = _forge(tmp_path, lines, ["assert abs(f(1) - target) < 1e-9"], [1.0])
    assert outcome.error is not None and outcome.error.type == "AssertionError"


def test_records_out_of_order_do_not_pass(tmp_path):
    lines = [
        {"e": "bind", "name": "f", "r": {"handle": 1, "type": "function"}},
        {"e": "armed"},
        {"e": "begin", "t": 0, "rng": {}},
        {"e": "get", "h": 1, "attr": "x", "r": 1.0, "n": 1},
        {"e": "end", "t": 0},
    ]
    (outcome,) = _forge(tmp_path, lines, ["assert f(1) == target"], [1.0])
    assert outcome.error is not None
