"""SciBench's agentic setting without data or sandbox: its parameters, solver and protocol."""

from __future__ import annotations

import pytest

from scievals.agents.limits import AgentLimits
from scievals.inputs import InputError
from scievals.scibench.agent import agent_solver, probe
from scievals.scibench.config import SciBenchConfig
from scievals.scibench.reference import reply_for


def test_agent_solver_builds_from_its_logged_parameters():
    assert callable(agent_solver("react", AgentLimits(tool_calls=3).record()))
    with pytest.raises(InputError, match="neither react"):
        agent_solver("nowhere")


def test_reference_probe_prints_the_gold():
    check = probe(reply_for("1.5", "$10^{-3}$ m"), "1.5")
    assert check and check["code"].strip() == "print('1.5e-3')" and check["expect"] == "1.5"
    assert probe(None, "1.5") is None


@pytest.mark.parametrize(
    "params, message",
    [
        ({"setting": "zero_cot", "agent": "react"}, "settings of one model call"),
        ({"setting": "wolfram", "agent": "react"}, "settings of one model call"),
        ({"subset": "exam", "agent": "react"}, "no agentic setting"),
    ],
)
def test_agent_refused_where_it_has_no_meaning(params, message):
    with pytest.raises(InputError, match=message):
        SciBenchConfig.from_params(**params)


def test_agentic_and_single_call_protocols_differ():
    plain = SciBenchConfig.from_params(setting="few").protocol("main", 10)
    agentic = SciBenchConfig.from_params(setting="few", agent="react").protocol("main", 10)
    assert plain["agent"] is None and plain["agent_limits"] is None and plain["sandbox"] is None
    assert agentic["prompt"] == plain["prompt"] + " + agent"
    assert agentic["agent_limits"] == AgentLimits().record()
    assert agentic["sandbox"].startswith("scievals")
