"""Generate now, score later: ``inspect score`` re-creates the SciCode scorer from a log.

A log made with ``--no-score`` records the scorer by name with its small options; scoring it
later finds the scorer through the entry point, rebuilds problems and targets from the options,
and runs the step programs in a sandbox of its own (``inspect score`` gives samples none).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import score
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.util import registry_create, registry_info

import scievals._registry  # noqa: F401 - what Inspect's entry point loads

INSPECT = [sys.executable, "-m", "inspect_ai"]
SAMPLES = ["1", "29"]  # 1 + 3 dev steps
FULL_MARKS = {
    "percentage_main_problems_solved": 100.0,
    "percentage_subproblems_solved": 100.0,
    "total_main_problems_solved": 2.0,
    "total_subproblems_solved": 4.0,
    "main_problems_stderr": 0.0,
    "subproblems_stderr": 0.0,
    "main_pass_at_1": 100.0,
    "sub_pass_at_1": 100.0,
}


def _inspect(*args: str) -> None:
    done = subprocess.run([*INSPECT, *args, "--display", "plain"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def unscored_log(tmp_path_factory, dev_targets_file) -> Path:
    """The reference model's replies to two dev problems, not scored."""
    log_dir = tmp_path_factory.mktemp("unscored")
    _inspect(
        "eval", "scievals/scicode", "--model", "scievals/reference", "-T", "split=dev",
        "--sample-id", ",".join(SAMPLES), "--no-score", "--log-dir", str(log_dir),
    )  # fmt: skip
    [log] = log_dir.glob("*.eval")
    header = read_eval_log(str(log), header_only=True)
    assert header.results is None or not header.results.scores
    return log


def _metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {k: m.value for s in log.results.scores for k, m in s.metrics.items()}


def _all_steps_passed(log: EvalLog) -> None:
    assert log.samples and sorted(str(s.id) for s in log.samples) == SAMPLES
    for sample in log.samples:
        value = sample.scores["scicode_scorer"].value
        assert value and set(value.values()) == {1.0}, sample.scores["scicode_scorer"].explanation


@pytest.mark.slow
def test_inspect_score_cli(unscored_log, tmp_path):
    scored = tmp_path / "scored.eval"
    _inspect("score", str(unscored_log), "--output-file", str(scored))
    log = read_eval_log(str(scored))
    assert log.status == "success"
    assert _metrics(log) == FULL_MARKS
    _all_steps_passed(log)
    assert log.eval.scorers[0].options["config"]["split"] == "dev"


@pytest.mark.slow
def test_score_api_with_the_scorer_the_log_names(unscored_log):
    log = read_eval_log(str(unscored_log))
    [recorded] = log.eval.scorers
    scorer = registry_create("scorer", recorded.name, **(recorded.options or {}))
    assert registry_info(scorer).name.endswith("scicode_scorer")
    scored = score(log, scorer, action="overwrite", display="none")
    assert _metrics(scored) == FULL_MARKS
    _all_steps_passed(scored)
