"""One agent step: the agent runs on the step's usual prompt under the step's limits, and what
it used is recorded.

A step ends when the agent answers (for react: ``submit()``) or when a limit ends it; then the
step has no answer and fails with Inspect's message for that limit, and the run goes on. The
records go to the sample's store (``AGENT_STORE_KEY``, in the log) and the scorers copy them
into the score metadata (``summary``) for the report.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from inspect_ai.agent import AgentState, run
from inspect_ai.model import ChatMessage, ChatMessageTool, ModelOutput, get_model
from inspect_ai.util import LimitExceededError, Store

from scievals.agents.environment import agent_sandbox
from scievals.agents.limits import AgentLimits
from scievals.agents.resolve import AgentSpec
from scievals.agents.step_limits import StepLimits
from scievals.agents.tools import sandbox_tools

AGENT_STORE_KEY = "scievals:agent"
"""``state.store[AGENT_STORE_KEY]``: ``{step: StepRecord.as_dict()}`` in the order run."""
SUBMIT = "submit"


@dataclass
class StepRecord:
    """What one step of an agent used and how it ended."""

    step: str
    answered: bool
    """The agent gave an answer (react: it submitted); False when a limit ended the step."""
    limit: str | None = None
    """The limit that ended the step: ``message``, ``token``, ``time`` or ``tool_calls``."""
    reason: str | None = None
    """Inspect's message for that limit."""
    tool_calls: int = 0
    """Calls of tools other than submit (refused ones included)."""
    tool_errors: dict[str, int] = field(default_factory=dict)
    """Tool calls that failed, by Inspect's error type (``timeout``, ``limit``, ...)."""
    tokens: int = 0
    messages: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _limit_name(error: LimitExceededError, opened: StepLimits) -> str:
    return "tool_calls" if error.source is opened.tool_calls else error.type


def _record(
    step: str, state: AgentState, error: LimitExceededError | None, opened: StepLimits
) -> StepRecord:
    tools = [m for m in state.messages if isinstance(m, ChatMessageTool) and m.function != SUBMIT]
    return StepRecord(
        step=step,
        answered=error is None,
        limit=None if error is None else _limit_name(error, opened),
        reason=None if error is None else error.message,
        tool_calls=len(tools),
        tool_errors=dict(Counter(m.error.type for m in tools if m.error is not None)),
        tokens=int(opened.tokens.usage),
        messages=len(state.messages),
    )


async def run_step(
    spec: AgentSpec, messages: list[ChatMessage], limits: AgentLimits, step: str
) -> tuple[AgentState, StepRecord]:
    """Run the agent on ``messages``; a step a limit ended gets an empty answer."""
    opened = limits.open()
    tools = sandbox_tools(limits, opened.tool_calls, agent_sandbox())
    started = time.monotonic()
    state, error = await run(
        spec.build(tools, opened.tool_calls), messages, limits=opened.all, name=f"agent {step}"
    )
    record = _record(step, state, error, opened)
    record.seconds = round(time.monotonic() - started, 3)
    if error is not None:
        active = get_model()  # inspect-evals-lint: ignore[get_model_location] -- the solver's own
        state.output = ModelOutput.from_content(str(active), "")
    return state, record


def remember(store: Store, record: StepRecord) -> None:
    """Add a step's record to the sample's store as soon as the step ends."""
    store.set(AGENT_STORE_KEY, {**store.get(AGENT_STORE_KEY, {}), record.step: record.as_dict()})


def unanswered(store: Store) -> dict[str, str]:
    """Step -> why it has no answer, for the steps a limit ended (none in a run without agent)."""
    records = store.get(AGENT_STORE_KEY, {})
    return {
        step: f"the agent's step ended without an answer: {r['reason']}"
        for step, r in records.items()
        if r["limit"] is not None
    }


def summary(records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A sample's agent figures for its score metadata: totals, the share of steps a limit
    ended, and each step's record."""
    steps = list(records.values())
    ended = sum(1 for r in steps if r["limit"] is not None)
    return {
        "steps": len(steps),
        "ended_by_limit": ended,
        "limit_share": ended / len(steps) if steps else 0.0,
        "limits": dict(Counter(r["limit"] for r in steps if r["limit"] is not None)),
        "tool_calls": sum(r["tool_calls"] for r in steps),
        "tokens": sum(r["tokens"] for r in steps),
        "seconds": round(sum(r["seconds"] for r in steps), 3),
        "by_step": steps,
    }
