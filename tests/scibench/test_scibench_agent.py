"""SciBench with tools: an agent computes with Python in the sandbox, then submits its answer,
which the faithful and robust scorers read as they read a single call's reply."""

from __future__ import annotations

import itertools

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from scievals.agents.step import AGENT_STORE_KEY
from scievals.scibench.task import scibench

from .scibench_helpers import DATA, needs_data

pytestmark = [needs_data, pytest.mark.slow]


def _run(tmp_path, model, **params):
    task = scibench(data_dir=str(DATA), agent="react", **params)
    log = inspect_eval(task, model=model, display="none", log_dir=str(tmp_path))[0]
    assert log.status == "success", log.error
    return log


def test_reference_agent_computes_then_submits(tmp_path):
    log = _run(tmp_path, "scievals/reference", books="diff")
    assert len(log.samples) == 50
    wrong = {
        name: sorted(str(s.id) for s in log.samples if s.scores[name].value != 1)
        for name in ("faithful", "robust")
    }
    assert wrong == {"faithful": ["diff-18", "diff-26", "diff-33", "diff-38"], "robust": []}
    for sample in log.samples:
        [record] = sample.store[AGENT_STORE_KEY].values()
        assert record["answered"] and record["tool_calls"] == 1
        [event] = [e for e in sample.events if e.event == "tool" and e.function == "python"]
        assert sample.metadata["answer_number"].strip() in str(event.result)
    protocol = log.eval.metadata["protocol"]
    assert (
        protocol["agent"] == "react: python, bash, submit" and protocol["prompt"] == "zero + agent"
    )
    assert protocol["agent_limits"]["messages"] == 50


def test_agent_that_never_submits_is_scored_wrong_with_its_limit(tmp_path):
    def talk():
        for _ in itertools.count():
            output = ModelOutput.from_content("mockllm/model", "The answer is therefore \\boxed{1}")
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            yield output

    model = get_model("mockllm/model", custom_outputs=talk(), memoize=False)
    log = _run(tmp_path, model, books="diff", agent_message_limit=6)
    assert log.eval.metadata["protocol"]["agent_limits"]["messages"] == 6
    for sample in log.samples[:3]:
        [record] = sample.store[AGENT_STORE_KEY].values()
        assert record["limit"] == "message" and not record["answered"]
        assert sample.output.completion == ""
        assert sample.scores["robust"].value == 0 and sample.scores["faithful"].value == 0
