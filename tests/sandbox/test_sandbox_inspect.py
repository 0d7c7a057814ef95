"""The provider inside a real Inspect eval: task init, per-sample dirs, cleanup."""

from __future__ import annotations

import glob
import os

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox

import scievals._registry  # noqa: F401 - registers the provider as Inspect's entry point does


@solver
def run_code():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await sandbox().write_file("prog.py", state.input_text)
        res = await sandbox().exec(["python3", "prog.py"], timeout=30)
        state.metadata["out"] = res.stdout.strip()
        return state

    return solve


@scorer(metrics=[])
def same():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=int(state.metadata["out"] == target.text))

    return score


@pytest.mark.slow
def test_eval_with_scievals_sandbox(tmp_path):
    before = set(glob.glob(f"/tmp/scievals-sample-{os.getpid()}-*"))
    samples = [
        Sample(
            input=f"import numpy as np\nprint(int(np.arange({n}).sum()))",
            target=str(n * (n - 1) // 2),
        )
        for n in range(2, 6)
    ]
    task = Task(dataset=samples, solver=run_code(), scorer=same(), sandbox="scievals")
    [log] = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert [s.scores["same"].value for s in log.samples] == [1, 1, 1, 1]
    assert set(glob.glob(f"/tmp/scievals-sample-{os.getpid()}-*")) == before
