"""The interval and test rules against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scievals.report.plots import _errorbars
from scievals.stats import (
    Estimate,
    Outcome,
    bootstrap_ratio,
    epochs_interval,
    estimate,
    mcnemar_exact,
    paired,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (0, 10, 0.0, 0.27753),  # centre = half = (z^2/20)/(1+z^2/10)
        (5, 10, 0.23659, 0.76341),
        (1, 3, 0.06149, 0.79234),
        (2, 4, 0.15004, 0.84996),
        (10, 10, 0.72247, 1.0),
    ],
)
def test_wilson(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-5)


def test_wilson_holds_its_estimate_exactly_at_the_ends() -> None:
    # rounding once put a bound a hair past 0 or 1 at n = 10, 33, ...
    off = [n for n in range(1, 1001) if wilson(0, n)[0] != 0.0 or wilson(n, n)[1] != 1.0]
    assert off == []


def test_wilson_of_nothing_is_undefined() -> None:
    assert all(math.isnan(x) for x in wilson(0, 0))


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


def test_epochs_interval_uses_t_with_k_minus_1_df() -> None:
    # mean .55, sd .05, se .05/sqrt(3); t(.975, 2) = 4.302653
    mean, se, lo, hi = epochs_interval([0.50, 0.55, 0.60])
    assert mean == pytest.approx(0.55)
    assert se == pytest.approx(0.05 / math.sqrt(3))
    assert (lo, hi) == pytest.approx((0.55 - 4.302653 * se, 0.55 + 4.302653 * se), abs=1e-6)


def test_epochs_interval_is_clipped_to_0_1() -> None:
    # mean .375, se .125, t(.975, 1) = 12.706: the interval covers everything
    assert epochs_interval([0.5, 0.25]) == pytest.approx((0.375, 0.125, 0.0, 1.0))


@pytest.mark.parametrize(
    ("num", "den", "interval"),
    [
        ([1, 0], [1, 1], (0.0, 1.0)),  # resamples 0, .5, .5, 1 with P(0) = P(1) = 1/4
        ([2, 0], [2, 2], (0.0, 1.0)),
        ([1, 1, 1], [1, 1, 1], (1.0, 1.0)),
        ([0, 0], [3, 1], (0.0, 0.0)),
    ],
)
def test_bootstrap_ratio(num: list[int], den: list[int], interval: tuple[float, float]) -> None:
    assert bootstrap_ratio(num, den) == pytest.approx(interval)


def test_bootstrap_is_reproducible_and_brackets_the_estimate() -> None:
    num, den = [2, 1, 1, 0, 3], [2, 3, 1, 2, 4]
    first = bootstrap_ratio(num, den)
    assert first == bootstrap_ratio(num, den)
    assert first[0] < sum(num) / sum(den) < first[1]


def _units(values: list[float], epoch: int = 1) -> list[Outcome]:
    return [Outcome(epoch, str(i), str(i), v) for i, v in enumerate(values)]


def test_estimate_one_epoch_independent_units_is_wilson() -> None:
    est = estimate(_units([1, 1, 0, 0]))
    assert est is not None
    assert (est.value, est.n, est.method, est.se) == (0.5, 4, "wilson", None)
    assert (est.lo, est.hi) == pytest.approx(wilson(2, 4))


def test_estimate_clustered_units_bootstraps_problems() -> None:
    steps = [Outcome(1, "1", "1.1", 1), Outcome(1, "1", "1.2", 1), Outcome(1, "2", "2.1", 0)]
    est = estimate(steps)
    assert est is not None
    assert (est.value, est.n, est.method) == (pytest.approx(2 / 3), 3, "bootstrap")
    assert (est.lo, est.hi) == bootstrap_ratio([2, 0], [2, 1])


def test_estimate_several_epochs_is_mean_and_stderr() -> None:
    est = estimate(_units([1, 0, 0, 0], 1) + _units([1, 1, 0, 0], 2) + _units([1, 1, 1, 0], 3))
    assert est is not None
    assert (est.method, est.epochs, est.n) == ("epochs", 3, 4)
    assert est.value == pytest.approx(0.5)
    assert est.se == pytest.approx(0.25 / math.sqrt(3))  # rates .25 .5 .75, sd .25


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
    assert r.lo <= r.diff <= r.hi


def test_paired_uses_only_shared_units_and_labels_epochs() -> None:
    a = _units([1, 0], 1) + _units([1, 1], 2)
    b = _units([0, 0, 1], 1) + _units([0, 1], 2)
    r = paired(a, b)
    assert r is not None
    assert r.n == 4
    assert (r.lost_units, r.gained_units) == (["0#1", "0#2"], [])
    assert (r.lo, r.hi) == (pytest.approx(-1.0), pytest.approx(0.0))


def test_paired_when_every_unit_flips_the_same_way() -> None:
    r = paired(_units([1]), _units([0]))
    assert r is not None
    assert (r.diff, r.lo, r.hi, r.p_value) == (-1.0, -1.0, -1.0, 1.0)


def test_paired_without_common_units() -> None:
    assert paired(_units([1]), [Outcome(1, "x", "x", 1)]) is None


def test_error_bars_stop_at_the_value_when_an_interval_misses_it() -> None:
    vals, err = _errorbars([Estimate(0.2, 0.25, 0.5, 10, "bootstrap"), None])
    assert vals[0] == pytest.approx(20.0) and np.isnan(vals[1])
    assert err.tolist() == [[0.0, 0.0], [pytest.approx(30.0), 0.0]]
