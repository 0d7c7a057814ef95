"""The limits of one agent step (a SciCode step, a SciBench problem), as a user sets them.

A plain setting, recorded in the log's protocol; ``step_limits`` turns it into the limit
objects Inspect enforces (so that reading a task's settings, as ``scievals grade`` does, loads
no Inspect). The time one tool call may take is the tool's own timeout.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from scievals.inputs import InputError
from scievals.prerequisite import prerequisite

if TYPE_CHECKING:
    from inspect_ai import Task

    from scievals.agents.step_limits import StepLimits

DEFAULT_MESSAGES = 50
DEFAULT_TOOL_CALLS = 25
DEFAULT_TOOL_TIMEOUT = 60
"""Seconds per tool call: HAL's limit per test program."""
DEFAULT_TIME = 900
"""Seconds per step, tool calls and model calls together."""


@dataclass(frozen=True)
class AgentLimits:
    """What one step may use; None is no limit. Recorded in the log's protocol."""

    messages: int | None = DEFAULT_MESSAGES
    tokens: int | None = None
    tool_calls: int | None = DEFAULT_TOOL_CALLS
    tool_timeout: int = DEFAULT_TOOL_TIMEOUT
    time: int | None = DEFAULT_TIME

    @classmethod
    def from_params(
        cls,
        *,
        message_limit: int | None = DEFAULT_MESSAGES,
        token_limit: int | None = None,
        tool_call_limit: int | None = DEFAULT_TOOL_CALLS,
        tool_timeout: int = DEFAULT_TOOL_TIMEOUT,
        time_limit: int | None = DEFAULT_TIME,
    ) -> AgentLimits:
        """The limits of the task parameters ``agent_<name>``; 0 means no limit, except for
        ``tool_timeout``, which every tool call needs."""
        given = {
            "agent_message_limit": message_limit,
            "agent_token_limit": token_limit,
            "agent_tool_call_limit": tool_call_limit,
            "agent_tool_timeout": tool_timeout,
            "agent_time_limit": time_limit,
        }
        for name, value in given.items():
            if value is None and name != "agent_tool_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{name} must be a whole number of 0 or more, not {value!r}")
        if not tool_timeout:
            raise InputError("agent_tool_timeout must be at least 1 second")
        return cls(
            messages=message_limit or None,
            tokens=token_limit or None,
            tool_calls=tool_call_limit or None,
            tool_timeout=tool_timeout,
            time=time_limit or None,
        )

    @classmethod
    def of_task(cls, params: Mapping[str, Any]) -> AgentLimits:
        """The limits of a task's arguments (its ``agent_<name>`` parameters, the defaults for
        those it lacks), as both benchmarks' tasks take them."""
        prefix = "agent_"
        return cls.from_params(
            **{
                name.removeprefix(prefix): value
                for name, value in params.items()
                if name.startswith(prefix) and name.removeprefix(prefix) in _PARAMETERS
            }
        )

    def open(self) -> StepLimits:
        """Fresh limit objects for one step."""
        from scievals.agents.step_limits import open_limits

        return open_limits(self.messages, self.tokens, self.time, self.tool_calls)

    def record(self) -> dict[str, Any]:
        """The protocol record's ``agent_limits`` (per step; time and tool timeout in seconds)."""
        return asdict(self)


_PARAMETERS = frozenset(inspect.signature(AgentLimits.from_params).parameters)
"""What ``from_params`` takes: the task parameters are these names after ``agent_``."""


def agent_parameters(factory: Callable[..., Task]) -> Callable[..., Task]:
    """Give a task factory the parameters ``agent_<name>`` of ``AgentLimits.from_params``,
    declared there once for every benchmark, in place of its own ``agent_limits``, which gets
    them as one checked ``AgentLimits``. A bad value, or an ``agent`` that names no agent, is
    the task's one-line prerequisite error before anything is built.

    ``agent_message_limit``, ``agent_token_limit``, ``agent_tool_call_limit``: messages, tokens
    and tool calls per step (0: no limit); ``agent_tool_timeout``: seconds per tool call;
    ``agent_time_limit``: seconds per step (0: no limit)."""
    own = inspect.signature(factory)
    limits = [
        parameter.replace(name=f"agent_{name}")
        for name, parameter in inspect.signature(AgentLimits.from_params).parameters.items()
    ]

    @functools.wraps(factory)
    def build(*args: Any, **params: Any) -> Task:
        given = {name: params.pop(name) for name in _TASK_PARAMETERS & params.keys()}
        with prerequisite():
            agent_limits = AgentLimits.of_task(given)
            if params.get("agent"):
                from scievals.agents.resolve import agent_spec

                agent_spec(params["agent"])
        return factory(*args, agent_limits=agent_limits, **params)

    kept = [p for p in own.parameters.values() if p.name != "agent_limits"]
    build.__signature__ = own.replace(parameters=[*kept, *limits])  # type: ignore[attr-defined]
    return build


_TASK_PARAMETERS = frozenset(f"agent_{name}" for name in _PARAMETERS)
