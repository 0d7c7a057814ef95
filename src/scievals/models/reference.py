"""``scievals/reference``: answers every benchmark item with its gold answer.

It validates the whole pipeline (prompts, extraction, sandbox, scoring) end to end: a correct
harness scores it 15/15 on SciCode dev and 580/580 on SciBench with the robust scorer. A task
that knows its gold leaves the reply in the sample's store under ``REPLY_KEY`` before it calls
the model; the model reads it there through Inspect's API and knows nothing of any benchmark.

Offered tools and a ``submit`` tool (an agentic run), it acts as an agent would: it runs the
program the task left under ``PROBE_KEY`` through the ``python`` tool (or ``bash``), checks
that its output holds the expected text, and then submits the reply, saying whether the check
held. So the agentic path is validated with real tool calls whose outputs the log shows.
"""

from __future__ import annotations

import uuid
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

REPLY_KEY = "scievals:reference_reply"
"""Sample store key of the reply ``scievals/reference`` gives (set by the task's solver)."""
PROBE_KEY = "scievals:reference_probe"
"""Sample store key of ``{"code": program, "expect": text its output must hold}``: what
``scievals/reference`` runs through a tool before it submits (set by an agentic solver)."""
CALL_PREFIX = "reference_probe_"
RUNNERS = ("python", "bash")
SUBMIT = "submit"


def _first_parameter(tool: ToolInfo) -> str:
    return next(iter(tool.parameters.properties))


def _run_call(tool: ToolInfo, code: str) -> dict[str, str]:
    """The arguments that run ``code``: as the python tool's code, or piped to bash's python3."""
    if tool.name == "bash":
        return {_first_parameter(tool): f"python3 - <<'SCIEVALS_EOF'\n{code}\nSCIEVALS_EOF"}
    return {_first_parameter(tool): code}


def agent_turn(
    model: str, input: list[ChatMessage], tools: list[ToolInfo], reply: str
) -> ModelOutput | None:
    """The reference's next move when it may call tools: run the probe once, then submit the
    reply. None when no ``submit`` tool is offered (then it replies as without tools)."""
    by_name = {tool.name: tool for tool in tools}
    if SUBMIT not in by_name:
        return None
    probe = store().get(PROBE_KEY)
    runner = next((by_name[name] for name in RUNNERS if name in by_name), None)
    ran = [
        m
        for m in input
        if isinstance(m, ChatMessageTool)
        and m.tool_call_id
        and m.tool_call_id.startswith(CALL_PREFIX)
    ]
    if probe is not None and runner is not None and not ran:
        return ModelOutput.for_tool_call(
            model,
            runner.name,
            _run_call(runner, probe["code"]),
            tool_call_id=f"{CALL_PREFIX}{uuid.uuid4().hex[:12]}",
            content="I run the code first to check that it works.",
        )
    note = "I submit the reference answer."
    if ran and probe is not None:
        result = ran[-1]
        seen = result.error.message if result.error else result.text
        if result.error is None and probe["expect"] in seen:
            note = "The check printed what I expected, so I submit."
        else:
            note = f"The check did not print {probe['expect']!r} ({seen[-300:]!r}); I submit."
    return ModelOutput.for_tool_call(
        model, SUBMIT, {_first_parameter(by_name[SUBMIT]): reply}, content=note
    )


class ReferenceModel(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        reply = store().get(REPLY_KEY)
        if reply is None:
            reply = "I do not know the reference answer to this prompt."
        if tools:
            turn = agent_turn(self.model_name, input, tools, reply)
            if turn is not None:
                return turn
        return ModelOutput.from_content(model=self.model_name, content=reply)
