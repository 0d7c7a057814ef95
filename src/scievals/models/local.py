"""``scievals/local``: a GGUF model run in this process by llama-cpp-python.

Names: ``scievals/local`` is the default model (qwen2.5-coder-0.5b, or ``$SCIEVALS_LOCAL_MODEL``),
``scievals/local/<name>`` a catalogue model (see ``scievals models list``) and
``scievals/local/<path>.gguf`` any GGUF file (``local//abs/path.gguf`` for absolute paths).

Model args (``-M key=value``): ``n_threads`` (default: one less than the usable CPUs),
``n_ctx`` (context tokens, default 16384: SciCode prompts reach 8k and the models support 32k),
``n_batch`` (prompt batch, default 512) and ``max_tokens`` (the default when the generate config
sets none, 2048). The chat template is the GGUF's own.
Sampling is greedy unless the config sets a temperature, so a run can be repeated exactly, and
has no repeat penalty (llama-cpp-python's server applies 1.1 unless the request says otherwise;
``--extra-body '{"repeat_penalty": 1.0}'`` makes a served run decode exactly like this one).

A llama.cpp context is not thread-safe and holds the whole model in memory, so each process
loads one ``Llama`` per model file and serves requests one at a time in a worker thread (the
event loop stays free for sandboxes and scoring while the model computes).

Tools (an agentic run): llama.cpp's chat completion returns no tool calls of its own for a
GGUF's template, so tools are offered as Inspect's OpenAI-compatible providers offer them to
models without native tool calling (``emulate_tools``): a system prompt lists them and asks for
``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, and earlier calls and results are
written back the same way. Calls are parsed from the reply by Inspect's parser for prompted
tool calls (its ``hf`` provider's): tagged, fenced JSON, or the bare JSON small models often
write instead.
"""

from __future__ import annotations

import atexit
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.model._providers.openai_compatible import (  # inspect-evals-lint: ignore[IECQ001] -- Inspect's emulated tool calling (emulate_tools) has no public export
    OpenAICompatibleHandler,
)
from inspect_ai.model._providers.util import (  # inspect-evals-lint: ignore[IECQ001] -- as above
    ChatAPIMessage,
    HFHandler,
    chat_api_input,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from scievals.artifacts import ArtifactError
from scievals.models.files import resolve
from scievals.models.settings import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_N_BATCH,
    DEFAULT_N_CTX,
    default_threads,
)

if TYPE_CHECKING:
    from llama_cpp import Llama

_STOP_REASONS: dict[str | None, StopReason] = {"stop": "stop", "length": "max_tokens"}


def import_llama() -> type[Llama]:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ArtifactError(
            "llama-cpp-python is not installed: run scripts/build_llama.sh (builds it once)"
        ) from exc
    return Llama


@dataclass
class _Loaded:
    """One model file's llama.cpp instance and the lock that queues its requests."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    llama: Llama | None = None
    settings: tuple[int, int, int] | None = None


_loaded: dict[Path, _Loaded] = {}
_loaded_guard = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Free models before interpreter teardown; llama_cpp's own finaliser fails that late."""
    for slot in _loaded.values():
        if slot.llama is not None:
            slot.llama.close()
            slot.llama = None


def _slot(path: Path) -> _Loaded:
    with _loaded_guard:
        return _loaded.setdefault(path, _Loaded())


class LocalModel(ModelAPI):
    """Inspect model API for a local GGUF model (see the module docstring for names and args)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        n_threads: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_batch: int = DEFAULT_N_BATCH,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        _, _, spec = model_name.partition("/")
        import_llama()  # fail before fetching hundreds of MB if the runtime is missing
        self.local_name, self.path = resolve(spec or None)
        self.n_threads = int(n_threads) if n_threads else default_threads()
        self.n_ctx = int(n_ctx)
        self.n_batch = int(n_batch)
        self.default_max_tokens = int(max_tokens)

    def max_tokens(self) -> int | None:
        return self.default_max_tokens

    def max_connections(self) -> int:
        # One model computes one request at a time; more connections would only queue.
        return 1

    def connection_key(self) -> str:
        return str(self.path)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        offered = tools if tools and tool_choice != "none" else []
        request = self._request(input, offered, config)
        started = time.monotonic()
        response = await anyio.to_thread.run_sync(self._complete, request)
        elapsed = time.monotonic() - started
        call = ModelCall.create(
            {"model_file": str(self.path), "n_ctx": self.n_ctx, **request}, response, time=elapsed
        )
        return self._output(response, elapsed, offered), call

    def _handler(self) -> OpenAICompatibleHandler:
        return OpenAICompatibleHandler(f"local/{self.local_name}")

    def _parser(self) -> HFHandler:
        # a family none of its model-specific rules claim: every prompted format is tried
        return HFHandler(f"local/{self.local_name}", model_family="gguf")

    def _request(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "messages": _one_system(chat_api_input(input, tools, self._handler())),
            "max_tokens": config.max_tokens or self.default_max_tokens,
            "temperature": config.temperature if config.temperature is not None else 0.0,
        }
        optional = {
            "top_p": config.top_p,
            "top_k": config.top_k,
            "seed": config.seed,
            "stop": config.stop_seqs,
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        # llama.cpp's own sampling options (repeat_penalty, min_p, ...) ride in extra_body, as
        # they do over the OpenAI-compatible API.
        request.update(config.extra_body or {})
        return request

    def _complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one chat completion (in a worker thread, one at a time per model file)."""
        slot = _slot(self.path)
        settings = (self.n_ctx, self.n_threads, self.n_batch)
        with slot.lock:
            if slot.llama is None or slot.settings != settings:
                slot.llama = None  # free the old context before loading another
                slot.llama = import_llama()(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_batch=self.n_batch,
                    verbose=False,
                )
                slot.settings = settings
            try:
                return dict(slot.llama.create_chat_completion(**request))
            except ValueError as exc:
                # The prompt alone does not fit the context: report it as Inspect does for
                # hosted models (stop reason model_length) instead of failing the sample.
                if "exceed context window" not in str(exc):
                    raise
                return {"error": str(exc), "choices": [], "usage": None}

    def _output(
        self, response: dict[str, Any], elapsed: float, tools: list[ToolInfo]
    ) -> ModelOutput:
        model = f"local/{self.local_name}"
        if not response["choices"]:
            output = ModelOutput.from_content(model, "", stop_reason="model_length")
            output.time = elapsed
            return output
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        text = choice["message"].get("content") or ""
        message = (
            self._parser().parse_assistant_response(text, tools)
            if tools
            else ChatMessageAssistant(content=text, model=model, source="generate")
        )
        stop = _STOP_REASONS.get(choice.get("finish_reason"), "unknown")
        return ModelOutput(
            model=model,
            choices=[
                ChatCompletionChoice(
                    message=message,
                    stop_reason="tool_calls" if message.tool_calls else stop,
                )
            ],
            usage=ModelUsage(
                input_tokens=usage.get("prompt_tokens", 0),
                output_tokens=usage.get("completion_tokens", 0),
                total_tokens=usage.get("total_tokens", 0),
            ),
            time=elapsed,
        )


def _one_system(messages: list[ChatAPIMessage]) -> list[dict[str, str]]:
    """The messages with every system message joined into one at the front: the tool prompt
    and the task's own (many GGUF templates refuse a second system message)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    return ([{"role": "system", "content": system}] if system else []) + rest
