"""Intervals and paired tests for pass/fail outcomes, for both benchmarks, the report and the tasks.

One rule for every rate: units (a SciBench problem, a SciCode main problem, a SciCode step; each
epoch of each) belong to clusters (the problem they come from), and the 95% interval is the exact
Clopper-Pearson interval at the clusters' effective sample size (Korn and Graubard, 1998):

- every cluster one unit (one epoch of independent problems): plain Clopper-Pearson on k of n;
- otherwise n_eff = p(1 - p) / se^2 from the clustered standard error (Inspect's
  ``stderr(cluster=...)``), times (z / t_df)^2 for the uncertainty of se, df being the effective
  number of clusters behind it ((sum r^2)^2 / sum r^4 of their residuals, at most C - 1), capped
  at the unit count and floored at the Kish count (sum m)^2 / sum m^2, the effective size when
  every cluster passes or fails as one. At 0% and 100% (and with one cluster) nothing tells the
  correlation, so the floor is used: the interval stays wide instead of collapsing.

Paired differences (B - A on shared units) combine the intervals of the two discordance rates
(units gained, units lost), each by the rule above, with Zou and Donner's MOVER. Why these and not
Wilson or a bootstrap: ``docs/statistics.md``; coverage is checked by simulation in
``tests/report/test_coverage.py``. Functions take arrays (clusters on the last axis) so that the
simulation runs the very same code, vectorised.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import beta
from scipy.stats import t as student_t

LEVEL = 0.95
ALPHA = 1 - LEVEL
Z = NormalDist().inv_cdf(1 - ALPHA / 2)

Array = NDArray[np.float64]


class Outcome(NamedTuple):
    """One scored unit in one epoch: ``cluster`` is the problem it belongs to, ``value`` 0..1."""

    epoch: int
    cluster: str
    unit: str
    value: float


@dataclass(frozen=True)
class Estimate:
    """A rate with its 95% interval (fractions, not percent)."""

    value: float
    lo: float
    hi: float
    n: int  # units per epoch (a mean when epochs differ)
    epochs: int
    clusters: int
    se: float  # clustered standard error, as Inspect's stderr(cluster=...) computes it
    n_eff: float  # the effective sample size the interval was computed at


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


def clopper_pearson(k: ArrayLike, n: ArrayLike) -> tuple[Array, Array]:
    """Exact binomial interval for k of n; k and n may be fractional (an effective count)."""
    k_a, n_a = np.broadcast_arrays(np.asarray(k, float), np.asarray(n, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k_a <= 0, 0.0, beta.ppf(ALPHA / 2, k_a, n_a - k_a + 1))
        hi = np.where(k_a >= n_a, 1.0, beta.ppf(1 - ALPHA / 2, k_a + 1, n_a - k_a))
    return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


def _residuals(sums: Array, sizes: Array) -> Array:
    """Each cluster's sum minus its expected share at the overall rate (clusters last)."""
    rate = sums.sum(axis=-1) / sizes.sum(axis=-1)
    return sums - rate[..., None] * sizes


def clustered_se(sums: ArrayLike, sizes: ArrayLike) -> Array:
    """Standard error of the ratio sum(sums)/sum(sizes) over clusters (last axis).

    The same number as Inspect's ``stderr(cluster=...)`` over the units: the squared deviations
    of each cluster's sum from its expected share, times C / (C - 1); 0 for one cluster.
    """
    s, m = np.broadcast_arrays(np.asarray(sums, float), np.asarray(sizes, float))
    c = s.shape[-1]
    if c < 2:
        return np.zeros(m.sum(axis=-1).shape)
    resid = (_residuals(s, m) ** 2).sum(axis=-1)
    return np.sqrt(resid * c / (c - 1)) / m.sum(axis=-1)


def effective_n(p: ArrayLike, se: ArrayLike, df: ArrayLike, sizes: ArrayLike) -> Array:
    """The sample size at which a binomial has the observed precision (see the module doc)."""
    m = np.asarray(sizes, float)
    p_a, se_a = np.asarray(p, float), np.asarray(se, float)
    total, c = m.sum(axis=-1), m.shape[-1]
    if np.all(m == 1):
        return np.broadcast_to(total, p_a.shape).astype(float)
    kish = total**2 / (m**2).sum(axis=-1)
    if c < 2:
        return np.broadcast_to(kish, p_a.shape).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        df_factor = (Z / student_t.ppf(1 - ALPHA / 2, np.clip(df, 1, c - 1))) ** 2
        raw = np.minimum(total, p_a * (1 - p_a) / se_a**2) * df_factor
    informative = (p_a > 0) & (p_a < 1) & (se_a > 0)
    return np.where(informative, np.maximum(kish, raw), kish)


def rate_interval(sums: ArrayLike, sizes: ArrayLike) -> tuple[Array, Array, Array, Array, Array]:
    """(rate, se, lo, hi, n_eff) of clustered pass/fail outcomes, clusters on the last axis."""
    s, m = np.broadcast_arrays(np.asarray(sums, float), np.asarray(sizes, float))
    p = s.sum(axis=-1) / m.sum(axis=-1)
    se = clustered_se(s, m)
    resid2 = _residuals(s, m) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        df = resid2.sum(axis=-1) ** 2 / (resid2**2).sum(axis=-1)
    n_eff = effective_n(p, se, np.nan_to_num(df, nan=1.0), m)
    lo, hi = clopper_pearson(p * n_eff, n_eff)
    return p, se, np.minimum(lo, p), np.maximum(hi, p), n_eff


def _correlation(x: Array, y: Array, m: Array) -> Array:
    """Correlation of the two ratio estimators sum(x)/sum(m) and sum(y)/sum(m) over clusters."""
    rx, ry = _residuals(x, m), _residuals(y, m)
    cov, vx, vy = ((rx * ry).sum(axis=-1), (rx**2).sum(axis=-1), (ry**2).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.sqrt(vx * vy)
    return np.clip(np.where((vx > 0) & (vy > 0), r, 0.0), -1.0, 1.0)


def difference_interval(
    gained: ArrayLike, lost: ArrayLike, sizes: ArrayLike
) -> tuple[Array, Array, Array]:
    """(B - A, lo, hi) from per-cluster sums of units gained and lost: MOVER on the two rates."""
    g, loss, m = np.broadcast_arrays(*(np.asarray(v, float) for v in (gained, lost, sizes)))
    pg, _, g_lo, g_hi, _ = rate_interval(g, m)
    pl, _, l_lo, l_hi, _ = rate_interval(loss, m)
    r = _correlation(g, loss, m)

    def spread(x: Array, y: Array) -> Array:
        return np.sqrt(np.maximum(x**2 + y**2 - 2 * r * x * y, 0.0))

    diff = pg - pl
    lo = diff - spread(pg - g_lo, l_hi - pl)
    hi = diff + spread(g_hi - pg, pl - l_lo)
    return diff, np.maximum(lo, -1.0), np.minimum(hi, 1.0)


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs against Binomial(lost+gained, 1/2)."""
    n = lost + gained
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(lost, gained) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _by_cluster(outcomes: Iterable[Outcome]) -> tuple[Array, Array]:
    """Per cluster (sorted): the summed value and the unit count, all epochs together."""
    num: dict[str, float] = defaultdict(float)
    den: dict[str, int] = defaultdict(int)
    for o in outcomes:
        num[o.cluster] += o.value
        den[o.cluster] += 1
    keys = sorted(num)
    return np.array([num[k] for k in keys]), np.array([den[k] for k in keys], float)


def estimate(outcomes: Sequence[Outcome]) -> Estimate | None:
    """The rate of one run with its 95% interval; None when nothing was scored.

    Epochs are units of the same cluster (the problem), so the interval speaks for problems like
    these, not only for these problems re-run; the rate equals Inspect's (epochs reduced by mean).
    """
    if not outcomes:
        return None
    sums, sizes = _by_cluster(outcomes)
    p, se, lo, hi, n_eff = rate_interval(sums, sizes)
    epochs = len({o.epoch for o in outcomes})
    return Estimate(
        value=float(p),
        lo=float(lo),
        hi=float(hi),
        n=round(len(outcomes) / epochs),
        epochs=epochs,
        clusters=len(sums),
        se=float(se),
        n_eff=float(n_eff),
    )


def _label(o: Outcome, epochs: int) -> str:
    return o.unit if epochs == 1 else f"{o.unit}#{o.epoch}"


def paired(a: Sequence[Outcome], b: Sequence[Outcome]) -> Paired | None:
    """Compare two runs on the (epoch, unit) pairs both scored; None when they share none.

    The interval clusters by problem like ``estimate``; McNemar counts a unit as passed only at
    value 1 and treats units as independent (exact for problems, optimistic for steps).
    """
    a_by = {(o.epoch, o.unit): o for o in a}
    b_by = {(o.epoch, o.unit): o for o in b}
    keys = sorted(set(a_by) & set(b_by))
    if not keys:
        return None
    epochs = len({k[0] for k in keys})
    # per cluster: A's sum, B's sum, units gained, units lost, units
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0] * 5)
    lost_units, gained_units = [], []
    for key in keys:
        oa, ob = a_by[key], b_by[key]
        row = sums[oa.cluster]
        row[0] += oa.value
        row[1] += ob.value
        row[2] += max(ob.value - oa.value, 0.0)
        row[3] += max(oa.value - ob.value, 0.0)
        row[4] += 1
        pass_a, pass_b = oa.value >= 1.0, ob.value >= 1.0
        if pass_a and not pass_b:
            lost_units.append(_label(oa, epochs))
        elif pass_b and not pass_a:
            gained_units.append(_label(oa, epochs))
    clusters = sorted(sums)
    table = np.array([sums[c] for c in clusters])
    diff, lo, hi = difference_interval(table[:, 2], table[:, 3], table[:, 4])
    total = float(table[:, 4].sum())
    return Paired(
        n=len(keys),
        a=float(table[:, 0].sum()) / total,
        b=float(table[:, 1].sum()) / total,
        diff=float(diff),
        lo=float(lo),
        hi=float(hi),
        lost=len(lost_units),
        gained=len(gained_units),
        p_value=mcnemar_exact(len(lost_units), len(gained_units)),
        lost_units=lost_units,
        gained_units=gained_units,
    )
