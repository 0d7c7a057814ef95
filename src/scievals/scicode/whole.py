"""The whole-problem setting (``prompt_protocol=whole_problem``; HAL's ``scicode_hard``).

One prompt shows every step (descriptions, headers, pre-supplied code), the model answers once
with every function, and the problem is judged as HAL judges it: by the tests of its last step.
Each step is also graded on the same answer (its own tests, the answer standing in for its
code, pre-supplied code before it as usual) and reported in the score metadata. The value holds
the last step only, so both headline metrics are HAL's accuracy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.scorer import Score

from scievals.scicode.data.dataset import Problem, Step
from scievals.scicode.verdict import StepVerdict

WHOLE_TEMPLATE = """PROBLEM DESCRIPTION:
You will be provided with a scientific research problem in steps, each with the header of the \
function that implements it. Your task is to generate the disciplinary knowledge necessary for \
solving the problem and then develop a Python program that implements every step, the last one \
building on the earlier ones.

PROBLEM STEPS AND FUNCTION HEADERS:
{steps}

DEPENDENCIES:
Use only the following dependencies in your solution. Do not include these dependencies at the \
beginning of your code.
{dependencies}

RESPONSE GUIDELINES:
Write the complete and executable Python program for all steps in a single block: a function \
for each step, each adhering closely to its function header. Code given for a step is already \
part of the program: do not repeat it. DO NOT generate EXAMPLE USAGE OR TEST CODE in your \
response. Please make sure your response python code in format of ```python```."""


def whole_prompt(problem: Problem, background: bool) -> str:
    """The one prompt: every step in order; a pre-supplied step shows its code instead of a
    header to implement."""
    parts: list[str] = []
    for step in problem.steps:
        text = step.description + ("\n" + step.background if background else "")
        if step.presupplied_code is not None:
            parts.append(f"{text}\n\nThis step's code is given:\n{step.presupplied_code}")
        else:
            parts.append(f"{text}\n\n{step.function_header}\n\n{step.return_line}")
    return WHOLE_TEMPLATE.format(
        steps="\n\n------\n\n".join(parts), dependencies=problem.dependencies
    )


def last_step(problem: Problem) -> Step:
    """The step whose tests judge the problem."""
    return problem.scored_steps[-1]


def whole_gold_code(problem: Problem) -> str | None:
    """Every asked step's gold code, in order; None where a step has no gold (test)."""
    golds = [s.gold_code for s in problem.scored_steps]
    return "\n\n".join(golds) if all(golds) else None  # type: ignore[arg-type]


def whole_gold_reply(problem: Problem) -> str | None:
    """What ``scievals/reference`` answers to the whole problem."""
    code = whole_gold_code(problem)
    if code is None:
        return None
    return f"Here is an implementation of every step.\n\n```python\n{code}\n```\n"


def codes_for(problem: Problem, step: Step, answer: str) -> dict[str, str]:
    """The code ``step`` is graded with: the answer as its own, pre-supplied code as given, no
    other step's code (the answer holds it)."""
    codes = {s.step_id: s.presupplied_code or "" for s in problem.steps}
    codes[step.step_id] = answer
    return codes


async def whole_verdicts(
    grade: Callable[..., Awaitable[Score]], problem: Problem, answer: str, stopped: str | None
) -> list[StepVerdict]:
    """Every scored step graded on the one answer, concurrently (``grade(codes=..., only=...)``
    is ``scorer.score_problem`` with the rest bound). ``stopped`` is why the answer never came
    (an agent's limit): then no step is run and each fails with it."""
    steps = problem.scored_steps
    if stopped is not None:
        return [StepVerdict(s.step_id, False, "limit", stopped) for s in steps]
    scores = await asyncio.gather(
        *[grade(codes=codes_for(problem, s, answer), only={s.step_id}) for s in steps]
    )
    return [StepVerdict(**score.metadata["steps"][0]) for score in scores if score.metadata]


def whole_score(score: Score, problem: Problem) -> Score:
    """``score`` of every step, judged as HAL judges the problem: its value holds the last
    step's verdict only; the metadata keeps every step's and says which one counted."""
    value = score.value if isinstance(score.value, dict) else {}
    last = last_step(problem).step_id
    passed = int(sum(value.values()))
    metadata: dict[str, Any] = dict(score.metadata or {})
    metadata["whole_problem"] = {"graded_step": last, "steps_passed": passed, "steps": len(value)}
    return Score(
        value={last: value[last]},
        answer=f"last step {last}: {'pass' if value[last] else 'FAIL'}; {passed}/{len(value)} steps",
        explanation=score.explanation,
        metadata=metadata,
    )
