"""Test helpers: the SciBench data copy beside the repository, and scripted Inspect models.

The data lives in ``../shared/data/scibench`` next to the repository clone; set
``SCIEVALS_TEST_SCIBENCH`` to use another copy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

DATA = Path(
    os.environ.get(
        "SCIEVALS_TEST_SCIBENCH",
        Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scibench",
    )
).resolve()

needs_data = pytest.mark.skipif(
    not (DATA / "main" / "dataset").is_dir(), reason=f"SciBench data not found at {DATA}"
)


def last_user_text(messages: list[ChatMessage]) -> str:
    user = [m for m in messages if isinstance(m, ChatMessageUser)]
    return user[-1].text if user else ""


def scripted(reply: Callable[[list[ChatMessage]], str]) -> Model:
    """An Inspect model whose reply is computed from the conversation (no network).

    Usage is set so that mockllm does not count tokens (tiktoken would download its tables).
    """

    def outputs(messages, tools, tool_choice, config) -> ModelOutput:
        output = ModelOutput.from_content(model="scripted", content=reply(messages))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)
