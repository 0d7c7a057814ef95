"""Intervals and paired tests for pass/fail outcomes, as pure functions, for both benchmarks.

Every interval we compute (the report's, ``scievals grade``'s) comes from here, so each rule is
small enough to check by hand:
Wilson for one run of independent units, a bootstrap over problems when units cluster (the steps
of one SciCode problem), mean ± stderr with a t interval over epochs, and for two runs on the same
units a paired bootstrap of the difference with an exact McNemar test. Bootstraps use a fixed seed
so a report is reproducible.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from scipy.stats import t as student_t

LEVEL = 0.95
Z = NormalDist().inv_cdf(0.5 + LEVEL / 2)
BOOTSTRAP_SAMPLES = 2000
SEED = 20240601


class Outcome(NamedTuple):
    """One scored unit in one epoch: ``cluster`` is the problem it belongs to, ``value`` 0..1."""

    epoch: int
    cluster: str
    unit: str
    value: float


@dataclass(frozen=True)
class Estimate:
    """A rate with its 95% interval (fractions, not percent) and how the interval was made."""

    value: float
    lo: float
    hi: float
    n: int  # units per epoch (mean over epochs when they differ)
    method: str  # "wilson" | "bootstrap" | "epochs"
    epochs: int = 1
    se: float | None = None  # standard error over epochs; None for one epoch


@dataclass(frozen=True)
class Paired:
    """B minus A on the units both runs scored (same epoch, same unit)."""

    n: int
    a: float
    b: float
    diff: float
    lo: float
    hi: float
    lost: int  # passed in A, failed in B
    gained: int  # failed in A, passed in B
    p_value: float
    lost_units: list[str] = field(default_factory=list)
    gained_units: list[str] = field(default_factory=list)


def wilson(k: float, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson score interval for k successes of n; behaves at 0 and n, unlike the normal one."""
    if n <= 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # The interval holds p; at k = 0 or n rounding alone could put a bound a hair past it.
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def bootstrap_ratio(
    num: Sequence[float],
    den: Sequence[float],
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile interval of sum(num)/sum(den) when whole clusters (problems) are resampled."""
    num_a, den_a = np.asarray(num, float), np.asarray(den, float)
    if len(num_a) == 0:
        return (math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, len(num_a), size=(samples, len(num_a)))
    ratios = num_a[idx].sum(axis=1) / den_a[idx].sum(axis=1)
    lo, hi = np.quantile(ratios, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return (float(lo), float(hi))


def epochs_interval(per_epoch: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, stderr and t interval of one rate measured once per epoch (k >= 2)."""
    values = np.asarray(per_epoch, float)
    k = len(values)
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(k))
    half = float(student_t.ppf(0.5 + LEVEL / 2, k - 1)) * se
    return (mean, se, max(0.0, mean - half), min(1.0, mean + half))


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs against Binomial(lost+gained, 1/2)."""
    n = lost + gained
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(lost, gained) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _clusters(outcomes: Iterable[Outcome]) -> tuple[list[float], list[float]]:
    """Per cluster: the summed value and the unit count."""
    num: dict[str, float] = defaultdict(float)
    den: dict[str, int] = defaultdict(int)
    for o in outcomes:
        num[o.cluster] += o.value
        den[o.cluster] += 1
    keys = sorted(num)
    return [num[k] for k in keys], [den[k] for k in keys]


def estimate(outcomes: Sequence[Outcome]) -> Estimate | None:
    """The rate of one run with its interval; None when nothing was scored.

    One epoch: Wilson when every unit is its own cluster, else a bootstrap over clusters (steps
    of one problem pass or fail together, so treating them as independent would be too narrow).
    Several epochs: the rate per epoch, then mean ± stderr with a t interval.
    """
    if not outcomes:
        return None
    by_epoch: dict[int, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_epoch[o.epoch].append(o)
    if len(by_epoch) > 1:
        rates = [sum(o.value for o in os) / len(os) for _, os in sorted(by_epoch.items())]
        mean, se, lo, hi = epochs_interval(rates)
        n = round(len(outcomes) / len(by_epoch))
        return Estimate(mean, lo, hi, n, "epochs", len(by_epoch), se)
    n = len(outcomes)
    k = sum(o.value for o in outcomes)
    num, den = _clusters(outcomes)
    if len(num) == n:
        lo, hi = wilson(k, n)
        return Estimate(k / n, lo, hi, n, "wilson")
    lo, hi = bootstrap_ratio(num, den)
    return Estimate(k / n, lo, hi, n, "bootstrap")


def _label(o: Outcome, epochs: int) -> str:
    return o.unit if epochs == 1 else f"{o.unit}#{o.epoch}"


def paired(
    a: Sequence[Outcome],
    b: Sequence[Outcome],
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> Paired | None:
    """Compare two runs on the (epoch, unit) pairs both scored; None when they share none.

    The interval resamples clusters (problems) with their pairs, so it stays honest for steps;
    McNemar counts a unit as passed only at value 1.
    """
    a_by = {(o.epoch, o.unit): o for o in a}
    b_by = {(o.epoch, o.unit): o for o in b}
    keys = sorted(set(a_by) & set(b_by))
    if not keys:
        return None
    epochs = len({k[0] for k in keys})
    a_num: dict[str, float] = defaultdict(float)
    b_num: dict[str, float] = defaultdict(float)
    den: dict[str, int] = defaultdict(int)
    lost_units, gained_units = [], []
    for key in keys:
        oa, ob = a_by[key], b_by[key]
        a_num[oa.cluster] += oa.value
        b_num[oa.cluster] += ob.value
        den[oa.cluster] += 1
        pass_a, pass_b = oa.value >= 1.0, ob.value >= 1.0
        if pass_a and not pass_b:
            lost_units.append(_label(oa, epochs))
        elif pass_b and not pass_a:
            gained_units.append(_label(oa, epochs))
    clusters = sorted(den)
    an = np.array([a_num[c] for c in clusters])
    bn = np.array([b_num[c] for c in clusters])
    dn = np.array([den[c] for c in clusters], float)
    idx = np.random.default_rng(seed).integers(0, len(clusters), size=(samples, len(clusters)))
    diffs = (bn[idx].sum(axis=1) - an[idx].sum(axis=1)) / dn[idx].sum(axis=1)
    lo, hi = np.quantile(diffs, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    total = float(dn.sum())
    a_rate, b_rate = float(an.sum()) / total, float(bn.sum()) / total
    return Paired(
        n=len(keys),
        a=a_rate,
        b=b_rate,
        diff=b_rate - a_rate,
        lo=float(lo),
        hi=float(hi),
        lost=len(lost_units),
        gained=len(gained_units),
        p_value=mcnemar_exact(len(lost_units), len(gained_units)),
        lost_units=lost_units,
        gained_units=gained_units,
    )
