"""The limit objects that bound one agent step, as Inspect enforces them.

Messages, tokens and time are Inspect's own limits (``message_limit``, ``token_limit``,
``time_limit``), applied around each step by ``inspect_ai.agent.run``, so a step ends as Inspect
ends a sample: with a ``LimitExceededError`` naming the limit. Inspect has no limit on tool
calls, so ``ToolCallLimit`` is one of its ``Limit`` objects: the tools we give an agent count
their calls against it and refuse the ones past it, and our react agent ends the step at its
next turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType

from inspect_ai.util import Limit, LimitExceededError, message_limit, time_limit, token_limit


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


def open_limits(
    messages: int | None, tokens: int | None, time: int | None, tool_calls: int | None
) -> StepLimits:
    """Fresh limit objects for one step (None: no limit)."""
    return StepLimits(
        messages=message_limit(messages),
        tokens=token_limit(tokens),
        time=time_limit(time),
        tool_calls=ToolCallLimit(tool_calls),
    )
