"""``scievals/reference``: answers every benchmark item with its gold answer.

It validates the whole pipeline (prompts, extraction, sandbox, scoring) end to end: a correct
harness scores it 15/15 on SciCode dev and 580/580 on SciBench with the robust scorer.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
)
from inspect_ai.tool import ToolChoice, ToolInfo


def _last_user(messages: list[ChatMessage]) -> tuple[str, list[str]]:
    """Text and image data of the last user turn (images tell apart same-text problems)."""
    for message in reversed(messages):
        if message.role == "user":
            images = []
            if not isinstance(message.content, str):
                images = [c.image for c in message.content if isinstance(c, ContentImage)]
            return message.text, images
    return "", []


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
        from scievals.scibench import reference as scibench_reference
        from scievals.scicode import reference as scicode_reference

        prompt, images = _last_user(input)
        reply = scicode_reference.answer(prompt) or scibench_reference.answer(prompt, images)
        if reply is None:
            reply = "I do not know the reference answer to this prompt."
        return ModelOutput.from_content(model=self.model_name, content=reply)
