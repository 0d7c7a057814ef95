"""SciCode-Verified as a dataset: its files checked against the manifest, its 64 problems and
287 scored steps, prompts from its own text, its protocol in the log, and the same loud error as
the original test split when its targets are absent."""

from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from scievals.aio import run_sync
from scievals.artifacts import ArtifactError
from scievals.scicode.data import verified
from scievals.scicode.data.dataset import load_problems
from scievals.scicode.data.targets import write_test_target
from scievals.scicode.grade import grade
from scievals.scicode.task import scicode

from .verified_helpers import VERIFIED_DATA, needs_verified_data

pytestmark = needs_verified_data
SOURCE = str(VERIFIED_DATA)


def problems(**kwargs):
    return load_problems("test", SOURCE, "verified", **kwargs)


def test_problems_and_steps():
    loaded = problems()
    assert [p.problem_id for p in loaded] == verified.manifest(SOURCE)["problem_order"]
    assert (len(loaded), sum(len(p.steps) for p in loaded)) == (64, 290)
    assert sum(len(p.scored_steps) for p in loaded) == 287
    unscored = [s.step_id for p in loaded for s in p.steps if not s.scored]
    assert unscored == ["13.6", "62.1", "76.3"]
    step_72_6 = next(s for p in loaded for s in p.steps if s.step_id == "72.6")
    assert step_72_6.scored and step_72_6.tests == ()  # checked through 72.7


def test_presupplied_code_without_import_lines():
    """Verified's runner injects upstream's files with their import lines stripped (today's
    files have none at top level, so the code is the official code)."""
    supplied = {s.step_id: s.presupplied_code for p in problems() for s in p.steps if not s.scored}
    original = {
        s.step_id: s.presupplied_code
        for p in load_problems("test")
        for s in p.steps
        if not s.scored
    }
    for step, code in supplied.items():
        kept = [
            line
            for line in original[step].splitlines()
            if not line.startswith(("import ", "from "))
        ]
        assert code.strip("\n").splitlines() == "\n".join(kept).strip("\n").splitlines(), step


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import numpy as np\ndef f():\n    return 1\n", "def f():\n    return 1\n"),
        ("from a import b\nclass C:\n    import os\n", "class C:\n    import os\n"),
        (
            "def f():\n    from math import pi\n    return pi\n",
            "def f():\n    from math import pi\n    return pi\n",
        ),
        ("x = 1  # import y\n", "x = 1  # import y\n"),
    ],
)
def test_strip_imports(code, expected):
    assert verified.strip_imports(code) == expected


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        ("problems", "problems_test.jsonl differs from the manifest"),
        ("manifest", "manifest.json differs from the manifest"),
        ("missing", "problems_test.jsonl not found"),
    ],
)
def test_files_are_checked_by_md5(tmp_path, tamper, message):
    copy = tmp_path / "verified"
    shutil.copytree(VERIFIED_DATA, copy)
    target = copy / ("manifest.json" if tamper == "manifest" else "problems_test.jsonl")
    target.chmod(0o644)
    if tamper == "missing":
        target.unlink()
    else:
        target.write_bytes(target.read_bytes().replace(b"e", b"E", 1))
    verified.manifest.cache_clear()
    with pytest.raises(ArtifactError, match=message):
        load_problems("test", str(copy), "verified")


def test_public_source_unreachable_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.setattr(verified, "RAW_BASE", "http://127.0.0.1:9/nowhere")
    monkeypatch.setattr(verified, "cache_dir", lambda *parts: tmp_path.joinpath(*parts))
    verified.manifest.cache_clear()
    with pytest.raises(ArtifactError, match="without network, pass a local copy") as caught:
        verified.manifest("github")
    assert "\n" not in str(caught.value)


def _run(tmp_path, **kwargs):
    score = kwargs.pop("score", False)
    [log] = inspect_eval(
        scicode(dataset="verified", source=SOURCE, **kwargs),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
        score=score,
        sample_id=["8", "13"],
    )
    return log


def test_generation_without_targets_uses_the_verified_text(tmp_path, monkeypatch):
    monkeypatch.delenv("SCIEVALS_SCICODE_VERIFIED_H5", raising=False)
    log = _run(tmp_path)
    assert log.status == "success", log.error
    protocol = log.eval.metadata["protocol"]
    assert protocol["dataset"] == "verified"
    assert protocol["data_version"].startswith(verified.DATA_VERSION)
    assert (protocol["steps_counted"], protocol["step_count"]) == (287, "verified")
    assert (protocol["runtimes"], protocol["timeout"]) == (["2024", "2025"], 1800)
    ours = {p.problem_id: p for p in problems()}["8"].steps[0].description
    theirs = {p.problem_id: p for p in load_problems("test")}["8"].steps[0].description
    assert ours != theirs
    sample = next(s for s in log.samples if s.id == "8")
    prompt = sample.messages[0].text
    assert ours in prompt and theirs not in prompt
    thirteen = next(s for s in log.samples if s.id == "13")
    assert "13.6" not in thirteen.metadata["steps"] and len(thirteen.metadata["steps"]) == 14


def test_scoring_without_targets_stops_with_the_clear_error(tmp_path, monkeypatch):
    from scievals.scicode.data import verified_targets

    monkeypatch.delenv("SCIEVALS_SCICODE_VERIFIED_H5", raising=False)
    monkeypatch.setattr(verified_targets, "cached_path", lambda: tmp_path / "absent.h5")
    log = _run(tmp_path, score=True)
    assert log.status == "error"
    assert "SciCode-Verified needs its targets test_data_cleaned.h5" in log.error.message


def test_grading_against_a_verified_targets_file(tmp_path):
    """``--dataset verified --h5 FILE``: Verified's tests against that file's targets, in both
    runtimes (a wrong answer fails in each, and keeps each runtime's reason)."""
    step = next(s for p in problems() for s in p.steps if s.step_id == "8.1")
    path = tmp_path / "cleaned.h5"
    with h5py.File(path, "w") as h5:
        for number in range(1, len(step.tests) + 1):
            write_test_target(h5, "8.1", number, (np.zeros(3), np.zeros(3)))
    reply = "```python\n" + step.function_header + "\n    return 0\n```"
    [verdict], summary = run_sync(
        grade({"8.1": reply}, dataset="verified", source=SOURCE, h5=str(path), timeout=60)
    )
    assert not verdict["passed"]
    assert set(verdict["runtimes"]) == {"2024", "2025"}
    assert (summary["steps_counted"], summary["problems_counted"]) == (287, 64)
    assert (summary["dataset"], summary["step_count"]) == ("verified", "verified")
    json.dumps(summary)  # the grade output is plain JSON


def test_alias_task_is_the_verified_protocol(tmp_path):
    from scievals.scicode.task import scicode_verified

    [log] = inspect_eval(
        scicode_verified(source=SOURCE),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
        score=False,
        limit=1,
    )
    assert log.status == "success", log.error
    assert log.eval.task == "scievals/scicode_verified"
    protocol = log.eval.metadata["protocol"]
    assert (protocol["dataset"], protocol["steps_counted"]) == ("verified", 287)


def test_report_never_puts_both_datasets_in_one_row(tmp_path):
    from scievals.report.build import build_sections
    from scievals.report.load import load_runs

    logs = []
    for dataset in ("original", "verified"):
        [log] = inspect_eval(
            scicode(dataset=dataset, source=SOURCE if dataset == "verified" else "package"),
            model="mockllm/model",
            display="none",
            log_dir=str(tmp_path / dataset),
            score=False,
            sample_id="5",
        )
        logs.append(log.location)
    runs, _ = load_runs(logs)
    assert len(runs) == 2
    assert {run.protocol["dataset"] for run in runs} == {"original", "verified"}
    [section] = build_sections(runs)
    results = section.tables[0]
    assert len(results.rows) == 2
