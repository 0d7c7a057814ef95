"""The limits of one agent step (a SciCode step, a SciBench problem), as a user sets them.

Messages, tokens and time are Inspect's own limits (``message_limit``, ``token_limit``,
``time_limit``), applied around each step by ``inspect_ai.agent.run``, so a step ends as Inspect
ends a sample: with a ``LimitExceededError`` naming the limit. Inspect has no limit on tool
calls, so ``ToolCallLimit`` is one of its ``Limit`` objects: the tools we give an agent count
their calls against it and refuse the ones past it, and our react agent ends the step at its
next turn. The time one tool call may take is the tool's own timeout.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any

from inspect_ai.util import Limit, LimitExceededError, message_limit, time_limit, token_limit

from scievals.inputs import InputError

DEFAULT_MESSAGES = 50
DEFAULT_TOOL_CALLS = 25
DEFAULT_TOOL_TIMEOUT = 60
"""Seconds per tool call: HAL's limit per test program."""
DEFAULT_TIME = 900
"""Seconds per step, tool calls and model calls together."""


class ToolCallLimit(Limit):
    """At most ``limit`` tool calls in a step (None: no limit); Inspect's ``Limit`` protocol."""

    def __init__(self, limit: int | None) -> None:
        super().__init__()
        self._limit = limit
        self._usage = 0

    def __enter__(self) -> ToolCallLimit:
        self._check_reuse()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        return None

    @property
    def limit(self) -> int | None:
        return self._limit

    @property
    def usage(self) -> float:
        return self._usage

    def take(self) -> bool:
        """Count one call; False when it is past the limit (the tool must not run it)."""
        self._usage += 1
        return self._limit is None or self._usage <= self._limit

    def check(self) -> None:
        """Raise Inspect's ``LimitExceededError`` once a call past the limit was asked for."""
        if self._limit is not None and self._usage > self._limit:
            raise LimitExceededError(
                "custom",
                value=self._usage,
                limit=self._limit,
                message=f"Tool call limit exceeded. count: {self._usage}; limit: {self._limit}",
                source=self,
            )


@dataclass(frozen=True)
class StepLimits:
    """The limit objects of one step (each Inspect limit may be entered once)."""

    messages: Limit
    tokens: Limit
    time: Limit
    tool_calls: ToolCallLimit

    @property
    def all(self) -> list[Limit]:
        return [self.messages, self.tokens, self.time, self.tool_calls]


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

    def open(self) -> StepLimits:
        """Fresh limit objects for one step."""
        return StepLimits(
            messages=message_limit(self.messages),
            tokens=token_limit(self.tokens),
            time=time_limit(self.time),
            tool_calls=ToolCallLimit(self.tool_calls),
        )

    def record(self) -> dict[str, Any]:
        """The protocol record's ``agent_limits`` (per step; time and tool timeout in seconds)."""
        return asdict(self)
