"""SciBench with tools (``-T agent=react``): the model may compute with Python before answering.

The agent gets the setting's usual messages (system prompt, worked examples, the problem) and
tools in the sandbox (``scievals.agents``); its answer, the text it submits, is the reply the
faithful and robust scorers read, as they read a single call's. A limit that ends a problem
leaves it an empty reply (scored wrong); its record says which limit.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver

from scievals.agents import AgentLimits, agent_spec, remember, run_step
from scievals.models import PROBE_KEY, REPLY_KEY
from scievals.scibench.code_blocks import robust_code


def probe(reply: str | None, answer_number: str) -> dict[str, str] | None:
    """What ``scievals/reference`` runs before it submits: the small program of its reply,
    which must print the gold number."""
    code = robust_code(reply) if reply else None
    return {"code": code, "expect": answer_number.strip()} if code else None


@solver
def agent_solver(agent: str = "react", limits: dict[str, Any] | None = None) -> Solver:
    """One problem answered by ``agent`` under ``limits`` (``AgentLimits`` as recorded)."""
    spec = agent_spec(agent)
    step_limits = AgentLimits(**(limits or {}))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reply = state.store.get(REPLY_KEY)
        state.store.set(PROBE_KEY, probe(reply, state.metadata["answer_number"]))
        agent_state, record = await run_step(
            spec, state.messages, step_limits, str(state.sample_id)
        )
        state.store.delete(PROBE_KEY)
        remember(state.store, record)
        state.messages = agent_state.messages
        state.output = agent_state.output
        return state

    return solve
