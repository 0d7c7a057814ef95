"""Comparison helpers (spec §4), hand-checked and against the official ``scicode.compare.cmp``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
import sympy

from scievals.scicode.inside.compare import (
    HELPERS,
    STRICT_NUMPY,
    allclose,
    are_csc_matrix_close,
    are_dicts_close,
    array_equal,
    cmp_tuple_or_list,
)

from .conftest import official

X, Y = sympy.Symbol("x"), sympy.Symbol("y")
M = np.array([[1.0, 0.0], [0.0, 2.0]])

# (id, a, b, expected cmp_tuple_or_list(a, b))
CMP_CASES = [
    ("equal-arrays", [np.ones(3), 2.0], [np.ones(3), 2.0], True),
    ("within-default-tol", [1.0 + 1e-9], [1.0], True),
    ("rtol-1e-5", [1.0 + 2e-5], [1.0], False),
    ("atol-1e-8-at-zero", [1e-9], [0.0], True),
    ("atol-at-zero-too-big", [1e-7], [0.0], False),
    ("not-close", [np.ones(3)], [np.zeros(3)], False),
    ("length-mismatch", [1.0, 2.0], [1.0], False),
    ("empty", [], [], True),
    ("tuple-vs-list", (1.0, 2.0), [1.0, 2.0], True),
    ("dict-element", [{"a": 1.0}], [{"a": 1.0 + 1e-10}], True),
    ("dict-element-different-keys", [{"a": 1.0}], [{"b": 1.0}], False),
    ("csr-densified", [scipy.sparse.csr_matrix(M)], [scipy.sparse.csr_matrix(M)], True),
    ("csc-vs-csr", [scipy.sparse.csc_matrix(M)], [scipy.sparse.csr_matrix(M)], True),
    ("csr-differs", [scipy.sparse.csr_matrix(M)], [scipy.sparse.csr_matrix(2 * M)], False),
    ("bool-by-equality", [True], [1], True),
    ("bool-false", [True], [False], False),
    ("np-bool-by-allclose", [np.bool_(True)], [np.bool_(True)], True),
    ("shape-mismatch-falls-back-to-eq", [np.zeros(2)], [np.zeros(3)], "ValueError"),
    ("ragged-lists-eq", [[1, [2, 3]]], [[1, [2, 3]]], True),
    ("ragged-lists-differ", [[1, [2, 3]]], [[1, [2, 4]]], False),
    ("strings", ["a"], ["a"], "TypeError"),
    ("nan-not-close", [np.nan], [np.nan], False),
    ("broadcast-scalar", [np.ones(3)], [1.0], True),
    ("complex", [1 + 1j], [1 + 1j + 1e-12], True),
]


def _outcome(fn, *args):
    try:
        return bool(fn(*args))
    except Exception as exc:  # the official helpers let TypeErrors escape; so must ours
        return "TypeError" if isinstance(exc, TypeError) else type(exc).__name__


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in CMP_CASES], ids=[c[0] for c in CMP_CASES]
)
def test_cmp_tuple_or_list(a, b, expected, capsys):
    ours = _outcome(cmp_tuple_or_list, a, b)
    theirs = _outcome(official().cmp_tuple_or_list, a, b)
    assert ours == theirs
    assert ours == expected


# (id, d1, d2, kwargs, expected are_dicts_close(d1, d2, **kwargs))
DICT_CASES = [
    ("equal", {"a": 1.0, "b": np.arange(3)}, {"a": 1.0, "b": np.arange(3)}, {}, True),
    ("close", {"a": 1.0}, {"a": 1.0 + 1e-9}, {}, True),
    ("not-close", {"a": 1.0}, {"a": 1.1}, {}, False),
    ("atol-param", {"a": 1.0}, {"a": 1.05}, {"atol": 0.1}, True),
    ("rtol-param", {"a": 100.0}, {"a": 101.0}, {"rtol": 0.02}, True),
    ("key-sets-differ", {"a": 1.0}, {"a": 1.0, "b": 2.0}, {}, False),
    ("float-keys", {1.0: 2.0}, {1.0: 2.0}, {}, True),
    ("float-key-vs-str-key", {1.0: 2.0}, {"1": 2.0}, {}, False),
    ("symbol-key-as-str", {X: 1.0}, {"x": 1.0}, {}, True),
    ("symbol-value-as-str", {"a": Y}, {"a": "y"}, {}, True),
    ("symbol-values-both", {"a": Y}, {"a": Y}, {}, True),
    ("symbol-value-differs", {"a": Y}, {"a": "z"}, {}, False),
    ("str-values-equal", {"a": "up"}, {"a": "up"}, {}, True),
    ("str-values-differ", {"a": "up"}, {"a": "down"}, {}, False),
    (
        "sparse-densified",
        {"H": scipy.sparse.coo_matrix(M)},
        {"H": scipy.sparse.csr_matrix(M)},
        {},
        True,
    ),
    (
        "bsr-densified",
        {"H": scipy.sparse.bsr_matrix(M)},
        {"H": scipy.sparse.csr_matrix(M)},
        {},
        True,
    ),
    (
        "sparse-differs",
        {"H": scipy.sparse.csr_matrix(M)},
        {"H": scipy.sparse.csr_matrix(M * 0)},
        {},
        False,
    ),
    ("shape-mismatch-falls-back-to-eq", {"a": np.zeros(2)}, {"a": np.zeros(3)}, {}, "ValueError"),
    ("ragged-value-eq", {"a": [1, [2]]}, {"a": [1, [2]]}, {}, True),
    ("bool-values", {"a": True}, {"a": np.bool_(True)}, {}, True),
    ("empty", {}, {}, {}, True),
]


@pytest.mark.parametrize(
    ("d1", "d2", "kwargs", "expected"), [c[1:] for c in DICT_CASES], ids=[c[0] for c in DICT_CASES]
)
def test_are_dicts_close(d1, d2, kwargs, expected):
    ours = _outcome(lambda: are_dicts_close(d1, d2, **kwargs))
    theirs = _outcome(lambda: official().are_dicts_close(d1, d2, **kwargs))
    assert ours == theirs
    assert ours == expected


def test_are_dicts_close_symbol_key_with_symbol_value():
    """Under a Symbol key the official helper keeps a Symbol value (then unequal to a str)."""
    d1, d2 = {X: Y}, {"x": "y"}
    assert official().are_dicts_close(d1, d2) is False
    assert are_dicts_close(d1, d2) is False


def test_are_dicts_close_does_not_mutate_inputs():
    d1 = {X: Y, "a": 1.0}
    are_dicts_close(d1, {"x": "y", "a": 1.0})
    assert d1 == {X: Y, "a": 1.0}


def test_are_csc_matrix_close():
    assert are_csc_matrix_close(scipy.sparse.csc_matrix(M), scipy.sparse.csr_matrix(M))
    assert not are_csc_matrix_close(scipy.sparse.csc_matrix(M), scipy.sparse.csc_matrix(M.T * 3))


def test_helpers_exposed_to_skeletons():
    assert set(HELPERS) == {"are_dicts_close", "are_csc_matrix_close", "cmp_tuple_or_list"}


EMPTY_CASES = [
    ("zero-size-vs-array", np.zeros((0, 1, 1)), np.ones(3), False),
    ("array-vs-zero-size", np.ones(3), np.zeros((0,)), False),
    ("both-empty", np.zeros(0), np.zeros(0), True),
    ("scalar-vs-zero-size", np.zeros((0, 1)), 2.0, False),
    ("ragged-decided-by-comparison", [1.0, [2.0]], [1.0, [2.0]], None),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), [c[1:] for c in EMPTY_CASES], ids=[c[0] for c in EMPTY_CASES]
)
def test_zero_size_never_matches_non_empty(a, b, expected):
    """np.allclose broadcasts a zero-size array against anything and says True; we do not."""
    if expected is None:
        with pytest.raises(ValueError):
            allclose(a, b)
        return
    assert allclose(a, b) is expected
    assert STRICT_NUMPY.allclose(a, b) is expected
    assert array_equal(a, b) is expected
    assert cmp_tuple_or_list([a], [b]) is expected
    if not expected:
        with pytest.raises(ValueError, match="zero-size"):
            STRICT_NUMPY.isclose(a, b)


def test_strict_numpy_is_numpy_otherwise():
    assert STRICT_NUMPY.ndarray is np.ndarray
    assert STRICT_NUMPY.linalg is np.linalg
    assert np.array_equal(STRICT_NUMPY.arange(3), np.arange(3))
