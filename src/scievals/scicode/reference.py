"""Gold answers for the reference model: a dev step's gold code, wrapped as a model would."""

from __future__ import annotations

from functools import cache

from scievals.scicode.dataset import Step, load_problems


@cache
def _dev_steps() -> tuple[Step, ...]:
    return tuple(s for p in load_problems("dev") for s in p.steps if s.gold_code)


def answer(prompt_text: str) -> str | None:
    """Gold code for the step this prompt asks for, or None if it asks for no dev step.

    Earlier steps' code (and so their headers) can appear in a prompt too; the step asked for
    is the one whose header appears last.
    """
    best: tuple[int, Step] | None = None
    for step in _dev_steps():
        position = prompt_text.rfind(step.function_header.strip())
        if position >= 0 and (best is None or position > best[0]):
            best = (position, step)
    if best is None:
        return None
    step = best[1]
    return (
        f"Here is an implementation of step {step.step_id}.\n\n```python\n{step.gold_code}\n```\n"
    )
