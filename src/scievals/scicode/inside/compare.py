"""Comparison helpers with the semantics of SciCode's ``scicode.compare.cmp`` (spec §4).

Test snippets call these by name; the trusted side of the scorer evaluates them against the
targets, so a completion can neither see nor replace them. One deliberate difference from the
official helpers and from ``np.allclose``: a zero-size value never matches a non-empty one
(broadcasting would otherwise let ``np.zeros((0, 1))`` match any target). The trusted tests see
NumPy through ``STRICT_NUMPY``, which applies the same rule to its comparison functions.

This module imports only NumPy, SciPy and SymPy: it also runs inside the sandbox's runtime.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse
import sympy


def has_empty(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is, or holds, a zero-size array or an empty sequence or mapping."""
    if depth > 32:
        return False
    if isinstance(value, np.ndarray):
        return value.size == 0 or (
            value.dtype == object and any(has_empty(v, depth + 1) for v in value.flat)
        )
    if isinstance(value, list | tuple):
        return len(value) == 0 or any(has_empty(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return len(value) == 0 or any(has_empty(v, depth + 1) for v in value.values())
    return False


def _one_empty(a: Any, b: Any) -> bool:
    try:
        return (np.size(a) == 0) != (np.size(b) == 0)
    except (ValueError, TypeError):  # ragged sequences: the comparison itself decides
        return False


def allclose(a: Any, b: Any, *args: Any, **kwargs: Any) -> bool:
    """``np.allclose``, except that a zero-size value never matches a non-empty one."""
    if _one_empty(a, b):
        return False
    return bool(np.allclose(a, b, *args, **kwargs))


def isclose(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    if _one_empty(a, b):
        raise ValueError("a zero-size value was compared with a non-empty one")
    return np.isclose(a, b, *args, **kwargs)


def array_equal(a: Any, b: Any, *args: Any, **kwargs: Any) -> bool:
    return not _one_empty(a, b) and bool(np.array_equal(a, b, *args, **kwargs))


def array_equiv(a: Any, b: Any) -> bool:
    return not _one_empty(a, b) and bool(np.array_equiv(a, b))


class _StrictNumpy:
    """NumPy as the trusted tests see it: the module, with the strict comparisons above."""

    allclose = staticmethod(allclose)
    isclose = staticmethod(isclose)
    array_equal = staticmethod(array_equal)
    array_equiv = staticmethod(array_equiv)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    def __dir__(self) -> list[str]:
        return dir(np)


STRICT_NUMPY = _StrictNumpy()

SPARSE_TYPES = (
    scipy.sparse.csr_matrix,
    scipy.sparse.csc_matrix,
    scipy.sparse.bsr_matrix,
    scipy.sparse.coo_matrix,
)


def _symbols_as_str(mapping: dict[Any, Any]) -> dict[Any, Any]:
    """As the official helper: Symbol values become strings, except under a Symbol key, where
    the original value is re-inserted under ``str(key)``."""
    out: dict[Any, Any] = {}
    for key, value in mapping.items():
        out[key] = str(value) if isinstance(value, sympy.Symbol) else value
        if isinstance(key, sympy.Symbol):
            out[str(key)] = value
            out.pop(key)
    return out


def are_dicts_close(dict1: dict, dict2: dict, atol: float = 1e-8, rtol: float = 1e-5) -> bool:
    """Same keys, and values close: strings and symbols by equality, sparse densified, else allclose."""
    dict1, dict2 = _symbols_as_str(dict1), _symbols_as_str(dict2)
    if dict1.keys() != dict2.keys():
        return False
    for key, value1 in dict1.items():
        value2 = dict2[key]
        if isinstance(value1, sympy.Symbol | str):
            if not value1 == value2:
                return False
        elif isinstance(value1, SPARSE_TYPES):
            if not allclose(value1.toarray(), value2.toarray(), atol=atol, rtol=rtol):
                return False
        else:
            try:
                if not allclose(value1, value2, atol=atol, rtol=rtol):
                    return False
            except ValueError:
                if not value1 == value2:
                    return False
    return True


def are_csc_matrix_close(matrix1: Any, matrix2: Any) -> bool:
    return allclose(matrix1.toarray(), matrix2.toarray())


def cmp_tuple_or_list(var1: Any, var2: Any) -> bool:
    """Element-wise: dicts by are_dicts_close, sparse densified, bools by ==, else allclose."""
    if len(var1) != len(var2):
        return False
    for v1, v2 in zip(var1, var2, strict=False):
        if isinstance(v1, dict):
            if not are_dicts_close(v1, v2):
                return False
        elif isinstance(v1, scipy.sparse.csr_matrix | scipy.sparse.csc_matrix):
            if not are_csc_matrix_close(v1, v2):
                return False
        elif isinstance(v1, bool):
            if not v1 == v2:
                return False
        else:
            try:
                if not allclose(v1, v2):
                    return False
            except ValueError:
                if not v1 == v2:
                    return False
    return True


HELPERS = {
    "are_dicts_close": are_dicts_close,
    "are_csc_matrix_close": are_csc_matrix_close,
    "cmp_tuple_or_list": cmp_tuple_or_list,
}
