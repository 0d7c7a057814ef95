"""Agentic SciCode with honest agents: the reference agent runs its gold code through the tool
and submits it (15/15, 50/50 on dev), the whole-problem setting, and external agents through
the ``agent`` parameter and ``--solver``, all graded as single-turn answers are."""

from __future__ import annotations

import textwrap

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import as_solver, react
from inspect_ai.tool import python as inspect_python

from scievals.offline import seed_tiktoken
from scievals.scicode.data.dataset import find_step, load_problems
from scievals.scicode.task import scicode
from scievals.scicode.whole import whole_gold_reply

from .agent_scripts import fenced, python, scripted, submit

pytestmark = pytest.mark.slow
SCORER = "scicode_scorer"


def _run(tmp_path, model, solver=None, **kwargs):
    eval_kwargs = {k: kwargs.pop(k) for k in ("sample_id",) if k in kwargs}
    log = inspect_eval(
        scicode(split="dev", **kwargs),
        model=model,
        solver=solver,
        display="none",
        log_dir=str(tmp_path / "logs"),
        **eval_kwargs,
    )[0]
    assert log.status == "success", log.error
    return log


def _metrics(log) -> dict[str, float]:
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def test_reference_agent_solves_the_dev_split_through_real_tool_calls(tmp_path, dev_targets_file):
    log = _run(tmp_path, "scievals/reference", agent="react")
    metrics = _metrics(log)
    assert metrics["total_main_problems_solved"] == 15.0
    assert metrics["total_subproblems_solved"] == 50.0
    protocol = log.eval.metadata["protocol"]
    assert protocol["agent"] == "react: python, bash, submit"
    assert protocol["prompt"] == "single_turn + agent" and protocol["steps_counted"] == 50
    calls = 0
    for sample in log.samples:
        score = sample.scores[SCORER]
        agent = score.metadata["agent"]
        assert agent["ended_by_limit"] == 0 and agent["steps"] == len(sample.metadata["steps"])
        assert all(r["answered"] and r["tool_calls"] == 1 for r in agent["by_step"])
        tools = [e for e in sample.events if e.event == "tool" and e.function == "python"]
        assert len(tools) == agent["steps"]
        for event in tools:  # the gold code really ran: it printed "<function> True"
            assert event.error is None and str(event.result).strip().endswith("True"), event
        calls += len(tools)
    assert calls == 50


def test_whole_problem_reference_with_and_without_agent(tmp_path, dev_targets_file):
    for agent in (None, "react"):
        log = _run(
            tmp_path / str(agent),
            "scievals/reference",
            agent=agent,
            prompt_protocol="whole_problem",
            sample_id=["19", "29"],
        )
        assert _metrics(log)["total_main_problems_solved"] == 2.0
        for sample in log.samples:
            score = sample.scores[SCORER]
            whole = score.metadata["whole_problem"]
            assert list(score.value) == [whole["graded_step"]] == [sample.metadata["steps"][-1]]
            assert whole["steps_passed"] == whole["steps"] == len(sample.metadata["steps"])
            assert len(score.metadata["steps"]) == whole["steps"]
        if agent:
            assert log.samples[0].scores[SCORER].metadata["agent"]["tool_calls"] == 1


def test_whole_problem_judged_on_the_last_step_with_every_verdict_reported(
    tmp_path, dev_targets_file
):
    seed_tiktoken()
    partial = "\n\n".join(find_step(s, "dev")[1].gold_code or "" for s in ("29.1", "29.2"))
    model = scripted({"orthogonalize": [submit(fenced(partial))]})
    log = _run(tmp_path, model, agent="react", prompt_protocol="whole_problem", sample_id="29")
    score = log.samples[0].scores[SCORER]
    assert score.value == {"29.3": 0.0}
    verdicts = {v["step"]: v for v in score.metadata["steps"]}
    assert verdicts["29.1"]["passed"] and verdicts["29.2"]["passed"]
    assert verdicts["29.3"]["reason_kind"] == "missing_function"
    assert score.metadata["whole_problem"]["steps_passed"] == 2


AGENTS = textwrap.dedent(
    """
    from inspect_ai.agent import AgentState, agent, agent_bridge, react
    from inspect_ai.model import messages_to_openai
    from inspect_ai.tool import think
    from openai import AsyncOpenAI


    @agent
    def custom_react(tools=None):
        return react(tools=[*(tools or []), think()])


    @agent
    def bridged():
        async def execute(state: AgentState) -> AgentState:
            async with agent_bridge(state) as bridge:
                client = AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
                await client.chat.completions.create(
                    model="inspect", messages=await messages_to_openai(state.messages)
                )
                return bridge.state

        return execute
    """
)


def test_external_agents_through_the_agent_parameter(tmp_path, dev_targets_file):
    agents = tmp_path / "my_agents.py"
    agents.write_text(AGENTS)
    own = _run(
        tmp_path / "react", "scievals/reference", agent=f"{agents}@custom_react", sample_id="19"
    )
    assert _metrics(own)["total_subproblems_solved"] == 2.0
    assert own.eval.metadata["protocol"]["agent"] == f"{agents}@custom_react"
    tools = {e.function for e in own.samples[0].events if e.event == "tool"}
    assert "python" in tools  # our sandbox tools reached the external react
    bridged = _run(
        tmp_path / "bridge", "scievals/reference", agent=f"{agents}@bridged", sample_id="19"
    )
    assert _metrics(bridged)["total_subproblems_solved"] == 2.0
    by_step = bridged.samples[0].scores[SCORER].metadata["agent"]["by_step"]
    assert [r["tool_calls"] for r in by_step] == [0, 0]


def test_external_solver_answers_the_whole_problem(tmp_path, dev_targets_file):
    seed_tiktoken()
    problem = next(p for p in load_problems("dev") if p.problem_id == "19")
    gold = whole_gold_reply(problem)
    assert gold
    model = scripted({"n_tangle": [python("print('from the solver')"), submit(gold)]})
    solver = as_solver(react(tools=[inspect_python(sandbox="agent")]))
    log = _run(tmp_path, model, solver=solver, prompt_protocol="whole_problem", sample_id="19")
    score = log.samples[0].scores[SCORER]
    assert score.value == {"19.2": 1.0}
    assert score.metadata["whole_problem"]["steps_passed"] == 2
    assert "from the solver" in str([e.result for e in log.samples[0].events if e.event == "tool"])
