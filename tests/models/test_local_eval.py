"""End to end: a real model (smollm2-135m) evaluated in process and through the OpenAI-compatible
server, with the logs checked for real completions and scores.

In CI these must run (the CI script builds llama-cpp-python with scripts/build_llama.sh); on a
developer machine without the runtime they are skipped with the reason.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate
from timing import HANG_S

import scievals.models.api  # noqa: F401  registers scievals/ without relying on the entry point
from scievals.models.files import MODELS, fetch

try:
    import llama_cpp  # noqa: F401

    HAVE_LLAMA = True
except ImportError:
    HAVE_LLAMA = False

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not HAVE_LLAMA and not os.environ.get("CI"),
        reason="llama-cpp-python is not installed (scripts/build_llama.sh builds it)",
    ),
]

MODEL = "smollm2-135m"
MODEL_ARGS = {"n_threads": 1, "n_ctx": 2048}


def tiny_task() -> Task:
    return Task(
        dataset=[
            Sample(input="What is 2 + 2? Reply with the number only.", target="4"),
            Sample(input="Name the largest planet in the solar system.", target="Jupiter"),
        ],
        solver=generate(),
        scorer=includes(),
    )


def run_eval(model: str, log_dir: Path, **kwargs: object) -> EvalLog:
    [log] = eval(
        tiny_task(),
        model=model,
        max_tokens=32,
        temperature=0.0,
        display="none",
        log_dir=str(log_dir),
        **kwargs,
    )
    return log


def completions(log: EvalLog) -> list[str]:
    """Check the log holds a real completion and a score for every sample; return them."""
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2
    texts = []
    for sample in sorted(log.samples, key=lambda s: str(s.id)):
        assert sample.output.completion.strip(), f"empty completion for sample {sample.id}"
        assert sample.output.usage is not None and 0 < sample.output.usage.output_tokens <= 32
        assert sample.scores is not None and sample.scores["includes"].value in ("C", "I")
        texts.append(sample.output.completion)
    assert log.results is not None and log.results.scores[0].metrics["accuracy"] is not None
    return texts


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    # max_connections above the model's own 1: concurrent requests must queue safely.
    log = run_eval(
        f"scievals/local/{MODEL}",
        tmp_path_factory.mktemp("logs"),
        model_args=MODEL_ARGS,
        max_connections=2,
    )
    assert log.eval.model == f"scievals/local/{MODEL}"
    return completions(log)


def test_in_process_eval(in_process: list[str]) -> None:
    assert len(in_process) == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(proc: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"server at {url} not ready after {HANG_S:.0f} s (the hang bound)")


@contextmanager
def served(tmp_path: Path, n_ctx: int) -> Iterator[str]:
    """``scievals serve local`` for the test model on a free loopback port; yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server_log = tmp_path / "server.log"
    with open(server_log, "wb") as log_fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scievals.cli", "serve", "local", "--model", MODEL,
             "--port", str(port), "--n-threads", "1", "--n-ctx", str(n_ctx)],
            stdout=log_fh,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        try:
            wait_ready(proc, url)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{server_log.read_text()}") from None
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_served_eval_matches_in_process(
    in_process: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "none")  # the server needs none; Inspect wants one
    with served(tmp_path, n_ctx=2048) as url:
        log = run_eval(
            f"openai-api/local/{MODEL}",
            tmp_path / "logs",
            model_base_url=url,
            extra_body={"repeat_penalty": 1.0},  # the server's default is 1.1, ours 1.0
        )
    # Same file, same chat template (the GGUF's), greedy decoding: the same text.
    assert completions(log) == in_process


def test_prompt_longer_than_the_context_is_model_length() -> None:
    model = get_model(f"scievals/local/{MODEL}", n_threads=1, n_ctx=512)
    output = asyncio.run(model.generate("word " * 1000, config=GenerateConfig(max_tokens=8)))
    assert (output.stop_reason, output.completion) == ("model_length", "")


def test_any_gguf_path_works() -> None:
    path = fetch(MODELS[MODEL], quiet=True)
    model = get_model(f"scievals/local/{path}", n_threads=1, n_ctx=512)
    output = asyncio.run(model.generate("Say hello.", config=GenerateConfig(max_tokens=8)))
    assert output.completion.strip() and output.model == f"local/{path.stem}"
