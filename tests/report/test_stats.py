"""The interval and test rules against values worked out by hand, and against Inspect's own."""

from __future__ import annotations

import math

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score, stderr

from scievals.stats import (
    Outcome,
    clopper_pearson,
    clustered_se,
    effective_n,
    estimate,
    mcnemar_exact,
    paired,
)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (0, 10, 0.0, 1 - 0.025**0.1),  # P(0 of 10 | hi) = 2.5%
        (10, 10, 0.025**0.1, 1.0),
        (0, 4, 0.0, 1 - 0.025**0.25),  # 0 of 4: the upper bound is above 60%
        (1, 3, 1 - 0.975 ** (1 / 3), 0.90570),  # P(>= 1 of 3 | lo) = 2.5%
        (5, 10, 0.18709, 0.81291),
        (2, 4, 0.06759, 0.93241),
    ],
)
def test_clopper_pearson(k: int, n: int, lo: float, hi: float) -> None:
    assert tuple(map(float, clopper_pearson(k, n))) == pytest.approx((lo, hi), abs=1e-5)


def test_exact_intervals_never_collapse_and_hold_their_estimate() -> None:
    for n in range(1, 61):
        k = np.arange(n + 1)
        lo, hi = clopper_pearson(k, n)
        assert np.all(hi - lo > 0) and np.all((lo <= k / n) & (k / n <= hi))
        assert lo[0] == 0.0 and hi[-1] == 1.0 and hi[0] < 1.0 and lo[-1] > 0.0


def _unit_scores(clusters: list[list[float]]) -> list[SampleScore]:
    return [
        SampleScore(score=Score(value=v), sample_id=f"{i}.{j}", sample_metadata={"problem": i})
        for i, values in enumerate(clusters)
        for j, v in enumerate(values)
    ]


@pytest.mark.parametrize(
    "clusters",
    [[[1, 1], [1, 0, 0], [0], [1]], [[1], [0], [1], [1], [0]], [[0, 0, 0], [1, 1, 1, 1, 1]]],
)
def test_clustered_se_is_inspects_clustered_stderr(clusters: list[list[float]]) -> None:
    sums, sizes = [sum(c) for c in clusters], [len(c) for c in clusters]
    inspect_se = stderr(cluster="problem")(_unit_scores(clusters))
    assert float(clustered_se(sums, sizes)) == pytest.approx(inspect_se, abs=1e-12)


def test_clustered_se_by_hand() -> None:
    # passed (2, 1, 0, 1) of (2, 3, 1, 1), rate 4/7; residuals 6/7, -5/7, -4/7, 3/7
    expected = math.sqrt(86 / 49 * 4 / 3) / 7
    assert float(clustered_se([2, 1, 0, 1], [2, 3, 1, 1])) == pytest.approx(expected)
    assert float(clustered_se([1], [3])) == 0.0  # one cluster: nothing to estimate it from


@pytest.mark.parametrize(
    ("p", "se", "df", "sizes", "n_eff"),
    [
        (0.5, 0.1, 9, [1] * 10, 10),  # independent units: the unit count itself
        (0.0, 0.0, 1, [2, 2, 2], 3),  # at 0%: the Kish count, here the 3 problems
        (1.0, 0.0, 1, [1, 2, 3], 36 / 14),  # (sum m)^2 / sum m^2
        (0.5, 0.2, 1, [4], 1),  # one problem
        # p(1-p)/se^2 = 25, times (z / t_9)^2 = (1.959964 / 2.262157)^2
        (0.5, 0.1, 9, [3] * 10, 25 * (1.959964 / 2.262157) ** 2),
        (0.5, 0.01, 9, [3] * 10, 30 * (1.959964 / 2.262157) ** 2),  # capped at the 30 units
        (0.5, 0.3, 9, [3] * 10, 10),  # never below the Kish count (10 problems)
    ],
)
def test_effective_n(p: float, se: float, df: float, sizes: list[int], n_eff: float) -> None:
    assert float(effective_n(p, se, df, sizes)) == pytest.approx(n_eff, rel=1e-5)


def _units(values: list[float], epoch: int = 1) -> list[Outcome]:
    return [Outcome(epoch, str(i), str(i), v) for i, v in enumerate(values)]


def test_estimate_of_independent_units_is_clopper_pearson() -> None:
    est = estimate(_units([1, 1, 0, 0]))
    assert est is not None
    assert (est.value, est.n, est.epochs, est.clusters, est.n_eff) == (0.5, 4, 1, 4, 4)
    assert (est.lo, est.hi) == pytest.approx(tuple(map(float, clopper_pearson(2, 4))))
    assert est.se == pytest.approx(math.sqrt(1 / 12))


@pytest.mark.parametrize("passed", [0, 4])
def test_all_failed_or_all_passed_steps_keep_the_problems_width(passed: int) -> None:
    # the main job's slice: 4 steps in problems of 1, 2 and 1 steps; 0 or 4 passed
    steps = [("1", "1.1"), ("4", "4.1"), ("4", "4.2"), ("19", "19.1")]
    est = estimate([Outcome(1, c, u, passed / 4) for c, u in steps])
    assert est is not None
    kish = 16 / 6  # as if each problem passed or failed as one
    assert est.n_eff == pytest.approx(kish)
    cp = tuple(map(float, clopper_pearson(passed / 4 * kish, kish)))
    assert (est.lo, est.hi) == pytest.approx(cp)
    assert est.hi - est.lo > 0.7  # 0 of 4 steps in 3 problems says little


def test_identical_epochs_cost_nothing_and_add_nothing() -> None:
    one = estimate(_units([1, 0, 0, 1, 1]))
    three = estimate([o for e in (1, 2, 3) for o in _units([1, 0, 0, 1, 1], e)])
    assert one is not None and three is not None
    assert (three.value, three.n, three.epochs) == (one.value, 5, 3)
    assert (three.lo, three.hi) == pytest.approx((one.lo, one.hi))


def test_epochs_that_disagree_give_the_mean_rate() -> None:
    est = estimate(_units([1, 0, 0, 0], 1) + _units([1, 1, 0, 0], 2) + _units([1, 1, 1, 0], 3))
    assert est is not None
    assert (est.epochs, est.n, est.clusters) == (3, 4, 4)
    assert est.value == pytest.approx(0.5)
    assert est.lo < 0.5 < est.hi


def test_estimate_of_nothing() -> None:
    assert estimate([]) is None


def test_paired_counts_flips_and_difference() -> None:
    a = _units([1, 1, 0, 0, 1])
    b = _units([1, 0, 1, 1, 1])
    r = paired(a, b)
    assert r is not None
    assert (r.n, r.a, r.b, r.diff) == (5, 0.6, 0.8, pytest.approx(0.2))
    assert (r.lost, r.gained, r.lost_units, r.gained_units) == (1, 2, ["1"], ["2", "3"])
    assert r.p_value == pytest.approx(1.0)
    assert r.lo < r.diff < r.hi


def test_identical_runs_differ_by_an_interval_not_a_point() -> None:
    # no unit flipped in 10: each flip rate is at most CP(0, 10), so is the difference
    r = paired(_units([1, 0] * 5), _units([1, 0] * 5))
    assert r is not None
    bound = float(clopper_pearson(0, 10)[1])
    assert (r.diff, r.lo, r.hi) == (0.0, pytest.approx(-bound), pytest.approx(bound))


def test_paired_uses_only_shared_units_and_labels_epochs() -> None:
    a = _units([1, 0], 1) + _units([1, 1], 2)
    b = _units([0, 0, 1], 1) + _units([0, 1], 2)
    r = paired(a, b)
    assert r is not None
    assert r.n == 4
    assert (r.lost_units, r.gained_units) == (["0#1", "0#2"], [])
    assert -1.0 <= r.lo < r.diff == -0.5 < r.hi


def test_paired_without_common_units() -> None:
    assert paired(_units([1]), [Outcome(1, "x", "x", 1)]) is None


@pytest.mark.parametrize(
    ("lost", "gained", "p"),
    [
        (0, 0, 1.0),
        (0, 5, 2 / 32),
        (1, 4, 2 * (1 + 5) / 32),
        (3, 7, 2 * (1 + 10 + 45 + 120) / 1024),  # 0.34375
        (2, 2, 1.0),  # 2 * 11/16 > 1 is capped
        (1, 3, 2 * (1 + 4) / 16),  # 0.625
    ],
)
def test_mcnemar_exact(lost: int, gained: int, p: float) -> None:
    assert mcnemar_exact(lost, gained) == pytest.approx(p)
    assert mcnemar_exact(gained, lost) == pytest.approx(p)
