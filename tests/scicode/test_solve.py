"""Solving an assert's skeleton for ``target`` (dev targets regenerated from gold values)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scievals.scicode.grading.rewrite import plan_test
from scievals.scicode.regenerate import Unsolvable, solve_target

ARRAY = np.array([1.0, 2.0])
SOLVES = [
    ("allclose", "assert np.allclose(f(1), target)", [ARRAY], ARRAY),
    ("allclose-target-left", "assert np.allclose(target, f(1))", [ARRAY], ARRAY),
    ("allclose-atol", "assert np.allclose(f(1), target, atol=1e-3)", [ARRAY], ARRAY),
    ("equality", "assert f(1) == target", ["s"], "s"),
    ("equality-target-left", "assert target == f(1)", [3], 3),
    ("cmp-tuple", "assert cmp_tuple_or_list(f(1), target)", [(1.0, 2.0)], (1.0, 2.0)),
    (
        "boolop-subscripts",
        "assert np.allclose(d(c)[0], target[0]) and np.allclose(d(c)[1], target[1])",
        [ARRAY, 2.0],
        (ARRAY, 2.0),
    ),
    (
        "unpacked",
        "s, v = target\nassert g(Z) == s and np.allclose(Z, v)",
        [True, ARRAY],
        (True, ARRAY),
    ),
    (
        "unpacked-tuple-compare",
        "a, b, c = target\nassert a == aa and np.allclose((b, c), (bb, cc))",
        [1, (2.0, 3.0)],
        (1, 2.0, 3.0),
    ),
    (
        "helper",
        "def are_equivalent(a, b):\n    return True\nassert are_equivalent(f(1), target)",
        [ARRAY],
        ARRAY,
    ),
]


def _equal_loose(a: Any, b: Any) -> bool:
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_equal_loose(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.all(a == b)) and type(a) is type(b)


@pytest.mark.parametrize(
    ("snippet", "values", "expected"), [c[1:] for c in SOLVES], ids=[c[0] for c in SOLVES]
)
def test_solve_target(snippet, values, expected):
    plan = plan_test(0, snippet)
    assert _equal_loose(solve_target(plan, {0: tuple(values)}), expected)


def test_solve_target_without_checks_is_none():
    assert solve_target(plan_test(0, "assert f(0) == 0"), {}) is None


@pytest.mark.parametrize(
    ("snippet", "values"),
    [
        ("assert np.isclose(B[0], (0, -1)).any() == target.any()", {0: (True,)}),
        ("assert np.allclose(f(1), target)", {}),
        ("assert target", {0: ()}),
    ],
    ids=["target-method", "not-computed", "bare-target"],
)
def test_solve_target_unsolvable(snippet, values):
    with pytest.raises(Unsolvable):
        solve_target(plan_test(0, snippet), values)
