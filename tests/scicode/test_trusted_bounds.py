"""The trusted re-run through the real grader: what a completion hands over cannot take the
harness down (issue 20, items 6 and 7).

6. The random generators' state the recorder carries is checked before it is installed:
   ``np.random.set_state`` with a position past the key used to make the trusted re-run of
   50.3 (its tests draw ``np.random.normal``) read out of bounds and the whole run die with
   SIGSEGV. Every malformed state fails 50.3 as ``invalid_record``, while honest 50.1/50.2 and
   a gold dev step in the same run pass.
7. The trusted re-run is bounded by the step's timeout: an object array of Symbols makes
   ``np.allclose`` do minutes of SymPy arithmetic; with ``--timeout 20`` the step fails
   as ``limit`` in bounded time and every other step of the run passes.

Problem 50 is in the test split (no gold code): its honest code here is ours, and its targets
are computed from that code by the benchmark's own tests, into a targets file of our own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import h5py
import pytest
from timing import must_end

from scievals.aio import run_sync
from scievals.cli import main
from scievals.scicode.data.dataset import find_step
from scievals.scicode.data.targets import write_test_target
from scievals.scicode.grade import grade

from .conftest import gold, read_grade_output, write_jsonl

pytestmark = pytest.mark.slow

HONEST = {
    "50.1": "def find_equilibrium(spins, N, T, J, num_steps):\n    return spins.copy()",
    "50.2": (
        "def calculate_overlap(replicas):\n"
        "    n = len(replicas)\n"
        "    return np.sort([np.dot(replicas[i], replicas[j]) / len(replicas[i])\n"
        "                    for i in range(n) for j in range(i + 1, n)])"
    ),
    "50.3": "def analyze_rsb(overlaps, N):\n    return True",
}
CHECKED = {"50.1": "spins", "50.2": "overlaps", "50.3": "potential_RSB"}
"""The name each step's tests compare with ``target``."""


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.fixture(scope="module")
def targets_file(tmp_path_factory, dev_targets_file) -> str:
    """Problem 50's targets from our honest code: each test run up to its assert."""
    path = tmp_path_factory.mktemp("targets") / "problem50.h5"
    with h5py.File(path, "w") as h5:
        for step_id, name in CHECKED.items():
            problem, step = find_step(step_id, "test")
            for number, test in enumerate(step.tests, start=1):
                namespace: dict[str, Any] = {}
                setup = test[: test.rindex("assert")]
                exec(f"{problem.dependencies}\n{HONEST[step_id]}\n{setup}", namespace)  # noqa: S102
                write_test_target(h5, step_id, number, namespace[name])
    return str(path)


def _grade(completions: dict[str, str], h5: str, timeout: int = 60) -> dict[str, dict]:
    verdicts, _ = run_sync(grade(completions, h5=h5, timeout=timeout))
    return {v["step"]: v for v in verdicts}


def _run_with(code_50_3: str, h5: str) -> dict[str, dict]:
    completions = {s: fence(c) for s, c in HONEST.items() if s != "50.3"}
    completions["50.3"] = fence(code_50_3)
    completions["38.1"] = gold("38.1")
    with must_end("grading honest steps beside the attacked 50.3"):
        verdicts = _grade(completions, h5)
    assert set(verdicts) == set(completions), "a step got no verdict"
    wrong = {s: v["reason"] for s, v in verdicts.items() if s != "50.3" and not v["passed"]}
    assert wrong == {}, f"honest steps failed next to the attack: {wrong}"
    return verdicts


def test_honest_problem_50_passes(targets_file):
    """The control: our code passes against the targets made from it, 50.3 included."""
    verdicts = _run_with(HONEST["50.3"], targets_file)
    assert verdicts["50.3"]["passed"], verdicts["50.3"]


def setting(state: str) -> str:
    """50.3 that puts the global NumPy generator in ``state`` (NumPy does not check it)."""
    return f"def analyze_rsb(overlaps, N):\n    np.random.set_state({state})\n    return True"


def reporting(module: str, state: str) -> str:
    """50.3 that makes ``module``'s generator report ``state`` to the recorder after the call
    (a state ``set_state`` itself would refuse, so only a forged record can carry it)."""
    return (
        "def analyze_rsb(overlaps, N):\n"
        f"    import {module}\n"
        f"    state = {state}\n"
        f"    {module}.getstate = {module}.get_state = lambda: state\n"
        "    return True"
    )


KEY = "np.random.get_state()[1]"
WORDS = "tuple(range(624))"
STATES = {
    "position-1e9": setting(f"('MT19937', {KEY}, 10**9, 0, 0.0)"),
    "negative-position": setting(f"('MT19937', {KEY}, -5, 0, 0.0)"),
    "huge-position": reporting("numpy.random", f"('MT19937', {KEY}, 2**70, 0, 0.0)"),
    "float-position": reporting("numpy.random", f"('MT19937', {KEY}, 5.0, 0, 0.0)"),
    "key-of-623": reporting("numpy.random", f"('MT19937', {KEY}[:623], 0, 0, 0.0)"),
    "key-of-floats": reporting("numpy.random", f"('MT19937', {KEY}.astype(float), 0, 0, 0.0)"),
    "key-over-32-bits": reporting(
        "numpy.random", f"('MT19937', {KEY}.astype(np.int64) + 2**40, 0, 0, 0.0)"
    ),
    "gaussian-inf": reporting("numpy.random", f"('MT19937', {KEY}, 0, 1, float('inf'))"),
    "has-gauss-7": reporting("numpy.random", f"('MT19937', {KEY}, 0, 7, 0.0)"),
    "wrong-name": reporting("numpy.random", f"('PCG64', {KEY}, 0, 0, 0.0)"),
    "numpy-not-a-tuple": reporting("numpy.random", f"['MT19937', {KEY}, 0, 0, 0.0]"),
    "numpy-a-string": reporting("numpy.random", "'MT19937'"),
    "random-bad-index": reporting("random", f"(3, {WORDS} + (625,), None)"),
    "random-negative-index": reporting("random", f"(3, {WORDS} + (-1,), None)"),
    "random-wrong-length": reporting("random", "(3, (0,) * 10, None)"),
    "random-words-over-32-bits": reporting("random", "(3, (2**40,) * 624 + (0,), None)"),
    "random-version-2": reporting("random", f"(2, {WORDS} + (0,), None)"),
    "random-gauss-nan": reporting("random", f"(3, {WORDS} + (0,), float('nan'))"),
    "random-not-a-tuple": reporting("random", f"[3, {WORDS} + (0,), None]"),
}


@pytest.mark.parametrize("code", list(STATES.values()), ids=list(STATES))
def test_malformed_random_state_fails_the_step(targets_file, code):
    verdict = _run_with(code, targets_file)["50.3"]
    assert not verdict["passed"], verdict
    assert verdict["reason_kind"] == "invalid_record", verdict
    assert verdict["reason"].startswith("test 1: malformed random state: "), verdict


# Ten times the (2000, 1) array, which takes about 20 s on a quiet machine here: over
# the bound on any machine (minutes of trusted arithmetic without it).
SYMBOLS = (
    "def cg(A, b, x, tol):\n"
    "    import sympy\n"
    "    out = np.empty((20000, 1), dtype=object)\n"
    "    for i in range(20000):\n"
    "        out[i, 0] = sympy.Symbol(f's{i}')\n"
    "    return out"
)


def test_costly_values_fail_as_limit_in_bounded_time(tmp_path, targets_file):
    """``scievals grade scicode --timeout 300``: minutes of trusted arithmetic stop at the
    re-run's own CPU budget (10 s plus 0.25 s per MiB of records), not the step's timeout."""
    completions = {
        "1.1": fence(SYMBOLS),
        "38.1": gold("38.1"),
        "3.1": gold("3.1"),
        **{s: fence(HONEST[s]) for s in ("50.1", "50.2")},
    }
    source = write_jsonl(tmp_path / "completions.jsonl", completions)
    out = tmp_path / "verdicts.jsonl"
    args = ["grade", "scicode", str(source), "--out", str(out), "--timeout", "300"]
    with must_end("scievals grade scicode over costly values"):
        assert main([*args, "--h5", targets_file]) == 0
    verdicts, _ = read_grade_output(Path(out))
    attacked = verdicts.pop("1.1")
    assert attacked["reason_kind"] == "limit", attacked
    assert re.fullmatch(
        r"the trusted re-run of its tests (used more than 1\d s of CPU|ran past \d+ s) \(its "
        r"budget: 10 s of CPU plus 0\.25 s per MiB of records\)",
        attacked["reason"],
    ), attacked
    assert {s: v["reason"] for s, v in verdicts.items() if not v["passed"]} == {}
