"""``scievals/local`` offers tools as Inspect's providers offer them to models without native
tool calling: a tool prompt in, calls parsed out (fast tests on the request and reply), and a
real local model through the agentic SciCode protocol end to end (slow)."""

from __future__ import annotations

import os

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.tool import ToolCall, ToolInfo, ToolParam, ToolParams

from scievals.models.local import LocalModel

TOOLS = [
    ToolInfo(
        name="python",
        description="Run Python code.",
        parameters=ToolParams(properties={"code": ToolParam(type="string")}, required=["code"]),
    )
]


def _model() -> LocalModel:
    model = LocalModel.__new__(LocalModel)  # no weights needed to build requests and read replies
    model.local_name, model.default_max_tokens = "test-model", 64
    return model


def _reply(text: str) -> dict:
    return {
        "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


def test_request_lists_the_tools_and_writes_back_calls_and_results():
    call = ToolCall(id="c1", function="python", arguments={"code": "print(6 * 7)"})
    messages = [
        ChatMessageSystem(content="Be brief."),
        ChatMessageUser(content="What is 6 * 7?"),
        ChatMessageAssistant(content="I compute it.", tool_calls=[call]),
        ChatMessageTool(content="42\n", tool_call_id="c1", function="python"),
    ]
    sent = _model()._request(messages, TOOLS, GenerateConfig())["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "<tools>" in sent[0]["content"] and '"python"' in sent[0]["content"]
    assert sent[0]["content"].endswith("Be brief.")
    assert (
        '<tool_call>{"name": "python", "arguments": {"code": "print(6 * 7)"}' in sent[2]["content"]
    )
    assert "The 'python' function was called" in sent[3]["content"] and "42" in sent[3]["content"]


def test_request_without_tools_is_unchanged():
    messages = [ChatMessageSystem(content="S"), ChatMessageUser(content="U")]
    sent = _model()._request(messages, [], GenerateConfig())["messages"]
    assert sent == [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]


@pytest.mark.parametrize(
    "text",
    [
        'Let me run it.\n<tool_call>\n{"name": "python", "arguments": {"code": "print(1)"}}\n</tool_call>',
        '{"name": "python", "arguments": {"code": "print(1)"}}',
        '```json\n{"name": "python", "arguments": {"code": "print(1)"}}\n```',
    ],
)
def test_reply_tool_calls_are_parsed(text):
    output = _model()._output(_reply(text), 0.1, TOOLS)
    assert output.stop_reason == "tool_calls"
    [call] = output.message.tool_calls
    assert call.function == "python" and call.arguments == {"code": "print(1)"}


def test_reply_without_a_call_stays_text():
    output = _model()._output(_reply("The answer is 42."), 0.1, TOOLS)
    assert output.message.tool_calls is None and output.completion == "The answer is 42."
    assert output.usage and output.usage.total_tokens == 8


try:
    import llama_cpp  # noqa: F401

    HAVE_LLAMA = True
except ImportError:
    HAVE_LLAMA = False


@pytest.mark.slow
@pytest.mark.skipif(
    not HAVE_LLAMA and not os.environ.get("CI"),
    reason="llama-cpp-python is not installed (scripts/build_llama.sh builds it)",
)
def test_local_model_runs_the_agentic_protocol(tmp_path):
    from scievals.scicode.regenerate import ensure_dev_targets
    from scievals.scicode.task import scicode

    ensure_dev_targets()

    log = inspect_eval(
        scicode(split="dev", agent="react", agent_message_limit=6, agent_tool_timeout=20),
        model="scievals/local",
        model_args={"n_threads": 1, "n_ctx": 8192},
        max_tokens=384,
        display="none",
        log_dir=str(tmp_path / "logs"),
        sample_id="1",
    )[0]
    assert log.status == "success", log.error
    [sample] = log.samples
    score = sample.scores["scicode_scorer"]
    [record] = score.metadata["agent"]["by_step"]
    assert record["tokens"] > 0 and record["messages"] >= 3
    if not record["answered"]:  # Qwen2.5-Coder-0.5B usually answers in prose and never submits
        assert score.metadata["steps"][0]["reason_kind"] == "limit"
    calls = [e.call for e in sample.events if e.event == "model" and e.call is not None]
    systems = [c.request["messages"][0]["content"] for c in calls]
    texts = [sample.attachments.get(t.removeprefix("attachment://"), t) for t in systems]
    assert texts and all("<tools>" in text for text in texts)  # the tools were offered
    assert log.eval.metadata["protocol"]["agent"] == "react: python, bash, submit"
