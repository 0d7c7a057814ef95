"""A real model (smollm2-135m) on the real benchmarks, in process and through the served API.

One SciCode dev problem (scored in the sandbox against regenerated targets) and a few SciBench
problems, so CI shows the whole path a user takes with a local model, not just generation.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from scibench.scibench_helpers import DATA, needs_data

import scievals.models.api  # noqa: F401  registers scievals/ without relying on the entry point
from scievals.scibench.task import scibench
from scievals.scicode.task import scicode

from .test_local_eval import HAVE_LLAMA, MODEL, served

SCIBENCH_DATA = DATA / "main"

pytestmark = [
    pytest.mark.slow,
    needs_data,
    pytest.mark.skipif(
        not HAVE_LLAMA and not os.environ.get("CI"),
        reason="llama-cpp-python is not installed (scripts/build_llama.sh builds it)",
    ),
]


def run_benchmarks(model: str, log_dir: Path, **kwargs: object) -> tuple[EvalLog, EvalLog]:
    common = {"model": model, "display": "none", "log_dir": str(log_dir), "temperature": 0.0}
    [code] = eval(scicode(split="dev"), sample_id="1", max_tokens=160, **common, **kwargs)
    [bench] = eval(
        scibench(setting="zero", books="quan", data_dir=str(SCIBENCH_DATA)),
        limit=3,
        max_tokens=96,
        **common,
        **kwargs,
    )
    return code, bench


def check(code: EvalLog, bench: EvalLog) -> None:
    """Real completions and real scores in both logs."""
    for log in (code, bench):
        assert log.status == "success", log.error
        assert log.results is not None and log.samples
    [problem] = code.samples
    assert problem.store["scicode"]["completions"]["1.1"].strip()
    steps = problem.scores["scicode_scorer"].metadata["steps"]
    assert [s["step"] for s in steps] == ["1.1"] and steps[0]["reason_kind"] in (
        None, "syntax_error", "missing_function", "exception", "assertion", "timeout",
        "missing_record",
    )  # fmt: skip
    assert code.results.scores[0].metrics["total_subproblems_solved"].value in (0.0, 1.0)
    assert len(bench.samples) == 3
    for sample in bench.samples:
        assert sample.output.completion.strip()
        assert set(sample.scores) == {"faithful", "robust"}
        assert "rule" in (sample.scores["robust"].metadata or {})


def test_benchmarks_in_process(tmp_path: Path) -> None:
    check(*run_benchmarks(f"scievals/local/{MODEL}", tmp_path, model_args={"n_threads": 1}))


def test_benchmarks_through_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    with served(tmp_path, n_ctx=8192) as url:
        code, bench = run_benchmarks(
            f"openai-api/local/{MODEL}", tmp_path / "logs", model_base_url=url
        )
    check(code, bench)
