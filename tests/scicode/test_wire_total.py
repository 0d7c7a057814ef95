"""The record decoder is total (hypothesis): any JSON a program can write, valid or corrupted,
gives values consistent with the schema or a ``WireError`` / ``RecordError`` with a reason,
never another exception, within its depth bound; and every fact of a handle (its length) is
computed from its recorded items or array."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scievals.scicode.grading.replay import RecordError, parse_records
from scievals.scicode.inside.wire import FORMS, MAX_DEPTH, View, WireError, decode, encode

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.complex_numbers(allow_nan=False),
    st.text(max_size=8),
    st.binary(max_size=8),
)
arrays = st.builds(
    lambda values, dtype: np.asarray(values, dtype=dtype),
    st.lists(st.floats(-1e6, 1e6), max_size=6),
    st.sampled_from(["<f8", "<f4", "<i8", "<c16"]),
)
plain = st.recursive(
    st.one_of(scalars, arrays),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.integers(), st.text(max_size=4)), inner, max_size=4),
    ),
    max_leaves=12,
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from([*FORMS, "view", "shape", "b64", "items"]), st.text(max_size=4)
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=16,
)

field_values = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["1.5", "nan", "-inf", "1e999", "<f8", "|O", "AAAA", "Symbol"]),
    st.integers(-3, 3),
    st.booleans(),
    st.lists(st.one_of(st.text(max_size=4), st.integers(-2, 8)), max_size=3),
    json_values,
)
schema_forms = st.sampled_from(sorted(FORMS)).flatmap(
    lambda kind: st.fixed_dictionaries(
        {key: field_values for key in FORMS[kind][0]},
        optional={key: field_values for key in FORMS[kind][1]},
    )
)
"""Forms of every kind, with the keys their kind requires, holding arbitrary JSON."""


def _depth(value: Any) -> int:
    if isinstance(value, list | tuple):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def _handle(number: int, kind: str, view: View | None) -> Any:
    if view is not None and view.length is not None:
        expected = len(view.items) if view.items is not None else len(view.array)
        assert view.length == expected, "a length not computed from what was recorded"
    return ("handle", number)


@SETTINGS
@given(plain)
def test_plain_values_round_trip(value):
    form = json.loads(json.dumps(encode(value)))
    decoded = decode(form)
    assert json.dumps(encode(decoded)) == json.dumps(encode(value))


@SETTINGS
@given(st.one_of(json_values, schema_forms))
def test_any_json_decodes_or_is_refused(form):
    try:
        decode(form, _handle)
    except WireError as exc:
        assert str(exc), "a refusal without a reason"
    else:
        assert _depth(form) <= 2 * MAX_DEPTH + 2


@SETTINGS
@given(plain, st.data())
def test_corrupted_forms_decode_or_are_refused(value, data):
    """A valid form with one field replaced by arbitrary JSON."""
    form = json.loads(json.dumps(encode(value)))
    path: list[Any] = []
    node = form
    while isinstance(node, dict | list) and node and data.draw(st.booleans()):
        key = data.draw(
            st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
        )
        path.append(key)
        node = node[key]
    if not path:
        return
    parent = form
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = data.draw(json_values)
    try:
        decode(form, _handle)
    except WireError as exc:
        assert str(exc)


@SETTINGS
@given(st.lists(st.one_of(json_values, st.binary(max_size=20)), max_size=8))
def test_any_records_file_parses_or_is_refused(lines):
    data = b"\n".join(
        line if isinstance(line, bytes) else json.dumps(line).encode() for line in lines
    )
    try:
        parse_records(data)
    except RecordError as exc:
        assert str(exc)


@SETTINGS
@given(st.lists(plain, min_size=0, max_size=5), st.booleans())
def test_a_view_length_is_its_items(items, as_items):
    """Whatever a ``len`` field would have said, the length is the items' count."""
    view = {"getitem": True, "iter": True}
    if as_items:
        view["items"] = [encode(x) for x in items]
    else:
        view["array"] = encode(np.arange(len(items), dtype=float))
    seen = decode({"handle": 0, "type": "Liar", "view": json.loads(json.dumps(view))}, _handle)
    assert seen == ("handle", 0)
    forged = {"handle": 0, "type": "Liar", "view": {**view, "len": len(items) + 3}}
    try:
        decode(json.loads(json.dumps(forged)), _handle)
    except WireError as exc:
        assert "malformed view" in str(exc)
    else:
        raise AssertionError("a view with a length field of its own was believed")
