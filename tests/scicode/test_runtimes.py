"""Grading in several pinned scoring runtimes: a step passes if any runtime passes, a later
runtime sees only what the earlier ones failed (unless every runtime is asked for), and every
runtime's own verdict is kept in the score metadata, the grade output and the log."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from scievals.aio import run_sync
from scievals.inputs import InputError
from scievals.report.build import build_sections
from scievals.report.load import load_runs
from scievals.sandbox.runtime import RUNTIMES, check_runtimes, pins, runtime_environment
from scievals.scicode.grade import grade
from scievals.scicode.task import scicode

from .conftest import gold

# Step 1.1's gold code with one line that only one runtime can run.
NUMPY_2_ONLY = "    np.trapezoid([0.0, 1.0])  # numpy >= 2 only\n    # Initialize residual vector"
SCIPY_OLD_ONLY = "    from scipy.integrate import simps  # removed in scipy 1.14\n    # Initialize residual vector"


def with_line(line: str) -> str:
    reply = gold("1.1")
    assert "    # Initialize residual vector" in reply
    return reply.replace("    # Initialize residual vector", line, 1)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ("2024", ("2024",)),
        ("2024,2025", ("2024", "2025")),
        (" 2025 , 2024 ", ("2025", "2024")),
        (["2025"], ("2025",)),
    ],
)
def test_runtime_names(names, expected):
    assert check_runtimes(names) == expected


@pytest.mark.parametrize(
    ("names", "message"),
    [("2023", "unknown scoring runtime 2023"), ("2024,2024", "named twice"), (",", "none given")],
)
def test_bad_runtime_names(names, message):
    with pytest.raises(InputError, match=message):
        check_runtimes(names)


def test_runtime_pins_are_the_protocols():
    """2024 is SciCode-Verified's 2024-era environment exactly, 2025 its 2025-era one."""
    assert RUNTIMES == ("2024", "2025")
    wanted = {
        "2024": {"numpy": "1.26.4", "scipy": "1.13.1", "sympy": "1.13.3", "h5py": "3.12.1"},
        "2025": {"numpy": "2.4.2", "scipy": "1.17.1", "sympy": "1.14.0", "h5py": "3.15.1"},
    }
    for name, versions in wanted.items():
        assert {k: pins(name)[k] for k in versions} == versions
    assert (pins("2024")["matplotlib"], pins("2025")["matplotlib"]) == ("3.9.4", "3.10.9")
    assert set(pins("2024")) == set(pins("2025"))  # every dependency pinned in both


def test_environment_names():
    assert [runtime_environment(n, i) for i, n in enumerate(("2024", "2025"))] == [
        "default",
        "runtime-2025",
    ]


@pytest.fixture(scope="module")
def either_way():
    """1.1 needing numpy 2, and 1.1 needing old scipy, each graded in both orders."""

    def run(reply: str, runtimes: str, all_runtimes: bool = False):
        verdicts, summary = run_sync(
            grade({"1.1": reply}, split="dev", runtimes=runtimes, all_runtimes=all_runtimes)
        )
        return verdicts[0], summary

    return {
        "numpy2": run(with_line(NUMPY_2_ONLY), "2024,2025"),
        "numpy2_only_2024": run(with_line(NUMPY_2_ONLY), "2024"),
        "scipy_old": run(with_line(SCIPY_OLD_ONLY), "2024,2025"),
        "scipy_old_all": run(with_line(SCIPY_OLD_ONLY), "2024,2025", all_runtimes=True),
        "scipy_old_2025_first": run(with_line(SCIPY_OLD_ONLY), "2025,2024"),
    }


def test_numpy_2_api_fails_in_2024_passes_in_2025_and_under_or(either_way):
    only_2024, _ = either_way["numpy2_only_2024"]
    assert not only_2024["passed"]
    assert "trapezoid" in only_2024["reason"]
    verdict, summary = either_way["numpy2"]
    assert verdict["passed"] and verdict["runtime"] == "2025"
    assert [(n, r["passed"]) for n, r in verdict["runtimes"].items()] == [
        ("2024", False),
        ("2025", True),
    ]
    assert verdict["runtimes"]["2024"]["reason_kind"] == "exception"
    assert summary["added_by_later_runtimes"] == {"2025": 1}
    assert summary["total_subproblems_solved"] == 1


def test_old_scipy_api_the_other_way_round(either_way):
    first, summary = either_way["scipy_old"]
    assert first["passed"] and list(first["runtimes"]) == ["2024"]  # 2025 never asked
    assert summary["added_by_later_runtimes"] == {"2025": 0}
    every, _ = either_way["scipy_old_all"]
    assert every["passed"] and every["runtime"] == "2024"
    assert [(n, r["passed"]) for n, r in every["runtimes"].items()] == [
        ("2024", True),
        ("2025", False),
    ]
    assert "simps" in every["runtimes"]["2025"]["reason"]
    reverse, summary = either_way["scipy_old_2025_first"]
    assert reverse["passed"] and reverse["runtime"] == "2024"
    assert summary["added_by_later_runtimes"] == {"2024": 1}


def test_failing_everywhere_keeps_the_first_runtimes_reason():
    reply = with_line("    raise ValueError('nowhere')\n    # Initialize residual vector")
    [verdict], summary = run_sync(grade({"1.1": reply}, split="dev", runtimes="2024,2025"))
    assert not verdict["passed"] and verdict["runtime"] == "2024"
    assert verdict["reason"] == verdict["runtimes"]["2024"]["reason"]
    assert set(verdict["runtimes"]) == {"2024", "2025"}
    assert summary["added_by_later_runtimes"] == {"2025": 0}


def test_syntax_errors_are_not_run_again():
    """Decided before running: the same in every runtime, so the second is not asked."""
    [verdict], _ = run_sync(
        grade({"1.1": "```python\ndef cg(:\n```"}, split="dev", runtimes="2024,2025")
    )
    assert verdict["reason_kind"] == "syntax_error"
    assert list(verdict["runtimes"]) == ["2024"]


def test_grade_cli_runtimes(tmp_path, capsys):
    from scievals.cli import main

    source = tmp_path / "c.jsonl"
    source.write_text(json.dumps({"step": "1.1", "completion": with_line(NUMPY_2_ONLY)}) + "\n")
    assert main(["grade", "scicode", str(source), "--runtimes", "2024,2025"]) == 0
    captured = capsys.readouterr()
    verdict = json.loads(captured.out.splitlines()[0])
    assert verdict["passed"] and verdict["runtime"] == "2025"
    assert captured.err.strip().splitlines()[-1].endswith("; runtime 2025 added 1")
    assert main(["grade", "scicode", str(source), "--runtimes", "1999"]) == 2
    assert "unknown scoring runtime 1999" in capsys.readouterr().err


def test_eval_records_both_verdicts(tmp_path):
    """Through a real eval: the score metadata and explanation hold each runtime's verdict,
    the protocol names the runtimes and the log their full pins."""
    model = get_model(
        "mockllm/model",
        custom_outputs=[ModelOutput.from_content("mockllm/model", with_line(NUMPY_2_ONLY))],
    )
    [log] = inspect_eval(
        scicode(split="dev", runtimes="2024,2025"),
        model=model,
        sample_id="1",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    protocol = log.eval.metadata["protocol"]
    assert protocol["runtimes"] == ["2024", "2025"]
    assert log.eval.metadata["runtime_versions"]["2025"]["numpy"] == "2.4.2"
    [sample] = log.samples
    score = sample.scores["scicode_scorer"]
    assert score.value == {"1.1": 1.0}
    [step] = score.metadata["steps"]
    assert step["runtime"] == "2025"
    assert [(n, r["passed"]) for n, r in step["runtimes"].items()] == [
        ("2024", False),
        ("2025", True),
    ]
    assert "2024: exception, 2025: pass" in score.explanation
    runs, _ = load_runs([log.location])
    [section] = build_sections(runs)
    [table] = [t for t in section.tables if t.key == "scicode_runtimes"]
    assert [row[2:] for row in table.rows] == [["2024", 1, 0, "-"], ["2025", 1, 1, 1]]
    one_runtime = [
        t.key for s in build_sections(load_runs([_one_runtime_log(tmp_path)])[0]) for t in s.tables
    ]
    assert "scicode_runtimes" not in one_runtime


def _one_runtime_log(tmp_path) -> str:
    [log] = inspect_eval(
        scicode(split="dev"),
        model="mockllm/model",
        sample_id="1",
        display="none",
        log_dir=str(tmp_path / "one"),
    )
    return log.location


@pytest.mark.slow
def test_gold_dev_never_needs_the_second_runtime(tmp_path, dev_targets_file):
    """All 50 gold dev steps pass in 2024, so 2025 is never started for them."""
    [log] = inspect_eval(
        scicode(split="dev", runtimes="2024,2025"),
        model="scievals/reference",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert (metrics["total_main_problems_solved"], metrics["total_subproblems_solved"]) == (15, 50)
    steps = [s for sample in log.samples for s in sample.scores["scicode_scorer"].metadata["steps"]]
    assert len(steps) == 50
    assert all(list(s["runtimes"]) == ["2024"] and s["runtime"] == "2024" for s in steps)


@pytest.mark.slow
def test_gold_dev_passes_in_2025_alone(dev_targets_file):
    """The recorder, the wire format and the trusted re-run work on NumPy 2 as on NumPy 1: every
    gold dev step passes with 2025 as the only runtime."""
    from scievals.scicode.data.dataset import load_problems

    completions = {s.step_id: gold(s.step_id) for p in load_problems("dev") for s in p.scored_steps}
    verdicts, summary = run_sync(grade(completions, split="dev", runtimes="2025"))
    failed = {v["step"]: v["reason"] for v in verdicts if not v["passed"]}
    assert failed == {}
    assert (summary["total_subproblems_solved"], summary["runtimes"]) == (50, ["2025"])
