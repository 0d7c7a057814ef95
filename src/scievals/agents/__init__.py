"""Agentic protocols for both benchmarks: an Inspect agent answers each step, after running its
code in the sandbox with Inspect's tools; its answer is graded as a single-turn reply is.

``resolve`` names the agent, ``limits`` bounds each step (``step_limits`` enforces them),
``tools`` and ``environment`` say where its code runs (never where it is graded), ``step`` runs
one step and records it. The benchmarks import these names from here, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scievals.lazy import lazy_exports

if TYPE_CHECKING:
    from scievals.agents.environment import agent_sandbox_spec
    from scievals.agents.limits import (
        DEFAULT_MESSAGES,
        DEFAULT_TIME,
        DEFAULT_TOOL_CALLS,
        DEFAULT_TOOL_TIMEOUT,
        AgentLimits,
        agent_parameters,
    )
    from scievals.agents.resolve import agent_label, agent_spec
    from scievals.agents.step import AGENT_STORE_KEY, remember, run_step, summary, unanswered

_EXPORTS = {
    "AGENT_STORE_KEY": "step",
    "AgentLimits": "limits",
    "DEFAULT_MESSAGES": "limits",
    "DEFAULT_TIME": "limits",
    "DEFAULT_TOOL_CALLS": "limits",
    "DEFAULT_TOOL_TIMEOUT": "limits",
    "agent_label": "resolve",
    "agent_parameters": "limits",
    "agent_sandbox_spec": "environment",
    "agent_spec": "resolve",
    "remember": "step",
    "run_step": "step",
    "summary": "step",
    "unanswered": "step",
}
__all__ = [
    "AGENT_STORE_KEY",
    "AgentLimits",
    "DEFAULT_MESSAGES",
    "DEFAULT_TIME",
    "DEFAULT_TOOL_CALLS",
    "DEFAULT_TOOL_TIMEOUT",
    "agent_label",
    "agent_parameters",
    "agent_sandbox_spec",
    "agent_spec",
    "remember",
    "run_step",
    "summary",
    "unanswered",
]

lazy_exports(__name__, _EXPORTS)
