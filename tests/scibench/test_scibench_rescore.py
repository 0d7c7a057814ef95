"""``inspect score LOG``: generate now, score later, from the log alone (the scorers' names and
their parameters as recorded), as Inspect users re-score old runs with a fixed scorer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

from scievals.scibench.task import scibench

from .scibench_helpers import DATA, needs_data

pytestmark = needs_data
INSPECT = Path(sys.executable).with_name("inspect")


def _rescore(log: EvalLog, out: Path) -> EvalLog:
    command = [str(INSPECT), "score", log.location, "--action", "overwrite", "--output-file"]
    done = subprocess.run([*command, str(out), "--display", "none"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return read_eval_log(str(out))


def _unscored(tmp_path: Path, model: str, ids: list[str], **params: object) -> EvalLog:
    task = scibench(data_dir=str(DATA), **params)
    [log] = inspect_eval(
        task, model=model, sample_id=ids, score=False, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success" and not log.results.scores
    return log


def test_inspect_score_rebuilds_both_scorers_from_the_log(tmp_path: Path) -> None:
    log = _unscored(tmp_path, "scievals/reference", ["diff-0", "diff-26"], books="diff")
    scored = _rescore(log, tmp_path / "scored.eval")
    assert [s.name for s in scored.results.scores] == ["faithful", "robust"]
    verdicts = {s.id: {k: v.value for k, v in s.scores.items()} for s in scored.samples}
    # diff-26's gold has a U+2212 minus: the official float() cannot read it
    assert verdicts == {
        "diff-0": {"faithful": 1, "robust": 1},
        "diff-26": {"faithful": 0, "robust": 1},
    }
    metrics = {k: m.value for k, m in scored.results.scores[1].metrics.items()}
    assert (metrics["accuracy"], metrics["diff"], metrics["macro"], metrics["math"]) == (1, 1, 1, 1)


def test_inspect_score_keeps_the_scorer_parameters(tmp_path: Path) -> None:
    params = {"books": "atkins", "scorer": "robust", "errata": True}
    log = _unscored(tmp_path, "mockllm/model", ["atkins-51"], **params)
    assert log.eval.scorers[0].options == {"use_errata": True, "abs_tol": 0.0}
    [sample] = _rescore(log, tmp_path / "scored.eval").samples
    score = sample.scores["robust"]
    assert score.value == 0 and score.metadata["published_gold"] == "0.00017"
    # mockllm's "Default output from mockllm/model" holds no number
    assert score.metadata["rule"] == "no-answer/no-answer"
