"""The report over a log of the real ``scievals/scibench`` task (the contract, end to end).

Skipped when the SciBench data copy beside the repository is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from scievals.report.build import build_sections
from scievals.report.load import load_runs
from scievals.report.tables import text

BESIDE_REPO = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scibench"
DATA = Path(os.environ.get("SCIEVALS_TEST_SCIBENCH", BESIDE_REPO)).resolve()


def _reply(*_: object) -> ModelOutput:
    out = ModelOutput.from_content("mockllm", "The answer is therefore \\boxed{1.0}.")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


@pytest.mark.skipif(not (DATA / "old" / "dataset").is_dir(), reason=f"no SciBench data at {DATA}")
def test_report_reads_a_real_scibench_log(tmp_path: Path) -> None:
    task_module = pytest.importorskip("scievals.scibench.task")
    task = task_module.scibench(version="old", books="atkins", setting="zero", data_dir=str(DATA))
    [log] = eval(
        task,
        model=get_model("mockllm/constant", custom_outputs=_reply),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    [run], notes = load_runs([tmp_path])
    assert notes == []
    assert (run.benchmark, run.protocol["split"], run.protocol["prompt"]) == (
        "scibench",
        "textbook",
        "zero",
    )
    [section] = build_sections([run])
    tables = {t.key: t for t in section.tables}
    books = tables["scibench_by_book"]
    assert [text(c) for c in books.rows[0][:2]] == ["atkins", "107"]  # old branch: 107 problems
    # one book is not the paper's 583-item split: per-book figures only, no overall row
    assert "scibench_published" not in tables
    assert books.columns[-1] == "published GPT-4 (zero, beside r1) %"
    assert text(books.rows[0][-1]) == "45.8"
    results = dict(
        zip(tables["scibench_results"].columns, tables["scibench_results"].rows[0], strict=True)
    )
    assert results["faithful correct"].endswith("/107")
    assert "dataset problems 107" in " ".join(tables["scibench_results"].notes)


def test_eval_level_sandbox_override_is_what_the_report_says(tmp_path: Path) -> None:
    """``inspect eval ... --sandbox X`` replaces the task's sandbox after the task wrote its
    protocol: the report says what really ran, and what the task had asked for."""
    from scievals.scicode.task import scicode

    [log] = eval(
        scicode(split="dev"),
        model="mockllm/model",
        sandbox="local",
        sample_id="1",
        score=False,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert log.eval.metadata["protocol"]["sandbox"].startswith("scievals")
    [run], _ = load_runs([log.location])
    assert run.protocol["sandbox"].startswith(
        "local (eval-level --sandbox; the task asked for scievals"
    )
    [run_as_asked], _ = load_runs([_plain_run(tmp_path)])
    assert run_as_asked.protocol["sandbox"].startswith("scievals (")


def _plain_run(tmp_path: Path) -> str:
    from scievals.scicode.task import scicode

    [log] = eval(
        scicode(split="dev"),
        model="mockllm/model",
        sample_id="1",
        score=False,
        display="none",
        log_dir=str(tmp_path / "plain"),
    )
    return log.location
