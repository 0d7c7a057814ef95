"""Asking the model for each step of a problem, in order, under the chosen prompt protocol."""

from __future__ import annotations

from typing import Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from scievals.scicode.dataset import Problem
from scievals.scicode.extract import extract_code, original_extract
from scievals.scicode.prompts import chat_step_prompt, chat_system_prompt, single_turn_prompt

Protocol = Literal["single_turn", "chat"]
PreviousSteps = Literal["model", "gold"]
Extraction = Literal["inspect", "original"]
STORE_KEY = "scicode"


def extract(completion: str, function_header: str, extraction: Extraction) -> str:
    if extraction == "original":
        return original_extract(completion)
    return extract_code(completion, function_header)


@solver
def scicode_solver(
    problems: dict[str, Problem],
    background: bool = False,
    protocol: Protocol = "single_turn",
    previous_steps: PreviousSteps = "model",
    extraction: Extraction = "inspect",
) -> Solver:
    """One generation per scored step; pre-supplied steps get their official code instead.

    Single-turn (official): each prompt is built afresh and carries the code used for earlier
    steps (the model's own, or gold with ``previous_steps='gold'``). Chat (inspect_evals): one
    conversation per problem; pre-supplied code appears as an assistant turn.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = problems[state.metadata["problem_id"]]
        model = get_model()
        codes: dict[str, str] = {}
        completions: dict[str, str] = {}
        conversation: list[ChatMessage] = (
            [
                ChatMessageSystem(content=chat_system_prompt(problem, background)),
                ChatMessageUser(content=problem.problem_id),
            ]
            if protocol == "chat"
            else []
        )
        for step in problem.steps:
            if step.presupplied_code is not None:
                codes[step.step_id] = step.presupplied_code
                if protocol == "chat":
                    conversation += [
                        ChatMessageUser(content=chat_step_prompt(step, background)),
                        ChatMessageAssistant(content=f"```python\n{step.presupplied_code}\n```"),
                    ]
                continue
            if protocol == "chat":
                conversation.append(ChatMessageUser(content=chat_step_prompt(step, background)))
                messages = conversation
            else:
                shown = codes
                if previous_steps == "gold":
                    shown = {
                        s.step_id: s.gold_code or s.presupplied_code or "" for s in problem.steps
                    }
                messages = [
                    ChatMessageUser(content=single_turn_prompt(problem, step, shown, background))
                ]
            output = await model.generate(messages)
            completion = output.completion
            completions[step.step_id] = completion
            codes[step.step_id] = extract(completion, step.function_header, extraction)
            if protocol == "chat":
                conversation.append(output.message)
            state.output = output
        if protocol == "chat":
            state.messages = conversation
        else:
            state.messages = [*messages, state.output.message] if completions else state.messages
        state.store.set(STORE_KEY, {"completions": completions, "codes": codes})
        return state

    return solve
