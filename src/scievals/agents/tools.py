"""The tools an agent gets: Inspect's ``python`` and ``bash``, in the agent's own environment.

They run in the sample's sandbox (``environment.agent_sandbox``), in the first scoring
runtime's Python, under the sandbox's limits and without network; each call has the step's tool
timeout and counts against its tool-call limit (a call past it is refused, not run).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError, bash, python

from scievals.agents.limits import AgentLimits, ToolCallLimit


def counted(tool: Tool, calls: ToolCallLimit) -> Tool:
    """``tool``, each call counted against ``calls``; a call past the limit is refused."""
    original = ToolDef(tool)

    async def execute(**arguments: Any) -> Any:
        if not calls.take():
            raise ToolError(f"tool call limit of {calls.limit} reached: this call was not run")
        return await original.tool(**arguments)

    return ToolDef(
        execute,
        name=original.name,
        description=original.description,
        parameters=original.parameters,
        parallel=original.parallel,
        viewer=original.viewer,
    ).as_tool()


def sandbox_tools(limits: AgentLimits, calls: ToolCallLimit, sandbox: str | None) -> list[Tool]:
    """Python and bash in the environment named ``sandbox`` (None: the sample's default)."""
    timeout = limits.tool_timeout
    return [
        counted(python(timeout=timeout, sandbox=sandbox), calls),
        counted(bash(timeout=timeout, sandbox=sandbox), calls),
    ]
