"""``scievals audit scicode``: trivial answers graded through the real grader, weak steps listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scievals import cli
from scievals.scicode.audit import (
    Finding,
    _accepted,
    completion,
    describe,
    shipped_audit,
    trivial_answers,
)
from scievals.scicode.data.dataset import load_problems
from scievals.scicode.data.targets import official_h5


def _step(step_id: str):  # noqa: ANN202
    problem = next(p for p in load_problems("dev") if p.problem_id == step_id.split(".")[0])
    return next(s for s in problem.steps if s.step_id == step_id)


def test_the_trivial_answers_of_a_step() -> None:
    step = _step("78.2")
    names = [a.name for a in trivial_answers(step)]
    assert names[:4] == ["zero", "one", "empty list", "None"]
    assert "zeros of the stated shape (n + 1, 2)" in names  # its docstring: shape (n+1, 2)
    assert "the input state unchanged" in names and "the constant 2 from the prompt" in names
    shape = next(a for a in trivial_answers(step) if a.name.startswith("zeros of the stated"))
    assert completion(step, shape) == (
        "```python\ndef runge_kutta_4th_order(f, state, t0, dt, n, g, L, beta, A, alpha):\n"
        "    return np.zeros((n + 1, 2))\n```"
    )


def test_how_many_tests_accepted_an_answer() -> None:
    assert _accepted({"passed": True}, 3) == 3
    assert _accepted({"passed": False, "reason": "test 3: assertion failed"}, 4) == 2
    assert _accepted({"passed": False, "reason": "test 1: assertion failed"}, 4) == 0
    assert _accepted({"passed": False, "reason": "syntax error at line 2"}, 4) == 0
    finding = Finding("29.3", "zero", "return 0.0", 4, False, 1)
    assert (
        describe(finding) == "29.3: zero (return 0.0) test 1 of 4 accepts it (then one rejects it)"
    )


def test_the_shipped_audit_names_the_steps_a_trivial_answer_passes() -> None:
    weak = shipped_audit()
    passing = {step for step, found in weak.items() if any(f["passed"] for f in found)}
    assert passing == {"78.2", "10.10"}
    assert {"return np.zeros((n + 1, 2))", "return 0.0"} <= {
        f["code"] for step in passing for f in weak[step] if f["passed"]
    }
    assert "29.3" in weak  # its first test (a boolean target) accepts zeros


@pytest.mark.slow
def test_a_fresh_audit_finds_what_is_shipped(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "audit.json"
    assert cli.main(["audit", "scicode", "--steps", "78.2,10.10,1.1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        "36 trivial answers on 3 steps (original, split dev); 2 step(s) pass with one (10.10, 78.2)"
        in printed
    )
    assert (
        "78.2: zeros of the stated shape (n + 1, 2) (return np.zeros((n + 1, 2))) passes all 3 tests"
        in printed
    )
    record = json.loads(out.read_text())
    assert record["steps_audited"] == 3 and "1.1" not in record["weak"]
    fresh = {
        s: {(f["answer"], f["passed"], f["accepted"]) for f in v} for s, v in record["weak"].items()
    }
    kept = {
        s: {(f["answer"], f["passed"], f["accepted"]) for f in shipped_audit()[s]} for s in fresh
    }
    assert fresh == kept


@pytest.mark.skipif(official_h5(None) is not None, reason="the official test_data.h5 is here")
@pytest.mark.parametrize(
    "args", [["--split", "test"], ["--dataset", "verified", "--split", "test"]]
)
def test_without_targets_the_audit_is_one_line(
    args: list[str], capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(["audit", "scicode", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("scievals: error: ")
