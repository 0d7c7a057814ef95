"""The tools an agent gets: Inspect's ``python`` and ``bash``, in the agent's own environment.

They run in the sample's sandbox (``environment.agent_sandbox``), in the first scoring
runtime's Python, under the sandbox's limits and without network; each call has the step's tool
timeout and counts against its tool-call limit (a call past it is refused, not run).

``python`` is Inspect's tool as the model sees it (name, description, parameters, output), run
as ``python3 -c CODE`` rather than ``bash --login -c "python3 -"``: our sandbox then runs it in
a fork of its warm interpreter, numpy and scipy already imported (0.1-0.2 s a call here against
0.5-0.9 s); elsewhere it is the same program. Code too long for one argument goes Inspect's way.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError, bash, python
from inspect_ai.util import sandbox as sandbox_env

from scievals.agents.limits import AgentLimits, ToolCallLimit

ARGUMENT_BYTES = 100_000
"""Longer code goes through stdin: Linux caps one argument of a program at 128 KiB."""


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


def warm_python(timeout: int, sandbox: str | None) -> Tool:
    """Inspect's ``python`` tool, each call one ``python3 -c CODE`` in ``sandbox``."""
    original = ToolDef(python(timeout=timeout, sandbox=sandbox))

    async def execute(code: str) -> str:
        if len(code.encode()) > ARGUMENT_BYTES:
            return str(await original.tool(code=code))
        result = await sandbox_env(sandbox).exec(["python3", "-c", code], timeout=timeout)
        return (f"{result.stderr}\n" if result.stderr else "") + result.stdout

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
        counted(warm_python(timeout, sandbox), calls),
        counted(bash(timeout=timeout, sandbox=sandbox), calls),
    ]
