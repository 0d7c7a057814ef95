"""The main job's harness-overhead line: model time and wall time read from real logs."""

from __future__ import annotations

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scievals.offline import seed_tiktoken
from scievals.quickstart import model_seconds


def test_model_seconds_from_a_real_log(tmp_path):
    seed_tiktoken()
    task = Task(dataset=[Sample(input="hi"), Sample(input="ho")], solver=generate())
    logs = eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    model, wall = model_seconds(logs)
    assert logs[0].status == "success"
    assert wall >= 0.0 and model >= 0.0
    assert model <= wall + 1.0  # the log's times have one-second resolution
    assert model_seconds([]) == (0.0, 0.0)
