"""The agentic protocol's pieces that need no sandbox: parameters, limits, the agent's tools and
environment, the protocol record, the whole-problem prompt and the reference model's moves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from inspect_ai.model import ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolDef, ToolError, ToolInfo, ToolParam, ToolParams, tool
from inspect_ai.util import LimitExceededError

from scievals.agents.environment import AGENT_ENVIRONMENT, with_agent_service
from scievals.agents.limits import AgentLimits
from scievals.agents.resolve import agent_label, agent_spec
from scievals.agents.step import AGENT_STORE_KEY, summary, unanswered
from scievals.agents.step_limits import ToolCallLimit
from scievals.agents.tools import counted
from scievals.inputs import InputError
from scievals.models import reference
from scievals.sandbox.image import compose_text
from scievals.scibench.config import SciBenchConfig
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import load_problems
from scievals.scicode.task import scicode
from scievals.scicode.whole import codes_for, last_step, whole_gold_reply, whole_prompt


def test_tool_call_limit_refuses_past_it_and_raises_as_inspect_does():
    calls = ToolCallLimit(2)
    assert [calls.take() for _ in range(3)] == [True, True, False]
    with pytest.raises(LimitExceededError) as raised:
        calls.check()
    assert raised.value.source is calls and raised.value.type == "custom"
    assert "Tool call limit exceeded. count: 3; limit: 2" in raised.value.message
    unlimited = ToolCallLimit(None)
    assert all(unlimited.take() for _ in range(100))
    unlimited.check()


def test_counted_tool_runs_within_the_limit_only():
    @tool
    def echo():
        async def execute(text: str) -> str:
            """Echo.

            Args:
                text: what to echo
            """
            return text

        return execute

    calls = ToolCallLimit(1)
    wrapped = counted(echo(), calls)
    assert ToolDef(wrapped).name == "echo"
    assert asyncio.run(wrapped(text="hi")) == "hi"
    with pytest.raises(ToolError, match="was not run"):
        asyncio.run(wrapped(text="again"))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"message_limit": -1}, "agent_message_limit must be a whole number"),
        ({"tool_timeout": 0}, "agent_tool_timeout must be at least 1"),
        ({"time_limit": "soon"}, "agent_time_limit must be a whole number"),
    ],
)
def test_agent_limits_refuse_bad_values(params, message):
    with pytest.raises(InputError, match=message):
        AgentLimits.from_params(**params)


def test_zero_means_no_limit():
    limits = AgentLimits.from_params(message_limit=0, tool_call_limit=0, time_limit=0)
    assert limits.record() == {
        "messages": None,
        "tokens": None,
        "tool_calls": None,
        "tool_timeout": 60,
        "time": None,
    }


def test_unknown_agent_and_chat_are_refused():
    with pytest.raises(InputError, match="neither react, a registered"):
        agent_spec("no_such_agent_anywhere")
    with pytest.raises(InputError, match="not found"):
        agent_spec("missing.py@agent")
    with pytest.raises(InputError, match="single-turn prompt"):
        SciCodeConfig.from_params(split="dev", agent="react", prompt_protocol="chat")
    with pytest.raises(InputError, match="no previous steps"):
        SciCodeConfig.from_params(
            split="dev", prompt_protocol="whole_problem", previous_steps="gold"
        )
    with pytest.raises(InputError, match="settings of one model call"):
        SciBenchConfig.from_params(setting="python", agent="react")


def test_protocol_keeps_agentic_and_single_turn_runs_apart():
    plain = scicode(split="dev").metadata["protocol"]
    agentic = scicode(split="dev", agent="react", agent_tool_call_limit=5).metadata["protocol"]
    whole = scicode(split="dev", prompt_protocol="whole_problem").metadata["protocol"]
    assert plain["agent"] is None and plain["agent_limits"] is None
    assert plain["prompt"] == "single_turn"
    assert agentic["agent"] == agent_label("react") == "react: python, bash, submit"
    assert agentic["prompt"] == "single_turn + agent"
    assert agentic["agent_limits"]["tool_calls"] == 5
    assert whole["prompt"] == "whole_problem" and whole["steps_counted"] == 15
    assert "last step passes" in whole["scorer"]
    bench = SciBenchConfig.from_params(setting="zero", agent="react")
    record = bench.protocol("main", 3)
    assert record["agent"] and record["prompt"] == "zero + agent" and record["timeout"] is None
    assert bench.sandbox == "scievals"


def test_docker_compose_gains_an_agent_service_of_its_own(tmp_path):
    compose = tmp_path / "compose.yaml"
    compose.write_text(compose_text(("2024",)))
    data = yaml.safe_load(with_agent_service(compose).read_text())
    default, agent = data["services"]["default"], data["services"][AGENT_ENVIRONMENT]
    assert "volumes" not in agent and "volumes" not in data  # nothing shared with the grader
    for key in ("image", "network_mode", "user", "read_only", "mem_limit", "pids_limit", "tmpfs"):
        assert agent[key] == default[key]


def test_whole_problem_prompt_codes_and_gold():
    problem = next(p for p in load_problems("dev") if p.problem_id == "19")
    prompt = whole_prompt(problem, background=False)
    for step in problem.steps:
        assert step.function_header in prompt and step.description in prompt
    assert "import numpy as np" in prompt
    last = last_step(problem)
    assert last.step_id == "19.2"
    codes = codes_for(problem, problem.steps[0], "ANSWER")
    assert codes == {"19.1": "ANSWER", "19.2": ""}
    reply = whole_gold_reply(problem)
    assert reply and all(s.gold_code in reply for s in problem.steps)
    assert whole_gold_reply(load_problems("test")[0]) is None


def test_unanswered_steps_and_summary():
    records = {
        "1.1": {
            "step": "1.1",
            "limit": None,
            "reason": None,
            "tool_calls": 2,
            "tokens": 10,
            "seconds": 1.5,
        },
        "1.2": {
            "step": "1.2",
            "limit": "message",
            "reason": "Message limit exceeded.",
            "tool_calls": 0,
            "tokens": 5,
            "seconds": 0.5,
        },
    }

    class Store(dict):
        def get(self, key, default=None):
            return super().get(key, default)

    store = Store({AGENT_STORE_KEY: records})
    assert unanswered(store) == {
        "1.2": "the agent's step ended without an answer: Message limit exceeded."
    }
    assert summary(records) | {"by_step": None} == {
        "steps": 2,
        "ended_by_limit": 1,
        "limit_share": 0.5,
        "limits": {"message": 1},
        "tool_calls": 2,
        "tokens": 15,
        "seconds": 2.0,
        "by_step": None,
    }


def test_reference_model_runs_the_probe_then_submits(monkeypatch):
    def info(name: str, param: str) -> ToolInfo:
        return ToolInfo(
            name=name,
            description=name,
            parameters=ToolParams(properties={param: ToolParam(type="string")}, required=[param]),
        )

    tools = [info("python", "code"), info("bash", "command"), info("submit", "answer")]
    probe = {"code": "print('f', callable(print))", "expect": "f True"}
    monkeypatch.setattr(reference, "store", lambda: {reference.PROBE_KEY: probe})
    prompt = [ChatMessageUser(content="the prompt")]
    first = reference.agent_turn("m", prompt, tools, "REPLY")
    call = first.message.tool_calls[0]
    assert call.function == "python" and call.arguments == {"code": probe["code"]}
    result = ChatMessageTool(content="f True\n", tool_call_id=call.id, function="python")
    second = reference.agent_turn("m", [*prompt, first.message, result], tools, "REPLY")
    assert second.message.tool_calls[0].function == "submit"
    assert second.message.tool_calls[0].arguments == {"answer": "REPLY"}
    assert "printed what I expected" in second.message.text
    wrong = ChatMessageTool(content="boom", tool_call_id=call.id, function="python")
    third = reference.agent_turn("m", [*prompt, first.message, wrong], tools, "REPLY")
    assert "did not print" in third.message.text
    assert reference.agent_turn("m", prompt, tools[:1], "REPLY") is None
    bash_only = reference.agent_turn("m", prompt, tools[1:], "REPLY")
    assert "python3 - <<'SCIEVALS_EOF'" in bash_only.message.tool_calls[0].arguments["command"]


def test_agentic_tasks_give_the_agent_an_environment_of_its_own():
    spec = scicode(split="dev", agent="react").sandbox
    assert spec.type == "scievals" and spec.config.agent and spec.config.runtimes == ("2024",)
    assert not scicode(split="dev").sandbox.config.agent
    assert scicode(split="dev", prompt_protocol="whole_problem").sandbox.config.agent
    docker = scicode(split="dev", agent="react", sandbox="docker").sandbox
    assert AGENT_ENVIRONMENT in yaml.safe_load(Path(docker.config).read_text())["services"]
    bench = SciBenchConfig.from_params(setting="zero", agent="react")
    assert bench.sandbox == "scievals"


def test_solvers_build_from_their_logged_parameters():
    from scievals.scicode.agent import agent_solver
    from scievals.scicode.solver import whole_problem_solver

    whole = {"split": "dev", "agent": "react", "prompt_protocol": "whole_problem"}
    assert callable(agent_solver(SciCodeConfig.from_params(**whole).record()))
    assert callable(whole_problem_solver({"split": "dev"}))
    with pytest.raises(InputError, match="neither react"):
        agent_solver({"split": "dev", "agent": "nowhere"})
    with pytest.raises(InputError, match="needs a config with an agent"):
        agent_solver({"split": "dev"})
