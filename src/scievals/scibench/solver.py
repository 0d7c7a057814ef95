"""Solvers for the SciBench settings: one call, the two-stage chain of thought, and tool runs.

Model code never runs in our process: the tool solver sends it to the task's sandbox. The
faithful run reproduces the official ``exec`` (first fence, language tag and all, the harness's
imported modules in scope, whole stdout, "None" on any error); the robust run strips the tag.
"""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import SandboxEnvironment, sandbox

from scievals.scibench.code_blocks import official_code, robust_code
from scievals.scibench.prompts import zero_cot_stage2
from scievals.scibench.scorer import TOOL_STORE_KEY

# Names the official eval_tool.py had imported where it exec'd model code.
OFFICIAL_PREAMBLE = (
    "import os, sys, json, math, time, operator, argparse\n"
    "from io import StringIO\n"
    "try:\n    import numpy as np\nexcept ImportError:\n    pass\n"
)
EMPTY_RETRIES = 3


async def _generate(state: TaskState, generate: Generate) -> TaskState:
    """Generate, retrying empty replies a bounded number of times (the official code: unbounded)."""
    retries = 0
    state = await generate(state)
    while not state.output.completion.strip() and retries < EMPTY_RETRIES:
        retries += 1
        state.messages = state.messages[:-1]
        state = await generate(state)
    state.metadata["empty_retries"] = retries
    return state


@solver
def official_generate() -> Solver:
    """One call on the prepared messages (zero, zero_nosys, few, few_cot, tools)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await _generate(state, generate)

    return solve


@solver
def zero_cot() -> Solver:
    """Stage 1 "Let's think step by step.", then stage 2 with the stage-1 reply concatenated."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        images = [
            c
            for m in state.messages
            if m.role == "user" and not isinstance(m.content, str)
            for c in m.content
            if isinstance(c, ContentImage)
        ]
        state = await _generate(state, generate)
        stage1 = state.output.completion.strip()  # the official call_engine strips replies
        state.store.set("stage1_reply", stage1)
        system, user = zero_cot_stage2(state.metadata["prompt_problem"], stage1)
        content: str | list[Content] = (
            [ContentText(text=user.content), *images] if images else (user.content)
        )
        state.messages = [
            ChatMessageSystem(content=system.content),
            ChatMessageUser(content=content),
        ]
        return await _generate(state, generate)

    return solve


async def _run(
    code: str | None, timeout: int, box: SandboxEnvironment
) -> dict[str, str | int | None]:
    """Run one program in ``box``; stdout is None when it cannot run or fails."""
    if code is None:
        return {"stdout": None, "error": "no code block"}
    try:
        result = await box.exec(["python3", "-c", code], timeout=timeout)
    except TimeoutError:
        return {"stdout": None, "error": f"timeout after {timeout}s"}
    if not result.success:
        return {"stdout": None, "error": result.stderr[-2000:], "returncode": result.returncode}
    return {"stdout": result.stdout.strip(), "error": None}


@solver
def run_python(timeout: int = 30) -> Solver:
    """Execute the reply's code twice in the sandbox: the official way and the robust way."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set(TOOL_STORE_KEY, await python_runs(state.output.completion, timeout))
        return state

    return solve


async def python_runs(
    reply: str, timeout: int, box: SandboxEnvironment | None = None
) -> dict[str, dict[str, str | int | None]]:
    """The reply's code run the official way and the robust way, in ``box`` (default: the
    sample's sandbox), as the scorers read them (``--verify`` runs a log's replies again)."""
    box = box or sandbox()
    return {
        "faithful": await _run(OFFICIAL_PREAMBLE + official_code(reply), timeout, box),
        "robust": await _run(robust_code(reply), timeout, box),
    }


@solver
def run_wolfram(timeout: int = 30) -> Solver:
    """Evaluate the reply's first code block as ``N[...]`` with ``wolframscript`` in the sandbox."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reply = state.output.completion
        runs = {}
        for mode, code in (("faithful", official_code(reply)), ("robust", robust_code(reply))):
            if code is None:
                runs[mode] = {"stdout": None, "error": "no code block"}
                continue
            try:
                result = await sandbox().exec(
                    ["wolframscript", "-code", f"N[{code}]"], timeout=timeout
                )
                ok = result.success
                runs[mode] = {"stdout": result.stdout.strip() if ok else None, "error": None}
            except TimeoutError:
                runs[mode] = {"stdout": None, "error": f"timeout after {timeout}s"}
        state.store.set(TOOL_STORE_KEY, runs)
        return state

    return solve
