"""The record's value forms: how values cross from a sandboxed step program to the trusted side
(the events that carry them, one a line, are ``events.py``'s).

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
import re
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
ARRAY_PROBES = frozenset({"size", "shape", "ndim", "dtype"})
"""Attributes NumPy reads of a value before it converts it (``np.size``, ``np.shape``): of a
model object with a recorded array, both sides answer them from that array."""
_NOT_VIEWED = ("builtins.function", "builtins.builtin_function_or_method", "builtins.method")


class NotPlain(Exception):
    """Raised by ``encode`` for a value that is not plain data (it becomes a handle)."""


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
    NumPy makes of it, or else the items iterating it yields; its length is theirs, never what
    its own ``__len__`` says (``View.length``). (None, None) for
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


# ---- the schema -----------------------------------------------------------------------------

FORMS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    kind: (frozenset(required), frozenset(optional))
    for kind, required, optional in (
        ("float", {"float"}, ()),
        ("complex", {"complex"}, ()),
        ("bytes", {"bytes"}, ()),
        ("tuple", {"tuple"}, {"fields"}),
        ("list", {"list"}, ()),
        ("dict", {"dict"}, {"missing"}),
        ("ndarray", {"ndarray", "shape", "b64", "matrix"}, ()),
        ("objarray", {"objarray", "items"}, ()),
        ("npscalar", {"npscalar", "b64"}, ()),
        ("sparse", {"sparse", "array", "shape", "row", "col", "data"}, ()),
        ("sympy", {"sympy", "text"}, ()),
        ("handle", {"handle", "type"}, {"view"}),
    )
}
"""Every value form but the JSON scalars (None, bool, int, str stand for themselves): its kind
is the one key of ``FORMS`` it holds, and it holds exactly its required keys and no others but
its optional ones. A form with any other key, or two kinds, is refused."""
VIEW_FIELDS = (frozenset({"getitem", "iter"}), frozenset({"array", "items"}))
"""A handle's ``view`` (``view_form``): which of the benchmark's operations its type has, and at
most one of the array NumPy made of it and the items iterating it yielded. Its length, shape,
dtype and items are recomputed from that array or those items, never taken from a field."""
MAX_SHARED_HASH = 64
"""Keys of one decoded dict that may share a hash: more (multiples of 2**61 - 1 all hash to 0)
would make building the dict quadratic, so the record is refused."""


class WireError(ValueError):
    """A record value is malformed, disagrees with itself, or is over a bound (the step fails
    as ``invalid_record``; nothing is trusted)."""


# ---- on the trusted side --------------------------------------------------------------------


_DTYPE_STR = re.compile(r"[<>|=][biufcSUmM]\d{1,10}(\[\d{0,3}[a-zA-Z]{1,3}\])?")
"""The form ``dtype.str`` writes (``<f8``, ``|b1``, ``<U5``, ``<M8[ns]``): numpy parses other
text in ways of its own (comma lists through ``ast.literal_eval``), so it never sees any."""


def _dtype(text: Any) -> numpy.dtype:
    if not isinstance(text, str) or len(text) > 16:
        raise WireError("malformed dtype")
    if not _DTYPE_STR.fullmatch(text):
        raise WireError(f"refusing dtype {text!r}")
    try:
        dtype = numpy.dtype(text)
    except (TypeError, ValueError) as exc:
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


def form_kind(value: Any) -> str:
    """The kind of a value form, its keys checked against ``FORMS``."""
    if type(value) is not dict:
        raise WireError(f"malformed record value: {str(value)[:80]}")
    kinds = [key for key in value if key in FORMS]
    if not kinds:
        raise WireError(f"unknown record value kind: {sorted(value)[:4]}")
    if len(kinds) > 1:
        raise WireError(f"a record value of {len(kinds)} kinds: {sorted(kinds)[:4]}")
    kind = kinds[0]
    required, optional = FORMS[kind]
    keys = set(value)
    if not required <= keys or not keys <= required | optional:
        extra = sorted(keys - required - optional) or sorted(required - keys)
        raise WireError(f"a {kind} record with fields that disagree with its kind: {extra[:4]}")
    return kind


def decode(value: Any, handle: Callable[..., Any] | None = None, depth: int = 0) -> Any:
    """The plain value a record describes; ``handle(number, type_name, view)`` turns a handle
    into its stand-in."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if value is None or type(value) in (bool, int, str):
        return value
    return _DECODERS[form_kind(value)](value, handle, depth + 1)


def _number(text: Any) -> float:
    try:
        return float(_text(text))
    except ValueError as exc:
        raise WireError(f"malformed float {str(text)[:40]!r}") from exc


def _float(value: dict[str, Any], handle: Any, depth: int) -> float:
    return _number(value["float"])


def _complex(value: dict[str, Any], handle: Any, depth: int) -> complex:
    parts = value["complex"]
    if not isinstance(parts, list) or len(parts) != 2:
        raise WireError("malformed complex")
    return complex(_number(parts[0]), _number(parts[1]))


def _bytes(value: dict[str, Any], handle: Any, depth: int) -> bytes:
    text = _text(value["bytes"], limit=None)
    return _raw(text, _b64_size(text))


def _tuple(value: dict[str, Any], handle: Any, depth: int) -> tuple[Any, ...]:
    items = tuple(decode(x, handle, depth) for x in _items(value["tuple"]))
    fields = value.get("fields")
    return items if fields is None else _named(fields, len(items))(*items)


def _list(value: dict[str, Any], handle: Any, depth: int) -> list[Any]:
    return [decode(x, handle, depth) for x in _items(value["list"])]


def _dict(value: dict[str, Any], handle: Any, depth: int) -> dict[Any, Any]:
    pairs = _items(value["dict"])
    keys = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            raise WireError("malformed dict item")
        keys.append(decode(pair[0], handle, depth))
    _check_hashes(keys)
    out = _dict_kind(value.get("missing"), depth)
    for key, pair in zip(keys, pairs, strict=True):
        out[key] = decode(pair[1], handle, depth)
    if len(out) != len(pairs):
        raise WireError(f"a dict of {len(pairs)} items records {len(out)} distinct keys")
    return out


def _check_hashes(keys: list[Any]) -> None:
    """Refuse keys that cannot be hashed, or that too many share one hash: a dict built of them
    would take quadratic time (hashes are sorted, never put in a table)."""
    try:
        hashes = sorted(hash(key) for key in keys)
    except TypeError as exc:
        raise WireError("unhashable dict key") from exc
    run = 1
    for before, after in zip(hashes, hashes[1:], strict=False):
        run = run + 1 if before == after else 1
        if run > MAX_SHARED_HASH:
            raise WireError(
                f"more than {MAX_SHARED_HASH} keys of a dict share one hash (quadratic to build)"
            )


def _ndarray(value: dict[str, Any], handle: Any, depth: int) -> numpy.ndarray:
    dtype, shape = _dtype(value["ndarray"]), _shape(value["shape"])
    matrix = value["matrix"]
    if type(matrix) is not bool or (matrix and len(shape) != 2):
        raise WireError(f"a matrix record of shape {list(shape)[:4]} (a matrix has 2 dimensions)")
    raw = _raw(value["b64"], math.prod(shape) * dtype.itemsize)
    array = numpy.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return numpy.asmatrix(array) if matrix else array


def _objarray(value: dict[str, Any], handle: Any, depth: int) -> numpy.ndarray:
    shape = _shape(value["objarray"])
    items = _items(value["items"])
    if len(items) != math.prod(shape):
        raise WireError("object array size does not match its shape")
    array = numpy.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = decode(item, None, depth)
    return array.reshape(shape)


def _npscalar(value: dict[str, Any], handle: Any, depth: int) -> Any:
    dtype = _dtype(value["npscalar"])
    return numpy.frombuffer(_raw(value["b64"], dtype.itemsize), dtype=dtype)[0]


def _sympy(value: dict[str, Any], handle: Any, depth: int) -> Any:
    # A Symbol is rebuilt (comparisons turn Symbols into strings); any other expression stays
    # text: parsing text written by the program with sympy would evaluate it.
    text = _text(value["text"], limit=None)
    if value["sympy"] == "Symbol":
        import sympy

        return sympy.Symbol(text)
    return text


def _handle(value: dict[str, Any], handle: Any, depth: int) -> Any:
    number = value["handle"]
    if handle is None or type(number) is not int:
        raise WireError("unexpected handle")
    return handle(number, _text(value["type"], limit=128), _view(value, handle, depth))


class View:
    """What was recorded of a model object that is not plain data (``view_form``): the array
    NumPy made of it or the items iterating it yielded, and which of the benchmark's
    operations its type has (``[i]``, iteration). Every fact the tests read of it (its length,
    shape, dtype, items) is computed here from that array or those items."""

    __slots__ = ("array", "items", "getitem", "iterable")

    def __init__(
        self,
        array: numpy.ndarray | None,
        items: list[Any] | None,
        getitem: bool = False,
        iterable: bool = False,
    ) -> None:
        self.array, self.items = array, items
        self.getitem, self.iterable = getitem, iterable

    @property
    def length(self) -> int | None:
        """``len`` of what was recorded: the items' count, the array's first dimension."""
        if self.items is not None:
            return len(self.items)
        if self.array is not None and self.array.ndim:
            return len(self.array)
        return None


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
    required, optional = VIEW_FIELDS
    if type(form) is not dict or not required <= set(form) <= required | optional:
        raise WireError("malformed view")
    getitem, iterable = form["getitem"], form["iter"]
    if type(getitem) is not bool or type(iterable) is not bool or (getitem and not iterable):
        raise WireError("a view whose operations disagree (indexable but not iterable)")
    if "array" in form and "items" in form:
        raise WireError("a view with both an array and items (the recorder keeps one)")
    array = None
    if "array" in form:
        array = decode(form["array"], None, depth)
        if type(array) is not numpy.ndarray:
            raise WireError("malformed view array")
    items = None
    if "items" in form:
        if not iterable:
            raise WireError("a view with items of a type that cannot be iterated")
        items = [decode(x, handle, depth) for x in _items(form["items"])]
    return View(array, items, getitem, iterable)


@lru_cache(maxsize=256)
def _named_class(fields: tuple[str, ...]) -> type:
    return collections.namedtuple("Result", fields)


def _named(fields: Any, size: int) -> Callable[..., tuple[Any, ...]]:
    """A namedtuple type with these field names; a plain tuple where they cannot be names
    (``namedtuple(..., rename=True)`` makes ``_0``): the fields only serve attribute reads."""
    names = tuple(_text(f) for f in _items(fields))
    if len(names) != size:
        raise WireError(f"a namedtuple of {size} items records {len(names)} field names")
    if (
        size > MAX_FIELDS
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
    if type(value["array"]) is not bool:
        raise WireError("malformed sparse kind")
    shape = _shape(value["shape"])
    if len(shape) != 2 or max(shape) > MAX_SPARSE_DIM:
        raise WireError(f"sparse matrix shape {shape} over the bound ({MAX_SPARSE_DIM})")
    if fmt in ("lil", "dok", "dia") and shape[0] > MAX_SPARSE_ROWS_LISTED:
        raise WireError(f"{fmt} matrix with {shape[0]} rows over the bound")
    parts = [decode(value[k], handle, depth) for k in ("data", "row", "col")]
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
    if value["array"]:
        return getattr(scipy.sparse, f"{fmt}_array")(matrix)
    return matrix


_DECODERS: dict[str, Callable[[dict[str, Any], Any, int], Any]] = {
    "float": _float,
    "complex": _complex,
    "bytes": _bytes,
    "tuple": _tuple,
    "list": _list,
    "dict": _dict,
    "ndarray": _ndarray,
    "objarray": _objarray,
    "npscalar": _npscalar,
    "sparse": _sparse,
    "sympy": _sympy,
    "handle": _handle,
}
