"""Every step count people publish, as an explicit choice: which steps are asked and scored,
the denominator a real task run records, and its protocol label."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from scievals.aio import run_sync
from scievals.inputs import InputError
from scievals.scicode.data.dataset import load_problems, upstream_extract
from scievals.scicode.data.targets import write_test_target
from scievals.scicode.grade import grade
from scievals.scicode.task import scicode

from .verified_helpers import VERIFIED_DATA, needs_verified_data

PRESUPPLIED = ["13.6", "62.1", "76.3"]

# (dataset, split, step_count) -> (problems, steps counted, whether the three are scored)
CONVENTIONS = [
    ("original", "test", "official", 65, 288, False),
    ("original", "dev", "official", 15, 50, False),
    ("original", "all", "official", 80, 338, False),
    ("original", "test", "inspect_evals", 65, 291, True),
    ("original", "all", "inspect_evals", 80, 341, True),
    ("original", "test", "upstream", 65, 288, False),
    pytest.param("verified", "test", "verified", 64, 287, False, marks=needs_verified_data),
    pytest.param("verified", "test", "inspect_evals", 64, 290, True, marks=needs_verified_data),
]


def _source(dataset: str) -> str:
    return str(VERIFIED_DATA) if dataset == "verified" else "package"


@pytest.mark.parametrize(("dataset", "split", "count", "problems", "steps", "asked"), CONVENTIONS)
def test_task_run_records_the_denominator(tmp_path, dataset, split, count, problems, steps, asked):
    """A real run (mockllm, no scoring) over the problems with pre-supplied steps: the protocol's
    denominator and label, the steps each sample scores, and which steps the model was asked."""
    ids = ["13", "62", "76"] if split != "dev" else ["1", "3"]
    [log] = inspect_eval(
        scicode(dataset=dataset, split=split, step_count=count, source=_source(dataset)),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
        score=False,
        sample_id=ids,
    )
    assert log.status == "success", log.error
    protocol = log.eval.metadata["protocol"]
    assert (protocol["steps_counted"], protocol["step_count"]) == (steps, count)
    assert protocol["dataset"] == dataset
    loaded = load_problems(split, _source(dataset), dataset, count)
    assert (len(loaded), sum(len(p.scored_steps) for p in loaded)) == (problems, steps)
    for sample in log.samples:
        scored = set(sample.metadata["steps"])
        asked_of_model = set(sample.store["scicode"]["completions"])
        assert scored == asked_of_model  # what is scored is exactly what was asked
        for step in PRESUPPLIED:
            if step.split(".")[0] == sample.id:
                assert (step in scored) is asked


def test_default_is_official_and_verified_for_verified():
    assert sum(len(p.scored_steps) for p in load_problems("test")) == 288
    assert load_problems("test") is load_problems("test", "package", "original", "official")


def test_upstream_keeps_only_the_first_init():
    """Spec §1: the upstream loader's name regex misses ``class X:`` headers, so 13.6 and 62.1
    become their first ``__init__``; 76.3 is extracted whole."""
    by_step = {
        s.step_id: s.presupplied_code
        for p in load_problems("test", step_count="upstream")
        for s in p.steps
        if s.presupplied_code
    }
    official = {
        s.step_id: s.presupplied_code
        for p in load_problems("test")
        for s in p.steps
        if s.step_id in by_step
    }
    for step in ("13.6", "62.1"):
        assert by_step[step].startswith("def __init__(self")
        assert "class " not in by_step[step]
        assert by_step[step] == upstream_extract(official[step])
    assert len(by_step["13.6"].splitlines()) < len(official["13.6"].splitlines())
    assert by_step["76.3"] == official["76.3"]


def _targets(tmp_path, step: str, n_tests: int, shape: tuple[int, ...] = (3,)):
    path = tmp_path / "synthetic.h5"
    with h5py.File(path, "w") as h5:
        for number in range(1, n_tests + 1):
            write_test_target(h5, step, number, np.zeros(shape))
    return str(path)


def test_upstream_makes_problem_13_unsolvable(tmp_path):
    """13.8's tests build a Maxwell: under upstream there is none (NameError), under the
    official rule there is, so the same answer fails only on its value."""
    h5 = _targets(tmp_path, "13.8", 3, shape=(50, 50, 50))
    reply = "```python\ndef outgoing_wave(maxwell, f_dot, f):\n    return f_dot\n```"
    [upstream], _ = run_sync(
        grade({"13.8": reply}, split="test", h5=h5, step_count="upstream", timeout=120)
    )
    [official], _ = run_sync(grade({"13.8": reply}, split="test", h5=h5, timeout=120))
    assert upstream["reason"] == "test 1: NameError: name 'Maxwell' is not defined"
    assert official["reason_kind"] == "assertion"


def test_inspect_evals_scores_the_presupplied_steps(tmp_path):
    """Asked and scored like the rest: a step with no tests passes when its program runs, and
    the denominator is 291; under the official rule the step is not scored at all."""
    h5 = _targets(tmp_path, "99.1", 1)  # 13.6 has no tests: nothing is read for it
    official_code = next(
        s.presupplied_code for p in load_problems("test") for s in p.steps if s.step_id == "13.6"
    )
    reply = f"```python\n{official_code}\n```"
    [verdict], summary = run_sync(
        grade({"13.6": reply}, split="test", h5=h5, step_count="inspect_evals", timeout=120)
    )
    assert verdict["passed"]
    assert (summary["steps_counted"], summary["step_count"]) == (291, "inspect_evals")
    broken = "```python\nclass Maxwell:\n    raise RuntimeError('no')\n```"
    [failed], _ = run_sync(
        grade({"13.6": broken}, split="test", h5=h5, step_count="inspect_evals", timeout=120)
    )
    assert not failed["passed"] and "RuntimeError" in failed["reason"]
    with pytest.raises(InputError, match="steps not scored in split 'test': 13.6"):
        run_sync(grade({"13.6": reply}, split="test", h5=h5, timeout=120))


def test_step_count_cli(tmp_path, capsys):
    import json

    from scievals.cli import main

    h5 = _targets(tmp_path, "99.1", 1)
    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"step": "13.6", "completion": "```python\nx = 1\n```"}) + "\n")
    argv = ["grade", "scicode", str(source), "--split", "test", "--h5", h5]
    assert main([*argv, "--step-count", "inspect_evals"]) == 0
    assert "step count inspect_evals" in capsys.readouterr().err
    assert main(argv) == 2
    assert "steps not scored" in capsys.readouterr().err
