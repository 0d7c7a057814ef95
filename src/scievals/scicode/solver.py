"""Asking the model for each step of a problem, in order: single-turn (official) or chat; or
for the whole problem at once (``whole_problem``, HAL's ``scicode_hard``).

Both step solvers walk the steps the same way (pre-supplied steps get their official code, every
other step one generation whose code is extracted and kept for the next steps and the scorer);
they differ only in the messages a step is asked with. The agentic solvers (``agent.py``) walk
them the same way too, an agent answering where these call the model once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from scievals.models import REPLY_KEY
from scievals.scicode.config import Extraction, SciCodeConfig
from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.extract import extract_code, original_extract
from scievals.scicode.prompts import (
    chat_step_prompt,
    chat_system_prompt,
    chat_templates,
    single_turn_prompt,
)
from scievals.scicode.reference import gold_reply
from scievals.scicode.whole import last_step, whole_gold_reply, whole_prompt

STORE_KEY = "scicode"
"""``state.store[STORE_KEY]``: ``{"completions": {step: raw reply}, "codes": {step: code}}``."""

Ask = Callable[[Step, dict[str, str]], Awaitable[ModelOutput]]


def extract(completion: str, function_header: str, extraction: Extraction) -> str:
    if extraction == "original":
        return original_extract(completion)
    return extract_code(completion, function_header)


async def solve_steps(
    state: TaskState,
    problem: Problem,
    extraction: Extraction,
    ask: Ask,
    supplied: Callable[[Step], None],
) -> None:
    """Every step in order: ``supplied`` for pre-supplied ones, ``ask`` for the others."""
    codes: dict[str, str] = {}
    completions: dict[str, str] = {}
    for step in problem.steps:
        if step.presupplied_code is not None:
            codes[step.step_id] = step.presupplied_code
            supplied(step)
            continue
        state.store.set(REPLY_KEY, gold_reply(step))  # what scievals/reference answers
        output = await ask(step, codes)
        state.store.delete(REPLY_KEY)
        completions[step.step_id] = output.completion
        codes[step.step_id] = extract(output.completion, step.function_header, extraction)
        state.output = output
        # kept after every step: a sample limit that ends the solver leaves the answers so far
        state.store.set(STORE_KEY, {"completions": dict(completions), "codes": dict(codes)})
    state.store.set(STORE_KEY, {"completions": completions, "codes": codes})


def problems_of(config: SciCodeConfig) -> dict[str, Problem]:
    """The config's problems by id, as a solver looks a sample's up."""
    return {p.problem_id: p for p in config.problems()}


@solver
def single_turn_solver(config: dict[str, Any] | None = None) -> Solver:
    """The official protocol: each step's prompt is built afresh and carries the code used for
    the earlier steps (the model's own, or gold with ``previous_steps='gold'``). ``config`` is
    the task's ``SciCodeConfig.record()``."""
    settings = SciCodeConfig.from_record(config)
    problems = problems_of(settings)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problems[state.metadata["problem_id"]]
        model = get_model()
        asked: list[ChatMessage] = []

        async def ask(step: Step, codes: dict[str, str]) -> ModelOutput:
            shown = problem.context(step, codes, settings.gold_previous)
            prompt = single_turn_prompt(
                problem, step, shown, settings.provide_scientific_background
            )
            asked[:] = [ChatMessageUser(content=prompt)]
            return await model.generate(asked)

        await solve_steps(state, problem, settings.extraction, ask, supplied=lambda step: None)
        if asked:
            state.messages = [*asked, state.output.message]
        return state

    return solve


@solver
def chat_solver(config: dict[str, Any] | None = None) -> Solver:
    """inspect_evals' protocol: one conversation per problem, earlier steps as its history;
    pre-supplied code appears as an assistant turn. ``config``: as ``single_turn_solver``'s."""
    settings = SciCodeConfig.from_record(config)
    problems = problems_of(settings)
    background = settings.provide_scientific_background
    chat_templates()  # fetched and verified now, not in the middle of a run

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problems[state.metadata["problem_id"]]
        model = get_model()
        conversation: list[ChatMessage] = [
            ChatMessageSystem(content=chat_system_prompt(problem, background)),
            ChatMessageUser(content=problem.problem_id),
        ]

        def user(step: Step) -> ChatMessageUser:
            return ChatMessageUser(content=chat_step_prompt(step, background))

        async def ask(step: Step, codes: dict[str, str]) -> ModelOutput:
            conversation.append(user(step))
            output = await model.generate(conversation)
            conversation.append(output.message)
            return output

        def supplied(step: Step) -> None:
            code = f"```python\n{step.presupplied_code}\n```"
            conversation.extend([user(step), ChatMessageAssistant(content=code)])

        await solve_steps(state, problem, settings.extraction, ask, supplied)
        state.messages = conversation
        return state

    return solve


def keep_whole(state: TaskState, problem: Problem, completion: str, extraction: Extraction) -> None:
    """Keep the one answer of a whole problem, as the scorer reads it: under its last step."""
    step = last_step(problem)
    code = extract(completion, step.function_header, extraction)
    state.store.set(
        STORE_KEY, {"completions": {step.step_id: completion}, "codes": {step.step_id: code}}
    )


@solver
def whole_problem_solver(config: dict[str, Any] | None = None) -> Solver:
    """HAL's ``scicode_hard`` zero-shot: one call with every step, its answer holding every
    function. ``config``: as ``single_turn_solver``'s."""
    settings = SciCodeConfig.from_record(config)
    problems = problems_of(settings)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problems[state.metadata["problem_id"]]
        asked: list[ChatMessage] = [
            ChatMessageUser(content=whole_prompt(problem, settings.provide_scientific_background))
        ]
        state.store.set(REPLY_KEY, whole_gold_reply(problem))
        state.output = await get_model().generate(asked)
        state.store.delete(REPLY_KEY)
        keep_whole(state, problem, state.output.completion, settings.extraction)
        state.messages = [*asked, state.output.message]
        return state

    return solve
