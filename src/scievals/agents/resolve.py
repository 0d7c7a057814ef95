"""The task parameter ``agent``: which Inspect agent answers each step.

``react`` is Inspect's ``react()`` with our sandbox tools and its ``submit()`` tool, the
submission being the answer. Any other value is an agent Inspect can run: a registered ``@agent``
(``pkg/name`` from an installed package, or a name registered by code already imported) or
``FILE.py@NAME`` (a module defining ``NAME``, a function returning an ``Agent``: an ``@agent``,
a ``react()`` with other tools, or ``bridge()`` of an agent from another framework). A factory
with a ``tools`` parameter receives our sandbox tools; its output is its answer.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.agent import Agent, AgentState, AgentSubmit, is_agent, react
from inspect_ai.tool import Tool

from scievals.agents.step_limits import ToolCallLimit
from scievals.inputs import InputError

REACT = "react"


@dataclass(frozen=True)
class AgentSpec:
    """An agent named by the ``agent`` parameter, built afresh for every step."""

    name: str
    factory: Callable[..., Agent] | None
    """None for our ``react``."""

    def build(self, tools: list[Tool], calls: ToolCallLimit) -> Agent:
        if self.factory is None:
            return _react(tools, calls)
        takes_tools = "tools" in inspect.signature(self.factory).parameters
        agent = self.factory(tools=tools) if takes_tools else self.factory()
        if not is_agent(agent):
            raise InputError(f"agent {self.name} did not return an Inspect agent")
        return agent


def _react(tools: list[Tool], calls: ToolCallLimit) -> Agent:
    """Inspect's react(): the submitted answer is the whole completion, kept in the messages
    so that the log shows it; a tool call past the limit ends the step at the next turn."""

    async def on_continue(state: AgentState) -> bool:
        calls.check()
        return True

    return react(
        tools=tools,
        submit=AgentSubmit(answer_only=True, keep_in_messages=True),
        on_continue=on_continue,
    )


def agent_label(name: str | None) -> str | None:
    """The protocol record's ``agent``: what answers each step, with which tools."""
    if name is None:
        return None
    return "react: python, bash, submit" if name == REACT else name


def agent_spec(name: str) -> AgentSpec:
    """The agent ``name`` names; an ``InputError`` saying what it may be when none."""
    if name == REACT:
        return AgentSpec(REACT, None)
    file, at, attribute = name.partition("@")
    if at and file.endswith(".py"):
        return AgentSpec(name, _from_file(Path(file), attribute))
    from inspect_ai._util.registry import (  # inspect-evals-lint: ignore[IECQ001] -- no public lookup of an agent by name exists; it is what --solver uses
        registry_lookup,
    )

    factory = registry_lookup("agent", name)
    if factory is None:
        raise InputError(
            f"agent {name!r} is neither react, a registered Inspect @agent, nor FILE.py@NAME"
        )
    return AgentSpec(name, factory)  # type: ignore[arg-type]


def _from_file(path: Path, attribute: str) -> Callable[..., Agent]:
    if not path.is_file():
        raise InputError(f"agent file {path} not found")
    module_name = f"scievals_agent_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"agent file {path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise InputError(f"agent file {path} has no function {attribute!r}")
    return factory
