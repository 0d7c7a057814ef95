"""The record format: how values cross from a sandboxed step program to the trusted side.

Both halves live here so they cannot drift apart: ``encode`` runs inside the sandbox (this file's
source is shipped into the step program, see ``recorder.py``) and ``decode`` runs on the trusted
side. Only plain data crosses: Python and NumPy scalars, arrays of numeric, string or time
dtypes (raw bytes, never pickle), tuples, lists, dicts, bytes, SciPy sparse matrices by their
COO components and SymPy objects as text. Anything else (a model's class instance, a function)
is sent as a numbered *handle*, which the trusted side can only ask for attributes and calls.

``decode`` treats its input as hostile: every size is checked against the bytes actually
present before anything is allocated, nesting is bounded, and nothing is evaluated.

This module imports only the standard library and NumPy at the top, so that the runtime's
interpreter can execute it as it is.
"""

from __future__ import annotations

import base64
import collections
import copy
import keyword
import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy

SAFE_KINDS = "biufcSUmM"
"""NumPy dtype kinds that are plain data (no objects, no structured records)."""
MAX_DEPTH = 48
MAX_NDIM = 32
MAX_SPARSE_DIM = 1 << 24
MAX_SPARSE_ROWS_LISTED = 1 << 16
"""lil and dok matrices cost a Python object per row or entry: their row count is bounded."""
SPARSE_FORMATS = ("coo", "csr", "csc", "bsr", "dia", "lil", "dok")
MAX_RECORD_BYTES = 384 << 20
"""What one step program may record. The largest targets' values fit: test steps 63.2, 63.4 and
63.5 hand back grids of up to 4000 x 4000 float64 (about 230 MiB of records for 63.2)."""
MAX_VIEW_ITEMS = 1 << 20
"""Items recorded of one iterable that NumPy cannot turn into a plain array."""
MAX_FIELDS = 256
_NOT_VIEWED = ("builtins.function", "builtins.builtin_function_or_method", "builtins.method")


class NotPlain(Exception):
    """Raised by ``encode`` for a value that is not plain data (it becomes a handle)."""


class WireError(ValueError):
    """A record value is malformed or over a bound (the step fails; nothing is trusted)."""


# ---- inside the sandbox ---------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def encode(value: Any, other: Callable[[Any], Any] | None = None, depth: int = 0) -> Any:
    """A JSON-ready form of ``value``; ``other`` turns non-plain leaves into handles (else
    ``NotPlain``). Types are checked exactly, so no method of the value itself is called."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is int:
        return value
    if kind is float:
        return {"float": repr(value)}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    if kind is bytes:
        return {"bytes": _b64(value)}
    if kind is tuple or kind is list:
        return {kind.__name__: [encode(x, other, depth + 1) for x in value]}
    if kind is dict:
        return {
            "dict": [
                [encode(k, other, depth + 1), encode(v, other, depth + 1)] for k, v in value.items()
            ]
        }
    if kind is numpy.ndarray or kind is numpy.matrix:
        matrix = kind is numpy.matrix
        if value.dtype.kind in SAFE_KINDS and value.dtype.fields is None:
            return {
                "ndarray": value.dtype.str,
                "shape": list(value.shape),
                "b64": _b64(numpy.ascontiguousarray(value).tobytes()),
                "matrix": matrix,
            }
        if value.dtype.kind == "O" and not matrix:
            try:  # items must be plain: NumPy would call their methods on the trusted side
                items = [encode(x, None, depth + 1) for x in value.ravel().tolist()]
            except NotPlain:
                items = None
            if items is not None:
                return {"objarray": list(value.shape), "items": items}
    elif (
        isinstance(value, numpy.generic)
        and kind.__module__ == "numpy"
        and value.dtype.kind in SAFE_KINDS
        and value.dtype.fields is None
    ):
        return {"npscalar": value.dtype.str, "b64": _b64(value.tobytes())}
    base = _base_form(value, kind, other, depth)
    if base is not None:
        return base
    sparse = _sparse_format(kind)
    if sparse is not None:
        coo = value.tocoo()
        return {
            "sparse": sparse,
            "array": kind.__name__.endswith("_array"),
            "shape": [int(n) for n in coo.shape],
            "row": encode(numpy.asarray(coo.row), other, depth + 1),
            "col": encode(numpy.asarray(coo.col), other, depth + 1),
            "data": encode(numpy.asarray(coo.data), other, depth + 1),
        }
    if _is_sympy(kind):
        return {"sympy": kind.__name__, "text": str(value)}
    if other is None:
        raise NotPlain(kind.__name__)
    return other(value)


def _base_form(value: Any, kind: type, other: Callable[[Any], Any] | None, depth: int) -> Any:
    """A subclass of a plain type, as its plain base holds it (namedtuples keep their field
    names), read through the base type's own methods, never the subclass's; None otherwise."""
    if isinstance(value, tuple):
        form = encode(tuple.__getitem__(value, slice(None)), other, depth)
        fields = getattr(kind, "_fields", None)
        if (
            type(fields) is tuple
            and len(fields) == len(form["tuple"]) <= MAX_FIELDS
            and all(type(f) is str and len(f) <= 64 for f in fields)
        ):
            form["fields"] = list(fields)
        return form
    if isinstance(value, list):
        return encode(list.__getitem__(value, slice(None)), other, depth)
    if isinstance(value, dict):
        form = encode({k: dict.__getitem__(value, k) for k in dict.keys(value)}, other, depth)
        missing = _missing(value)
        if missing is not None:
            form["missing"] = missing
        return form
    if isinstance(value, numpy.ndarray) and kind is not numpy.ndarray and kind is not numpy.matrix:
        return encode(numpy.ndarray.view(value, numpy.ndarray), other, depth)
    for base in (bool, int, float, complex, str, bytes):
        if isinstance(value, base) and not isinstance(value, numpy.generic):
            return encode(getattr(base, f"__{base.__name__}__", base.__repr__)(value))
    return None


def _missing(value: dict[Any, Any]) -> Any:
    """What reading a missing key gives, for the standard dicts that have a default: a
    ``defaultdict``'s factory's value (inserted, as it inserts it) or a ``Counter``'s 0."""
    if isinstance(value, collections.Counter):
        return {"counter": True}
    factory = getattr(value, "default_factory", None)
    if isinstance(value, collections.defaultdict) and factory is not None:
        try:
            return {"default": encode(factory())}
        except Exception:  # noqa: BLE001 - a factory whose value is not plain data
            return None
    return None


def view_form(value: Any, other: Callable[[Any], Any], depth: int) -> tuple[Any, Any]:
    """What the benchmark's own operations see of a value that is not plain data: the array
    NumPy makes of it, or else the items iterating it yields, and its length. (None, None) for
    functions, classes and modules. The second element is the sandbox's copy of what was
    recorded (iterating an iterator consumes it: the test must get the same items)."""
    kind = type(value)
    if isinstance(value, type) or f"{kind.__module__}.{kind.__name__}" in _NOT_VIEWED:
        return None, None
    if kind.__name__ == "module":
        return None, None
    form: dict[str, Any] = {
        "getitem": hasattr(kind, "__getitem__"),
        "iter": hasattr(kind, "__iter__") or hasattr(kind, "__getitem__"),
    }
    try:
        length = len(value)
    except Exception:  # noqa: BLE001 - no length: the test gets none either
        length = None
    if type(length) is int and length >= 0:
        form["len"] = length
    try:
        array = numpy.asarray(value)
    except Exception:  # noqa: BLE001 - NumPy cannot make an array of it
        array = None
    if (
        type(array) is numpy.ndarray
        and array.dtype.kind in SAFE_KINDS
        and array.dtype.fields is None
    ):
        form["array"] = encode(array)
        return form, ("array", array)
    if not form["iter"]:
        return form, None
    try:
        items = []
        for item in value:
            if len(items) == MAX_VIEW_ITEMS:
                return form, None
            items.append(item)
    except Exception:  # noqa: BLE001 - its iteration failed
        return form, None
    form["items"] = [encode(x, other, depth + 1) for x in items]
    return form, ("items", items)


def _sparse_format(kind: type) -> str | None:
    import sys

    sparse = sys.modules.get("scipy.sparse")
    if sparse is None:
        return None
    for fmt in SPARSE_FORMATS:
        if kind is getattr(sparse, f"{fmt}_matrix", None) or kind is getattr(
            sparse, f"{fmt}_array", None
        ):
            return fmt
    return None


def _is_sympy(kind: type) -> bool:
    import sys

    sympy = sys.modules.get("sympy")
    module = getattr(kind, "__module__", "") or ""
    return sympy is not None and module.startswith("sympy.")


# ---- on the trusted side --------------------------------------------------------------------


def _dtype(text: Any) -> numpy.dtype:
    if not isinstance(text, str) or len(text) > 16:
        raise WireError("malformed dtype")
    try:
        dtype = numpy.dtype(text)
    except TypeError as exc:
        raise WireError(f"unknown dtype {text!r}") from exc
    if dtype.kind not in SAFE_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"refusing dtype {text!r}")
    return dtype


def _shape(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > MAX_NDIM:
        raise WireError("malformed shape")
    if not all(type(n) is int and 0 <= n < 1 << 48 for n in value):
        raise WireError("malformed shape")
    return tuple(value)


def _raw(text: Any, expected: int) -> bytes:
    if not isinstance(text, str) or len(text) != 4 * math.ceil(expected / 3):
        raise WireError("the data's length does not match its shape and dtype")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise WireError("malformed base64 data") from exc
    if len(raw) != expected:
        raise WireError("the data's length does not match its shape and dtype")
    return raw


def decode(value: Any, handle: Callable[..., Any] | None = None, depth: int = 0) -> Any:
    """The plain value a record describes; ``handle(number, type_name, view)`` turns a handle
    into its stand-in."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is not dict or len(value) < 1:
        raise WireError(f"malformed record value: {str(value)[:80]}")
    inner = depth + 1
    if "float" in value:
        return float(_text(value["float"]))
    if "complex" in value:
        parts = value["complex"]
        if not isinstance(parts, list) or len(parts) != 2:
            raise WireError("malformed complex")
        return complex(float(_text(parts[0])), float(_text(parts[1])))
    if "bytes" in value:
        text = _text(value["bytes"], limit=None)
        return _raw(text, _b64_size(text))
    if "tuple" in value:
        items = tuple(decode(x, handle, inner) for x in _items(value["tuple"]))
        fields = value.get("fields")
        return items if fields is None else _named(fields, len(items))(*items)
    if "list" in value:
        return [decode(x, handle, inner) for x in _items(value["list"])]
    if "dict" in value:
        out = _dict_kind(value.get("missing"), inner)
        for pair in _items(value["dict"]):
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("malformed dict item")
            key = decode(pair[0], handle, inner)
            try:
                out[key] = decode(pair[1], handle, inner)
            except TypeError as exc:
                raise WireError("unhashable dict key") from exc
        return out
    if "ndarray" in value:
        dtype, shape = _dtype(value["ndarray"]), _shape(value.get("shape"))
        raw = _raw(value.get("b64"), math.prod(shape) * dtype.itemsize)
        array = numpy.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return numpy.asmatrix(array) if value.get("matrix") is True and array.ndim == 2 else array
    if "objarray" in value:
        shape = _shape(value["objarray"])
        items = _items(value.get("items"))
        if len(items) != math.prod(shape):
            raise WireError("object array size does not match its shape")
        array = numpy.empty(len(items), dtype=object)
        for i, item in enumerate(items):
            array[i] = decode(item, None, inner)
        return array.reshape(shape)
    if "npscalar" in value:
        dtype = _dtype(value["npscalar"])
        return numpy.frombuffer(_raw(value.get("b64"), dtype.itemsize), dtype=dtype)[0]
    if "sparse" in value:
        return _sparse(value, handle, inner)
    if "sympy" in value:
        # A Symbol is rebuilt (comparisons turn Symbols into strings); any other expression stays
        # text: parsing text written by the program with sympy would evaluate it.
        text = _text(value.get("text"), limit=None)
        if value["sympy"] == "Symbol":
            import sympy

            return sympy.Symbol(text)
        return text
    if "handle" in value:
        number = value["handle"]
        if handle is None or type(number) is not int:
            raise WireError("unexpected handle")
        return handle(
            number, _text(value.get("type", "object"), limit=128), _view(value, handle, inner)
        )
    raise WireError(f"unknown record value kind: {sorted(value)[:4]}")


class View:
    """What was recorded of a model object that is not plain data (``view_form``), and which
    of the benchmark's operations its type has (``[i]``, iteration)."""

    __slots__ = ("length", "array", "items", "getitem", "iterable")

    def __init__(
        self,
        length: int | None,
        array: numpy.ndarray | None,
        items: list[Any] | None,
        getitem: bool = False,
        iterable: bool = False,
    ) -> None:
        self.length, self.array, self.items = length, array, items
        self.getitem, self.iterable = getitem, iterable


def _dict_kind(missing: Any, depth: int) -> dict[Any, Any]:
    """An empty dict that reads a missing key as the model's dict did (``_missing``)."""
    if missing is None:
        return {}
    if missing == {"counter": True}:
        return collections.Counter()
    if type(missing) is dict and set(missing) == {"default": None}.keys():
        default = decode(missing["default"], None, depth)
        return collections.defaultdict(lambda: copy.deepcopy(default))
    raise WireError("malformed dict default")


def _view(value: dict[str, Any], handle: Callable[..., Any], depth: int) -> View | None:
    form = value.get("view")
    if form is None:
        return None
    if type(form) is not dict:
        raise WireError("malformed view")
    length = form.get("len")
    if length is not None and not (type(length) is int and 0 <= length < 1 << 48):
        raise WireError("malformed view length")
    array = None if form.get("array") is None else decode(form["array"], None, depth)
    if array is not None and type(array) is not numpy.ndarray:
        raise WireError("malformed view array")
    items = form.get("items")
    if items is not None:
        items = [decode(x, handle, depth) for x in _items(items)]
    return View(length, array, items, form.get("getitem") is True, form.get("iter") is True)


@lru_cache(maxsize=256)
def _named_class(fields: tuple[str, ...]) -> type:
    return collections.namedtuple("Result", fields)


def _named(fields: Any, size: int) -> Callable[..., tuple[Any, ...]]:
    """A namedtuple type with these field names; a plain tuple where they cannot be names
    (``namedtuple(..., rename=True)`` makes ``_0``): the fields only serve attribute reads."""
    names = tuple(_text(f) for f in _items(fields))
    if (
        len(names) != size
        or size > MAX_FIELDS
        or len(set(names)) != size
        or not all(n.isidentifier() and not keyword.iskeyword(n) and n[0] != "_" for n in names)
    ):
        return lambda *items: items
    return _named_class(names)


def _text(value: Any, limit: int | None = 64) -> str:
    if not isinstance(value, str) or (limit is not None and len(value) > limit):
        raise WireError("malformed text field")
    return value


def _items(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise WireError("malformed sequence")
    return value


def _b64_size(text: str) -> int:
    return len(text) // 4 * 3 - text[-2:].count("=") if text else 0


def _sparse(value: dict[str, Any], handle: Callable[..., Any] | None, depth: int) -> Any:
    import scipy.sparse

    fmt = value["sparse"]
    if fmt not in SPARSE_FORMATS:
        raise WireError(f"unknown sparse format {str(fmt)[:20]!r}")
    shape = _shape(value.get("shape"))
    if len(shape) != 2 or max(shape) > MAX_SPARSE_DIM:
        raise WireError(f"sparse matrix shape {shape} over the bound ({MAX_SPARSE_DIM})")
    if fmt in ("lil", "dok", "dia") and shape[0] > MAX_SPARSE_ROWS_LISTED:
        raise WireError(f"{fmt} matrix with {shape[0]} rows over the bound")
    parts = [decode(value.get(k), handle, depth) for k in ("data", "row", "col")]
    if not all(isinstance(p, numpy.ndarray) and p.ndim == 1 for p in parts):
        raise WireError("malformed sparse components")
    data, row, col = parts
    if not len(data) == len(row) == len(col) or row.dtype.kind + col.dtype.kind not in (
        "ii",
        "iu",
        "ui",
        "uu",
    ):
        raise WireError("malformed sparse components")
    if len(row) and (
        row.min() < 0 or row.max() >= shape[0] or col.min() < 0 or col.max() >= shape[1]
    ):
        raise WireError("sparse indices out of range")
    if fmt == "dia" and len(numpy.unique(col.astype(numpy.int64) - row)) > MAX_SPARSE_ROWS_LISTED:
        raise WireError("dia matrix with too many diagonals")
    matrix = scipy.sparse.coo_matrix((data, (row, col)), shape=shape).asformat(fmt)
    if value.get("array") is True:
        return getattr(scipy.sparse, f"{fmt}_array")(matrix)
    return matrix
