"""The record format (``wire.py``): plain data round-trips exactly, anything else becomes a
handle, and the decoder refuses malformed or oversized records before allocating them."""

from __future__ import annotations

import base64
import json
import tracemalloc
from typing import Any

import numpy as np
import pytest
import scipy.sparse
import sympy

from scievals.scicode.inside.wire import MAX_DEPTH, NotPlain, WireError, decode, encode


def _round_trip(value: Any) -> Any:
    return decode(json.loads(json.dumps(encode(value))))


class _IntSub(int):
    pass


class _ArrayLike:
    def __array__(self, dtype=None, copy=None):
        return np.zeros((0, 1))


DENSE = np.array([[0.0, 1.5], [2.0, 0.0]])
PLAIN = [
    ("none", None, None),
    ("bool", True, True),
    ("int", 12345678901234567890, 12345678901234567890),
    ("str", "héllo", "héllo"),
    ("float", 0.1, 0.1),
    ("float-inf", float("inf"), float("inf")),
    ("complex", 1.5 - 2j, 1.5 - 2j),
    ("np-float64", np.float64(2.5), np.float64(2.5)),
    ("np-float32", np.float32(2.5), np.float32(2.5)),
    ("np-int32", np.int32(-3), np.int32(-3)),
    ("np-bool", np.bool_(True), np.bool_(True)),
    ("np-complex64", np.complex64(1j), np.complex64(1j)),
    ("np-str", np.str_("ab"), np.str_("ab")),
    ("array-float", np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)),
    ("array-noncontiguous", np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3).T),
    ("array-0d", np.array(3.0), np.array(3.0)),
    ("array-empty", np.zeros((0, 3)), np.zeros((0, 3))),
    ("array-bool", np.array([True, False]), np.array([True, False])),
    ("array-complex", np.array([1j, 2.0]), np.array([1j, 2.0])),
    ("array-str", np.array(["a", "bc"]), np.array(["a", "bc"])),
    ("matrix", np.asmatrix(DENSE), np.asmatrix(DENSE)),
    (
        "array-object",
        np.array([1, "a", None], dtype=object),
        np.array([1, "a", None], dtype=object),
    ),
    ("tuple", (1, (2.0, "x")), (1, (2.0, "x"))),
    ("list", [1, [2, 3]], [1, [2, 3]]),
    ("dict", {"a": 1, 2.5: [1.0], (1, 2): "t"}, {"a": 1, 2.5: [1.0], (1, 2): "t"}),
    ("bytes", b"\x00\x01", b"\x00\x01"),
    ("csr", scipy.sparse.csr_matrix(DENSE), scipy.sparse.csr_matrix(DENSE)),
    ("csc", scipy.sparse.csc_matrix(DENSE), scipy.sparse.csc_matrix(DENSE)),
    ("coo", scipy.sparse.coo_matrix(DENSE), scipy.sparse.coo_matrix(DENSE)),
    ("lil", scipy.sparse.lil_matrix(DENSE), scipy.sparse.lil_matrix(DENSE)),
    ("csr-array", scipy.sparse.csr_array(DENSE), scipy.sparse.csr_array(DENSE)),
    ("sympy-symbol", sympy.Symbol("x"), sympy.Symbol("x")),
    ("sympy-expr-as-text", sympy.Symbol("x") ** 2 + 1, "x**2 + 1"),
]


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
    if scipy.sparse.issparse(a):
        return a.format == b.format and bool(np.array_equal(a.toarray(), b.toarray()))
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in PLAIN], ids=[c[0] for c in PLAIN])
def test_plain_round_trip(value, expected):
    assert _equal(_round_trip(value), expected)


class _Lying(int):
    """A subclass whose own methods lie: the base type's storage is what is recorded."""

    def __int__(self):
        raise AssertionError("the subclass's own method ran")

    __index__ = __repr__ = __str__ = __int__


class _LyingList(list):
    def __iter__(self):
        raise AssertionError("the subclass's own method ran")

    __len__ = __getitem__ = __iter__


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (_IntSub(5), 5),
        (_Lying(7), 7),
        (type("F", (float,), {})(1.5), 1.5),
        (type("S", (str,), {})("ab"), "ab"),
        (_LyingList([1.0, 2.0]), [1.0, 2.0]),
        (np.ma.masked_array([1.0, 2.0], mask=[False, True]), np.array([1.0, 2.0])),
        (np.arange(3.0).view(type("Sub", (np.ndarray,), {})), np.arange(3.0)),
    ],
    ids=[
        "int-subclass",
        "lying-int",
        "float-subclass",
        "str-subclass",
        "list-subclass",
        "masked-array-data",
        "ndarray-subclass",
    ],
)
def test_subclasses_of_plain_types_are_read_through_their_base(value, expected):
    """What the test would see of a subclass of a plain type is its base's data, read with the
    base type's own methods (the subclass's never run), decoded as the exact base type."""
    decoded = _round_trip(value)
    assert _equal(decoded, expected)


def test_namedtuples_keep_their_fields():
    import collections

    pair = collections.namedtuple("Pair", "eigenvalues eigenvectors")
    decoded = _round_trip(pair(np.ones(2), np.eye(2)))
    assert isinstance(decoded, tuple) and decoded._fields == ("eigenvalues", "eigenvectors")
    assert _equal(decoded.eigenvectors, np.eye(2)) and _equal(decoded[0], np.ones(2))
    eigh = np.linalg.eigh(np.eye(2))
    assert _round_trip(eigh)._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.parametrize("fields", [["a", "a"], ["class", "b"], ["_0", "b"], ["a b", "c"]])
def test_fields_that_cannot_be_names_give_a_plain_tuple(fields):
    assert type(decode({"tuple": [1, 2], "fields": fields})) is tuple


@pytest.mark.parametrize("fields", [[1, "b"], "ab", [["a"], "b"], ["a"], ["a", "b", "c"]])
def test_malformed_namedtuple_fields_are_refused(fields):
    with pytest.raises(WireError):
        decode({"tuple": [1, 2], "fields": fields})


@pytest.mark.parametrize("value", [_ArrayLike(), lambda: 1], ids=["array-like", "function"])
def test_non_plain_values_are_never_coerced(value):
    """A value without a plain base is no plain data: its own ``__array__`` never runs here."""
    with pytest.raises(NotPlain):
        encode(value)
    assert encode(value, other=lambda obj: {"handle": 7}) == {"handle": 7}


def test_handles_inside_containers():
    form = encode((1.0, _ArrayLike()), other=lambda obj: {"handle": 3, "type": "_ArrayLike"})
    assert decode(form, handle=lambda n, kind, view: f"handle {n}") == (1.0, "handle 3")
    with pytest.raises(WireError, match="unexpected handle"):
        decode(form)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


INT64 = {
    "ndarray": "<i8",
    "shape": [1],
    "b64": _b64(np.zeros(1, np.int64).tobytes()),
    "matrix": False,
}
REFUSED = [
    ("bare-list", [1, 2], "malformed"),
    ("empty-dict", {}, "unknown record value kind"),
    (
        "object-dtype-array",
        {"ndarray": "|O", "shape": [1], "b64": "", "matrix": False},
        "refusing dtype",
    ),
    ("object-dtype-scalar", {"npscalar": "|O8", "b64": ""}, "refusing dtype"),
    (
        "void-dtype",
        {"ndarray": "V8", "shape": [1], "b64": _b64(bytes(8)), "matrix": False},
        "refusing dtype",
    ),
    (
        "structured-dtype",
        {"ndarray": "i4,f8", "shape": [1], "b64": "", "matrix": False},
        "refusing dtype",
    ),
    # numpy parses comma lists through ast.literal_eval, raising what no decoder expects
    ("literal-eval-dtype", {"ndarray": "01", "shape": [], "b64": "", "matrix": ""}, "refusing"),
    ("bad-format-dtype", {"ndarray": "0:", "shape": [], "b64": "", "matrix": ""}, "refusing"),
    ("unknown-kind", {"pickle": "gASVAAAAAAAAAAA="}, "unknown record value kind"),
    ("nested-unknown", {"tuple": [{"unknown": 1}]}, "unknown record value kind"),
    # A shape claim larger than the bytes present is refused before anything is allocated.
    (
        "huge-shape-tiny-data",
        {"ndarray": "<f8", "shape": [10**9, 10**6], "b64": "", "matrix": False},
        "length",
    ),
    (
        "short-data",
        {"ndarray": "<f8", "shape": [2], "b64": _b64(bytes(8)), "matrix": False},
        "length",
    ),
    ("negative-dim", {"ndarray": "<f8", "shape": [-1], "b64": "", "matrix": False}, "shape"),
    (
        "too-many-dims",
        {"ndarray": "<f8", "shape": [1] * 40, "b64": _b64(bytes(8)), "matrix": False},
        "shape",
    ),
    (
        "bad-base64",
        {"ndarray": "<f8", "shape": [1], "b64": "!!!!!!!!!!!!", "matrix": False},
        "length|base64",
    ),
    ("objarray-size", {"objarray": [3], "items": [1]}, "size"),
    (
        "lil-20-million-rows",
        {
            "sparse": "lil",
            "array": False,
            "shape": [20_000_000, 1],
            "row": INT64,
            "col": INT64,
            "data": INT64,
        },
        "bound",
    ),
    (
        "dok-20-million-rows",
        {
            "sparse": "dok",
            "array": False,
            "shape": [20_000_000, 1],
            "row": INT64,
            "col": INT64,
            "data": INT64,
        },
        "bound",
    ),
    (
        "csr-huge-shape",
        {
            "sparse": "csr",
            "array": False,
            "shape": [2**40, 2**40],
            "row": INT64,
            "col": INT64,
            "data": INT64,
        },
        "bound",
    ),
    (
        "sparse-index-out-of-range",
        {
            "sparse": "csr",
            "array": False,
            "shape": [1, 1],
            "row": {
                "ndarray": "<i8",
                "shape": [1],
                "b64": _b64(np.array([5]).tobytes()),
                "matrix": False,
            },
            "col": INT64,
            "data": INT64,
        },
        "out of range",
    ),
    (
        "unknown-sparse-format",
        {
            "sparse": "weird",
            "array": False,
            "shape": [1, 1],
            "row": INT64,
            "col": INT64,
            "data": INT64,
        },
        "unknown sparse format",
    ),
    ("unhashable-key", {"dict": [[{"list": []}, 1]]}, "unhashable"),
]


@pytest.mark.parametrize(("value", "match"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_decode_refuses(value, match):
    """Refused before anything the record claims is allocated (memory, not time: a busy machine
    cannot fail it); every record here is a few bytes, whatever shape it claims."""
    tracemalloc.start()
    try:
        with pytest.raises(WireError, match=match):
            decode(value)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"refused only after allocating {peak:,} bytes"


def test_decode_bounds_nesting():
    deep: Any = 1
    for _ in range(MAX_DEPTH + 2):
        deep = {"tuple": [deep]}
    with pytest.raises(WireError, match="nested too deeply"):
        decode(deep)
    value: Any = 0
    for _ in range(MAX_DEPTH + 2):
        value = [value]
    with pytest.raises(NotPlain):
        encode(value)


def test_object_array_items_are_decoded_not_unpickled():
    array = decode({"objarray": [2], "items": [{"float": "1.5"}, "a"]})
    assert array.dtype == object and list(array) == [1.5, "a"]


def test_object_arrays_with_objects_inside_are_handles():
    """NumPy calls methods of an object array's items: such an array is never data."""
    array = np.array([1.0, _ArrayLike()], dtype=object)
    with pytest.raises(NotPlain):
        encode(array)
    assert encode(array, other=lambda obj: {"handle": 1}) == {"handle": 1}
