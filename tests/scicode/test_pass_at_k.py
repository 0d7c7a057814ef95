"""pass@1 and pass@k of a real four-epoch SciCode dev run, recomputed by hand from its per-sample
scores: the task's Inspect metrics, and the report's tables, are the unbiased estimator of Chen
et al. (2021) averaged over problems and over steps.

The model samples: a seeded coin per (sample, epoch, prompt) answers the gold code with
probability 0.7 and a reply without code otherwise, so epochs disagree reproducibly.
"""

from __future__ import annotations

import hashlib
import random
from math import comb
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from scievals.models.reference import REPLY_KEY
from scievals.report.build import build_sections
from scievals.report.load import load_runs
from scievals.stats import clopper_pearson, rate_interval

EPOCHS = 4
GOLD = 0.7
SEED = 20261202


@modelapi(name="seeded")
def _seeded() -> type[ModelAPI]:
    return SeededModel


class SeededModel(ModelAPI):
    """Gold with probability GOLD, else no code, drawn from (seed, sample, epoch, prompt)."""

    def __init__(self, model_name: str, **kwargs: object) -> None:
        super().__init__(model_name, None, None, [], GenerateConfig())

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        assert active is not None
        key = f"{SEED}:{active.sample.id}:{active.epoch}:{input[-1].text}"
        coin = random.Random(hashlib.sha256(key.encode()).digest()).random()
        gold = store().get(REPLY_KEY)
        reply = gold if gold is not None and coin < GOLD else "I cannot write this function."
        return ModelOutput.from_content(model=self.model_name, content=reply)


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    from scievals.scicode.task import scicode

    [log] = eval(
        scicode(split="dev"),
        model="seeded/sampler",
        epochs=EPOCHS,
        display="none",
        log_dir=str(tmp_path_factory.mktemp("pass-at-k")),
    )
    assert log.status == "success", log.error
    return log


def _by_hand(log: EvalLog) -> tuple[dict[str, int], dict[str, int], int]:
    """Per problem the epochs that solved it, per step the epochs that passed it, and steps."""
    solved: dict[str, int] = {}
    passed: dict[str, int] = {}
    for sample in log.samples or []:
        [score] = sample.scores.values()  # type: ignore[union-attr]
        steps = score.value
        assert isinstance(steps, dict)
        solved[str(sample.id)] = solved.get(str(sample.id), 0) + all(v == 1 for v in steps.values())
        for step, value in steps.items():
            passed[step] = passed.get(step, 0) + int(value == 1)
    return solved, passed, len(passed)


def _estimator(c: int, k: int) -> float:
    return 1 - comb(EPOCHS - c, k) / comb(EPOCHS, k)


@pytest.mark.slow
def test_inspect_metrics_are_pass_at_k_by_hand(run_log: EvalLog) -> None:
    solved, passed, steps = _by_hand(run_log)
    assert len(solved) == 15 and steps == 50
    assert len({c for c in passed.values()}) > 2  # epochs disagree: a real test of the estimator
    [scores] = run_log.results.scores  # type: ignore[union-attr]
    metrics = {name: m.value for name, m in scores.metrics.items()}
    for k in range(1, EPOCHS + 1):
        main = 100 * sum(_estimator(c, k) for c in solved.values()) / len(solved)
        sub = 100 * sum(_estimator(c, k) for c in passed.values()) / steps
        assert metrics[f"main_pass_at_{k}"] == pytest.approx(main)
        assert metrics[f"sub_pass_at_{k}"] == pytest.approx(sub)
    # pass@1 is the mean over epochs: inspect_evals' percentages
    assert metrics["percentage_subproblems_solved"] == pytest.approx(metrics["sub_pass_at_1"])
    assert metrics["percentage_main_problems_solved"] == pytest.approx(metrics["main_pass_at_1"])


@pytest.mark.slow
def test_the_report_prints_the_same_pass_at_k_with_its_interval(run_log: EvalLog) -> None:
    solved, passed, steps = _by_hand(run_log)
    [run], _ = load_runs([run_log.location])
    [section] = build_sections([run])
    tables = {t.key: t for t in section.tables}
    results = dict(
        zip(tables["scicode_results"].columns, tables["scicode_results"].rows[0], strict=True)
    )
    main_at_4 = sum(_estimator(c, EPOCHS) for c in solved.values())
    lo, hi = clopper_pearson(main_at_4, len(solved))  # problems are clusters of one
    cell = results["main problems pass@k %"]
    assert (cell.value, cell.lo, cell.hi) == pytest.approx(
        (100 * main_at_4 / len(solved), 100 * float(lo), 100 * float(hi))
    )
    # steps: each problem's steps one cluster of their fractional pass@4 values
    problems = sorted(solved)
    sums = [
        sum(_estimator(c, EPOCHS) for s, c in passed.items() if s.split(".")[0] == p)
        for p in problems
    ]
    sizes = [sum(1 for s in passed if s.split(".")[0] == p) for p in problems]
    p, _, lo, hi, _ = rate_interval(sums, sizes)
    cell = results["subproblems (steps) pass@k %"]
    assert (cell.value, cell.lo, cell.hi) == pytest.approx((100 * p, 100 * lo, 100 * hi))
    # every k in its own table, pass@1 equal to the results' averaged pass@1
    table = tables["scicode_pass_at_k"]
    assert [row[2] for row in table.rows] == [1, 2, 3, 4]
    assert table.rows[0][3] == results["main problems %"]  # pass@1: the results' own cell
    assert table.rows[1][4].value == pytest.approx(
        100 * sum(_estimator(c, 2) for c in passed.values()) / steps
    )
    assert Path(run.path).exists()
