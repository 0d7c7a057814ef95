"""Agentic SciCode under ``sandbox=docker``: the agent works in a container of its own (the
compose file's ``agent`` service), its answers are graded in the sample's runtime containers,
and what it leaves never reaches them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from inspect_ai import eval as inspect_eval

from scievals.agents.environment import AGENT_ENVIRONMENT
from scievals.agents.step import AGENT_STORE_KEY
from tests.scibench.scibench_helpers import DATA, needs_data
from tests.scicode.agent_scripts import bash, fenced, python, scripted, submit
from tests.scicode.test_agent_hostile import LEAK_CHECK, LINGER, PLANT, gold

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("runtime_image", "dev_targets")]


def _run(tmp_path, model, sample_id=None, **params):
    from scievals.scicode.task import scicode

    log = inspect_eval(
        scicode(split="dev", agent="react", sandbox="docker", **params),
        model=model,
        display="none",
        log_dir=str(tmp_path),
        sample_id=sample_id,
    )[0]
    assert log.status == "success", log.error
    return log


def test_reference_agent_dev_in_docker(tmp_path):
    log = _run(tmp_path, "scievals/reference")
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["total_main_problems_solved"] == 15.0
    assert metrics["total_subproblems_solved"] == 50.0
    services = yaml.safe_load(Path(log.eval.sandbox.config).read_text())["services"]
    assert AGENT_ENVIRONMENT in services and "default" in services
    tools = [e for s in log.samples for e in s.events if e.event == "tool"]
    assert len([e for e in tools if e.function == "python"]) == 50


def test_what_an_agent_leaves_in_its_container_never_reaches_grading(tmp_path):
    from scievals.offline import seed_tiktoken

    seed_tiktoken()
    model = scripted(
        {
            "tensor": [python(PLANT), bash(LINGER), submit(fenced(LEAK_CHECK + gold("19.1")))],
            "n_tangle": [submit(fenced("from agent_planted import n_tangle"))],
        }
    )
    log = _run(tmp_path, model, sample_id="19", previous_steps="gold")
    sample = log.samples[0]
    steps = {v["step"]: v for v in sample.scores["scicode_scorer"].metadata["steps"]}
    assert steps["19.1"]["passed"], steps["19.1"]
    assert "No module named 'agent_planted'" in steps["19.2"]["reason"]


@needs_data
def test_reference_scibench_agent_on_a_slice_in_docker(tmp_path):
    """SciBench with tools under ``sandbox=docker``: the agent computes in its own container,
    every answer is right (the robust scorer) through a real tool call."""
    from scievals.scibench.task import scibench

    task = scibench(data_dir=str(DATA), agent="react", sandbox="docker", books="quan")
    [log] = inspect_eval(
        task, model="scievals/reference", limit=8, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    assert len(log.samples) == 8
    assert [s.id for s in log.samples if s.scores["robust"].value != 1] == []
    for sample in log.samples:
        [record] = sample.store[AGENT_STORE_KEY].values()
        assert record["answered"] and record["tool_calls"] == 1
        [event] = [e for e in sample.events if e.event == "tool" and e.function == "python"]
        assert sample.metadata["answer_number"].strip() in str(event.result)
    services = yaml.safe_load(Path(log.eval.sandbox.config).read_text())["services"]
    assert AGENT_ENVIRONMENT in services
