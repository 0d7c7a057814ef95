"""Coverage of every 95% interval the report and the tasks print, by seeded simulation.

Runs are simulated with known rates, shaped like the benchmarks: SciCode problems of 1 to 15
steps (3 to 80 problems), SciBench books of 20 to 100 problems. Within a problem every unit (a
step, an epoch) shares the problem's own pass rate, drawn from a beta distribution with the
given intra-problem correlation (0: independent, 0.8: steps pass or fail nearly together).
Each interval must cover the true rate in at least 93% of runs in every cell of the grid, and
no interval may have zero width. Run with ``-s`` to see the table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from scievals.stats import difference_interval, rate_interval

SIMS = 2000
RATES = (0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99)
PROBLEMS = (3, 5, 15, 40, 80)
CORRELATIONS = (0.0, 0.3, 0.8)
BOOKS = (20, 33, 50, 100)
FLOOR = 0.93
# Steps per SciCode problem: 1 to 15, most 2 to 5 (mean about 4, as 338 steps in 80 problems).
STEP_WEIGHTS = np.array([10, 14, 14, 12, 10, 8, 6, 4, 3, 2, 2, 1, 1, 1, 1], float)


@dataclass(frozen=True)
class Cell:
    scenario: str  # a row of the printed table
    rate: float
    detail: str
    coverage: float
    min_width: float


def _problem_rates(rng: np.random.Generator, p: float, rho: float, shape: tuple) -> np.ndarray:
    """Each problem's own pass rate: mean p, correlation rho between its units."""
    if rho == 0:
        return np.full(shape, p)
    k = 1 / rho - 1
    return rng.beta(p * k, (1 - p) * k, size=shape)


def _steps(rng: np.random.Generator, problems: int) -> np.ndarray:
    return rng.choice(np.arange(1, 16), size=problems, p=STEP_WEIGHTS / STEP_WEIGHTS.sum())


def _rate_cell(
    scenario: str, p: float, detail: str, sizes: np.ndarray, rho: float, seed: int
) -> Cell:
    rng = np.random.default_rng(seed)
    q = _problem_rates(rng, p, rho, (SIMS, len(sizes)))
    passed = rng.binomial(sizes, q)
    _, _, lo, hi, _ = rate_interval(passed, np.broadcast_to(sizes, passed.shape).astype(float))
    return Cell(scenario, p, detail, float(np.mean((lo <= p) & (p <= hi))), float(np.min(hi - lo)))


def _scicode(seed: int) -> Iterator[Cell]:
    for i, p in enumerate(RATES):
        for problems in PROBLEMS:
            steps = _steps(np.random.default_rng(problems), problems)
            for rho in CORRELATIONS:
                for epochs in (1, 3):
                    detail = f"{problems} problems, rho {rho}, {epochs} epoch(s)"
                    s = seed + 1000 * i + 10 * problems + int(10 * rho) + epochs
                    yield _rate_cell("scicode steps", p, detail, steps * epochs, rho, s)
                    # one unit per epoch; with one epoch rho is moot (a Bernoulli(p) per problem)
                    main = np.full(problems, epochs)
                    yield _rate_cell("scicode main problems", p, detail, main, rho, s)


def _pass_at_true(p: float, rho: float, k: int) -> float:
    """E[1 - (1 - q)^k] for a problem's rate q ~ Beta with mean p, correlation rho (q = p at 0)."""
    if rho == 0:
        return 1 - (1 - p) ** k
    a, b = p * (1 / rho - 1), (1 - p) * (1 / rho - 1)
    return 1 - float(np.prod([(b + j) / (a + b + j) for j in range(k)]))


def _pass_at(seed: int) -> Iterator[Cell]:
    """pass@k over N epochs: each unit's unbiased estimate from its c of N passing epochs, the
    interval by the report's rule (clusters of their fractional sums), against E[pass@k]."""
    for i, p in enumerate(RATES):
        for problems in (3, 15, 80):
            steps = _steps(np.random.default_rng(problems), problems)
            for rho in CORRELATIONS:
                for epochs in (4, 16):
                    for k in (2, epochs):
                        rng = np.random.default_rng(seed + 1000 * i + problems + int(10 * rho) + k)
                        estimator = np.array(
                            [
                                1 - math.comb(epochs - c, k) / math.comb(epochs, k)
                                for c in range(epochs + 1)
                            ]
                        )
                        true = _pass_at_true(p, rho, k)
                        q = _problem_rates(rng, p, rho, (SIMS, problems))
                        detail = f"{problems} problems, rho {rho}, pass@{k} of {epochs}"
                        for unit, sizes in (
                            ("main problems", np.ones(problems, int)),
                            ("steps", steps),
                        ):
                            values = estimator[rng.binomial(epochs, np.repeat(q, sizes, axis=-1))]
                            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
                            sums = np.add.reduceat(values, starts, axis=-1)
                            _, _, lo, hi, _ = rate_interval(
                                sums, np.broadcast_to(sizes, sums.shape).astype(float)
                            )
                            yield Cell(
                                f"scicode pass@k, {unit}",
                                p,
                                detail,
                                float(np.mean((lo <= true + 1e-12) & (true - 1e-12 <= hi))),
                                float(np.min(hi - lo)),
                            )


def _scibench(seed: int) -> Iterator[Cell]:
    for i, p in enumerate(RATES):
        for n in BOOKS:
            yield _rate_cell(
                "scibench book", p, f"{n} problems", np.ones(n, int), 0.0, seed + i + n
            )
        # all ten books, rates p/2, p, 3p/2 (capped), true value the problem-weighted mean
        sizes = np.array([107, 39, 33, 49, 73, 47, 67, 50, 75, 42])
        book_rates = np.minimum(p * np.resize([0.5, 1.0, 1.5], len(sizes)), 1.0)
        true = float((sizes * book_rates).sum() / sizes.sum())
        rng = np.random.default_rng(seed + 500 + i)
        passed = rng.binomial(sizes, book_rates, size=(SIMS, len(sizes))).sum(axis=1)
        n = sizes.sum()
        _, _, lo, hi, _ = rate_interval((np.arange(n) < passed[:, None]).astype(float), np.ones(n))
        cover = float(np.mean((lo <= true) & (true <= hi)))
        yield Cell("scibench overall (10 books)", p, "580 problems", cover, float(np.min(hi - lo)))


def _paired(seed: int) -> Iterator[Cell]:
    """B re-answers each unit with probability 1 - keep, at a rate `shift` higher."""
    for i, p in enumerate((0.01, 0.05, 0.2, 0.5, 0.95)):
        for shift in (0.0, 0.1):
            b_rate = min(p + shift, 0.99)
            for problems in (3, 15, 80):
                for unit in ("steps", "problems"):
                    rng = np.random.default_rng(seed + 100 * i + problems + int(10 * shift))
                    sizes = _steps(rng, problems) if unit == "steps" else np.ones(problems, int)
                    for rho in (0.0, 0.8):
                        for keep in (0.5, 0.95):
                            qa = _problem_rates(rng, p, rho, (SIMS, problems))
                            qb = _problem_rates(rng, b_rate, rho, (SIMS, problems))
                            gain, loss = (1 - keep) * qb * (1 - qa), (1 - keep) * (1 - qb) * qa
                            probs = np.stack([gain, loss, 1 - gain - loss], axis=-1)
                            counts = rng.multinomial(np.broadcast_to(sizes, qa.shape), probs)
                            d, lo, hi = difference_interval(
                                counts[..., 0],
                                counts[..., 1],
                                np.broadcast_to(sizes, qa.shape).astype(float),
                            )
                            true = (1 - keep) * (b_rate - p)
                            covered = (lo <= true + 1e-12) & (true - 1e-12 <= hi)
                            yield Cell(
                                f"paired difference, {unit}",
                                p,
                                f"B - A {true:+.3f}, {problems} problems, rho {rho}, keep {keep}",
                                float(np.mean(covered)),
                                float(np.min(hi - lo)),
                            )


def coverage_table(cells: list[Cell]) -> str:
    """The lowest coverage of each scenario at each rate, over its sizes and correlations."""
    worst: dict[str, dict[float, float]] = defaultdict(dict)
    for c in cells:
        worst[c.scenario][c.rate] = min(worst[c.scenario].get(c.rate, 1.0), c.coverage)
    lines = [
        "| scenario (lowest coverage over its cells) | "
        + " | ".join(f"p = {p}" for p in RATES)
        + " |",
        "|---|" + "---|" * len(RATES),
    ]
    for scenario, by_rate in worst.items():
        row = [f"{100 * by_rate[p]:.1f}%" if p in by_rate else "" for p in RATES]
        lines.append(f"| {scenario} | " + " | ".join(row) + " |")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def cells() -> list[Cell]:
    out = [*_scicode(1), *_scibench(2), *_paired(3), *_pass_at(4)]
    print("\n" + coverage_table(out) + f"\n({len(out)} cells, {SIMS} runs each)")
    return out


def test_every_interval_covers_the_true_rate(cells: list[Cell]) -> None:
    low = [c for c in cells if c.coverage < FLOOR]
    assert low == []


def test_no_interval_has_zero_width(cells: list[Cell]) -> None:
    assert [c for c in cells if c.min_width <= 0] == []


def test_the_grid_is_complete(cells: list[Cell]) -> None:
    scenarios = {c.scenario for c in cells}
    assert len(scenarios) == 8
    assert {c.rate for c in cells} >= {0.01, 0.05, 0.2, 0.5}
