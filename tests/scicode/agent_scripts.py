"""Scripted agents for the tests: Inspect's ``mockllm/model`` answering from per-step scripts.

``scripted({"cg": [...], ...})`` is a mockllm whose ``custom_outputs`` hands each step the next
output of its own script (a list, or an endless generator), the step known by the function its
prompt asks for, so that samples running at once stay deterministic.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.tool import ToolChoice, ToolInfo

MODEL = "mockllm/model"
_ASKED = re.compile(r"^def (\w+)\(", re.MULTILINE)
_NEXT = "NEXT STEP"


def asked_function(messages: list[ChatMessage]) -> str:
    """The function the step's prompt asks for (the last header after the next-step heading)."""
    prompt = next(m.text for m in messages if m.role == "user")
    names = _ASKED.findall(prompt[prompt.rfind(_NEXT) :] if _NEXT in prompt else prompt)
    return names[-1] if names else ""


def python(code: str) -> ModelOutput:
    return ModelOutput.for_tool_call(MODEL, "python", {"code": code})


def bash(command: str) -> ModelOutput:
    return ModelOutput.for_tool_call(MODEL, "bash", {"command": command})


def submit(answer: str) -> ModelOutput:
    return ModelOutput.for_tool_call(MODEL, "submit", {"answer": answer})


def talk(text: str = "I am still thinking.") -> Iterator[ModelOutput]:
    """A model that never calls a tool nor submits."""
    return (ModelOutput.from_content(MODEL, text) for _ in itertools.count())


def scripted(scripts: dict[str, Iterable[ModelOutput]]) -> Model:
    """A mockllm answering each step from the script of the function it asks for."""
    running = {name: iter(script) for name, script in scripts.items()}

    def output(
        input: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
    ) -> Any:
        name = asked_function(input)
        if name not in running:
            raise AssertionError(f"no script for the step asking for {name!r}")
        return next(running[name])

    return get_model(MODEL, custom_outputs=output)


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"
