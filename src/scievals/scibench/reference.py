"""The reference reply to a SciBench problem: its gold, boxed, in the unit convention it states.

It checks the harness end to end: a model that always answers with the gold must score every
problem under the robust scorer, and exactly what the official code gives under the faithful one
(576/580 on main: the four diff golds that ``float()`` cannot read). The convention follows the unit
the prompt states: when the official code strips the 10^k from the unit (rescaled items) the
answer is given at full magnitude as "m \\times 10^{k}"; otherwise it is the stored number.

The task leaves this reply in each sample's store (``reference_reply``), where the
``scievals/reference`` model reads it: the model layer knows nothing of SciBench.
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

from scievals.models import REPLY_KEY
from scievals.scibench.units import official_unit


def gold_in_convention(answer_number: str, unit: str) -> str:
    """The gold as the prompt asks for it (full magnitude on rescaled items, else as stored)."""
    shown = official_unit(unit)
    number = answer_number.strip()
    if shown.rescaled and shown.exponent is not None:
        return f"{number} \\times 10^{{{shown.exponent}}}"
    return number


def reply_for(answer_number: str, unit: str) -> str:
    """A reply that states the gold both boxed and as a tiny program (for the tool settings)."""
    shown = official_unit(unit)
    number = answer_number.strip()
    scaled = shown.rescaled and shown.exponent is not None
    value = f"{number}e{shown.exponent}" if scaled else number
    return (
        f"Reference solution.\n```\nprint({value!r})\n```\n"
        f"The answer is therefore \\boxed{{{gold_in_convention(answer_number, unit)}}}."
    )


@solver
def reference_reply(unit_shown: bool = True) -> Solver:
    """Leave the sample's reference reply where ``scievals/reference`` answers from
    (``unit_shown=False``: the prompt states no unit, so the gold is given as stored)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        unit = meta["unit"] if unit_shown else ""
        state.store.set(REPLY_KEY, reply_for(meta["answer_number"], unit))
        return state

    return solve
