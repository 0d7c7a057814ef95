"""Metric arithmetic on hand-built scores, the epochs reducer and both standard errors."""

from __future__ import annotations

import math

import pytest
from inspect_ai.scorer import SampleScore, Score

from scievals.scicode.metrics import (
    MAIN_SOLVED,
    METRICS,
    main_problems_stderr,
    main_solved,
    percentage_main_problems_solved,
    percentage_subproblems_solved,
    scicode_epochs,
    subproblems_stderr,
    total_main_problems_solved,
    total_subproblems_solved,
)


def _sample(steps: dict[str, float], sample_id: str = "p", **metadata) -> SampleScore:
    return SampleScore(score=Score(value=steps, metadata=metadata or None), sample_id=sample_id)


# Four problems: solved (2/2), 1/3, 0/1, solved (1/1).
SCORES = [
    _sample({"1.1": 1.0, "1.2": 1.0}, "1"),
    _sample({"2.1": 1.0, "2.2": 0.0, "2.3": 0.0}, "2"),
    _sample({"3.1": 0.0}, "3"),
    _sample({"4.1": 1.0}, "4"),
]


def test_totals_and_percentages():
    assert total_main_problems_solved()(SCORES) == 2
    assert percentage_main_problems_solved()(SCORES) == pytest.approx(50.0)
    assert total_subproblems_solved()(SCORES) == 4
    assert percentage_subproblems_solved()(SCORES) == pytest.approx(100 * 4 / 7)


def test_main_problems_stderr_by_hand():
    # values 1, 0, 0, 1: mean 0.5, sample variance 1/3, stderr sqrt(1/3 / 4).
    assert main_problems_stderr()(SCORES) == pytest.approx(100 * math.sqrt(1 / 12))
    assert main_problems_stderr()(SCORES) == pytest.approx(28.867513459)


def test_subproblems_stderr_by_hand():
    # Ratio estimator clustered by problem: passed (2, 1, 0, 1), counts (2, 3, 1, 1), rate 4/7;
    # residuals p - rate*c = 6/7, -5/7, -4/7, 3/7; sum of squares 86/49; n/(n-1) = 4/3.
    expected = 100 * math.sqrt(86 / 49 * 4 / 3) / 7
    assert subproblems_stderr()(SCORES) == pytest.approx(expected)
    assert subproblems_stderr()(SCORES) == pytest.approx(21.853576)


@pytest.mark.parametrize(
    "metric",
    [
        total_main_problems_solved,
        percentage_main_problems_solved,
        total_subproblems_solved,
        percentage_subproblems_solved,
        main_problems_stderr,
        subproblems_stderr,
    ],
)
def test_empty_and_single(metric):
    assert metric()([]) == 0.0
    single = metric()([_sample({"1.1": 1.0})])
    assert single in (0.0, 1.0, 100.0)
    if metric in (main_problems_stderr, subproblems_stderr):
        assert single == 0.0


def test_all_solved_and_none_solved():
    solved = [_sample({"a": 1.0, "b": 1.0}), _sample({"c": 1.0})]
    assert percentage_main_problems_solved()(solved) == 100.0
    assert percentage_subproblems_solved()(solved) == 100.0
    assert main_problems_stderr()(solved) == 0.0
    assert subproblems_stderr()(solved) == 0.0
    failed = [_sample({"a": 0.0}), _sample({"c": 0.0, "d": 0.0})]
    assert total_main_problems_solved()(failed) == 0.0
    assert percentage_subproblems_solved()(failed) == 0.0


def test_main_solved():
    assert main_solved(_sample({"a": 1.0, "b": 1.0})) == 1.0
    assert main_solved(_sample({"a": 1.0, "b": 0.0})) == 0.0
    assert main_solved(_sample({})) == 0.0
    # A reduced score carries the fraction of epochs solved, which wins over step means.
    assert main_solved(_sample({"a": 0.5}, **{MAIN_SOLVED: 0.5})) == 0.5
    assert main_solved(SampleScore(score=Score(value=1.0), sample_id="x")) == 0.0


def test_epochs_reducer():
    epochs = [
        Score(value={"a": 1.0, "b": 1.0}, answer="2/2", metadata={"steps": ["e1"]}),
        Score(value={"a": 1.0, "b": 0.0}, answer="1/2", metadata={"steps": ["e2"]}),
        Score(value={"a": 0.0, "b": 1.0}, answer="1/2", metadata={"steps": ["e3"]}),
    ]
    reduced = scicode_epochs()(epochs)
    assert reduced.value == pytest.approx({"a": 2 / 3, "b": 2 / 3})
    assert reduced.metadata[MAIN_SOLVED] == pytest.approx(1 / 3)
    assert reduced.metadata["epochs"] == 3
    assert reduced.metadata["steps_by_epoch"] == [["e1"], ["e2"], ["e3"]]
    assert reduced.answer == "2/2"
    sample = SampleScore(score=reduced, sample_id="p")
    # The whole problem was solved in one epoch of three, even though each step passed in two.
    assert total_main_problems_solved()([sample]) == pytest.approx(1 / 3)
    assert percentage_main_problems_solved()([sample]) == pytest.approx(100 / 3)
    assert total_subproblems_solved()([sample]) == pytest.approx(4 / 3)
    assert percentage_subproblems_solved()([sample]) == pytest.approx(200 / 3)


def test_epochs_reducer_single_epoch():
    reduced = scicode_epochs()([Score(value={"a": 1.0, "b": 1.0}, metadata={"steps": []})])
    assert reduced.value == {"a": 1.0, "b": 1.0}
    assert reduced.metadata[MAIN_SOLVED] == 1.0
    assert reduced.metadata["epochs"] == 1
    assert "steps_by_epoch" not in reduced.metadata
    failed = scicode_epochs()([Score(value={"a": 1.0, "b": 0.0})])
    assert failed.metadata[MAIN_SOLVED] == 0.0


def test_metric_names_match_inspect_evals():
    from inspect_ai._util.registry import registry_info

    names = [registry_info(m).name.split("/")[-1] for m in METRICS]
    assert names[:4] == [
        "percentage_main_problems_solved",
        "percentage_subproblems_solved",
        "total_main_problems_solved",
        "total_subproblems_solved",
    ]
