"""SciCode with an agent (``-T agent=react``): the model may run its code before it answers.

Each step is asked with its usual single-turn prompt, as HAL's agents are asked; an agent
(``scievals.agents``) answers it after as many tool calls as its limits allow, and its answer
is kept and graded exactly as a single-turn reply is. A step a limit ended has no answer and
fails with that limit's message; the next step goes on. With ``whole_problem`` the agent gets
the one prompt of the whole problem and answers once.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageUser, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from scievals.agents import agent_spec, remember, run_step
from scievals.inputs import InputError
from scievals.models import PROBE_KEY, REPLY_KEY
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.extract import header_name
from scievals.scicode.prompts import single_turn_prompt
from scievals.scicode.solver import keep_whole, problems_of, solve_steps
from scievals.scicode.whole import last_step, whole_gold_code, whole_gold_reply, whole_prompt


def probe(problem: Problem, step: Step, code: str, earlier: list[str]) -> dict[str, str]:
    """What ``scievals/reference`` runs before it submits ``code``: the dependencies, the
    earlier code, ``code`` and a line saying the step's function is defined and callable."""
    name = header_name(step.function_header)
    program = "\n\n".join(
        [problem.dependencies, *earlier, code, f"print({name!r}, callable({name}))"]
    )
    return {"code": program, "expect": f"{name} True"}


@solver
def agent_solver(config: dict[str, Any] | None = None) -> Solver:
    """Every step (or, with ``whole_problem``, the whole problem) answered by the config's agent
    under its limits; ``config`` is the task's ``SciCodeConfig.record()``."""
    settings = SciCodeConfig.from_record(config)
    if settings.agent is None or settings.agent_limits is None:
        raise InputError("agent_solver needs a config with an agent (-T agent=react, ...)")
    spec = agent_spec(settings.agent)
    step_limits = settings.agent_limits
    problems = problems_of(settings)
    background = settings.provide_scientific_background

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problems[state.metadata["problem_id"]]

        async def answer(step: Step, prompt: str, check: dict[str, str] | None) -> ModelOutput:
            state.store.set(PROBE_KEY, check)
            agent_state, record = await run_step(
                spec, [ChatMessageUser(content=prompt)], step_limits, step.step_id
            )
            state.store.delete(PROBE_KEY)
            remember(state.store, record)
            state.messages = agent_state.messages
            return agent_state.output

        if settings.whole_problem:
            last = last_step(problem)
            gold = whole_gold_code(problem)
            supplied = [s.presupplied_code for s in problem.steps if s.presupplied_code]
            check = probe(problem, last, gold, supplied) if gold else None
            state.store.set(REPLY_KEY, whole_gold_reply(problem))
            prompt = whole_prompt(problem, background)
            state.output = await answer(last, prompt, check)
            state.store.delete(REPLY_KEY)
            keep_whole(state, problem, state.output.completion, settings.extraction)
            return state

        async def ask(step: Step, codes: dict[str, str]) -> ModelOutput:
            shown = problem.context(step, codes, settings.gold_previous)
            prompt = single_turn_prompt(problem, step, shown, background)
            earlier = [shown.get(s.step_id, "") for s in problem.earlier(step)]
            check = probe(problem, step, step.gold_code, earlier) if step.gold_code else None
            return await answer(step, prompt, check)

        await solve_steps(state, problem, settings.extraction, ask, supplied=lambda step: None)
        return state

    return solve
