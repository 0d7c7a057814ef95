"""The tools an agent gets: Inspect's ``python`` and ``bash``, in the agent's own environment.

They run in the sample's sandbox (``environment.agent_sandbox``), in the first scoring
runtime's Python, under the sandbox's limits and without network; each call has the step's tool
timeout and counts against its tool-call limit (a call past it is refused, not run).

Each is Inspect's tool as the model sees it (name, description, parameters, viewer, output),
run our way for two reasons measured here:
- ``python`` runs ``python3 -c CODE`` rather than ``bash --login -c "python3 -"``: our sandbox
  then runs it in a fork of its warm interpreter, numpy and scipy already imported (0.1-0.2 s a
  call against 0.5-0.9 s); elsewhere it is the same program. Longer code goes through stdin.
- Calls take slots of their own (one per CPU) instead of the sandbox's, which the step programs
  of every problem fill: queued behind grading, the dev split's agentic eval took 225 s against
  120 s single-turn (2026-12-02), a step's tool call waiting up to 111 s for a slot.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from inspect_ai.tool import Tool, ToolDef, ToolError, bash, python
from inspect_ai.util import ExecResult
from inspect_ai.util import sandbox as sandbox_env

from scievals.agents.limits import AgentLimits
from scievals.agents.step_limits import ToolCallLimit

ARGUMENT_BYTES = 100_000
"""Longer code goes through stdin: Linux caps one argument of a program at 128 KiB."""

_slots: dict[int, anyio.CapacityLimiter] = {}


def _slot() -> anyio.CapacityLimiter:
    """The agents' own execution slots, one set per event loop (anyio limiters belong to one)."""
    key = id(asyncio.get_running_loop())
    if key not in _slots:
        _slots[key] = anyio.CapacityLimiter(os.cpu_count() or 1)
    return _slots[key]


async def _run(sandbox: str | None, cmd: list[str], timeout: int, input: str | None = None) -> str:
    """One call, output as Inspect's tools give it (stderr, then stdout)."""
    async with _slot():
        result: ExecResult[str] = await sandbox_env(sandbox).exec(
            cmd, input=input, timeout=timeout, concurrency=False
        )
    return (f"{result.stderr}\n" if result.stderr else "") + result.stdout


def _as(original: Tool, execute: Callable[..., Awaitable[Any]]) -> Tool:
    """``execute`` under ``original``'s name, description, parameters and viewer."""
    tdef = ToolDef(original)
    return ToolDef(
        execute,
        name=tdef.name,
        description=tdef.description,
        parameters=tdef.parameters,
        parallel=tdef.parallel,
        viewer=tdef.viewer,
    ).as_tool()


def counted(tool: Tool, calls: ToolCallLimit) -> Tool:
    """``tool``, each call counted against ``calls``; a call past the limit is refused."""
    inner = ToolDef(tool).tool

    async def execute(**arguments: Any) -> Any:
        if not calls.take():
            raise ToolError(f"tool call limit of {calls.limit} reached: this call was not run")
        return await inner(**arguments)

    return _as(tool, execute)


def python_tool(timeout: int, sandbox: str | None) -> Tool:
    """Inspect's ``python``, each call one ``python3 -c CODE`` in ``sandbox``."""

    async def execute(code: str) -> str:
        if len(code.encode()) > ARGUMENT_BYTES:
            return await _run(sandbox, ["bash", "--login", "-c", "python3 -"], timeout, code)
        return await _run(sandbox, ["python3", "-c", code], timeout)

    return _as(python(timeout=timeout, sandbox=sandbox), execute)


def bash_tool(timeout: int, sandbox: str | None) -> Tool:
    """Inspect's ``bash``, each call one ``bash --login -c COMMAND`` in ``sandbox``."""

    async def execute(command: str) -> str:
        return await _run(sandbox, ["bash", "--login", "-c", command], timeout)

    return _as(bash(timeout=timeout, sandbox=sandbox), execute)


def sandbox_tools(limits: AgentLimits, calls: ToolCallLimit, sandbox: str | None) -> list[Tool]:
    """Python and bash in the environment named ``sandbox`` (None: the sample's default)."""
    timeout = limits.tool_timeout
    return [
        counted(python_tool(timeout, sandbox), calls),
        counted(bash_tool(timeout, sandbox), calls),
    ]
