"""``scievals/reference``: answers every benchmark item with its gold answer.

It validates the whole pipeline (prompts, extraction, sandbox, scoring) end to end: a correct
harness scores it 15/15 on SciCode dev and 580/580 on SciBench with the robust scorer. A task
that knows its gold leaves the reply in the sample's store under ``REPLY_KEY`` before it calls
the model; the model reads it there through Inspect's API and knows nothing of any benchmark.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

REPLY_KEY = "scievals:reference_reply"
"""Sample store key of the reply ``scievals/reference`` gives (set by the task's solver)."""


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
        return ModelOutput.from_content(model=self.model_name, content=reply)
