"""Splitting tests into a child part (records values) and a trusted part (compares with targets).

Covers every assert shape of the real data (all 1082 test snippets), the recorder's encoding and
``decode`` (run in-process here; the sandbox runs the same source), ``parse_records``,
``check_test`` and ``solve_target``.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import numpy as np
import pytest
import scipy.sparse
import sympy

from scievals.scicode.child import recorder
from scievals.scicode.dataset import load_problems
from scievals.scicode.testcode import (
    RecordError,
    Records,
    Unsolvable,
    check_test,
    child_tests,
    decode,
    parse_records,
    plan_test,
    solve_target,
)
from scievals.scicode.testcode import (
    TestPlan as Plan,
)


def _names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def _target_asserts(source: str) -> int:
    """Asserts that mention ``target`` or a name unpacked from it (``a, b = target``)."""
    tree = ast.parse(source)
    tainted = {"target"}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id in tainted
        ):
            for tgt in stmt.targets:
                tainted |= {n.id for n in ast.walk(tgt) if isinstance(n, ast.Name)}
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
        and {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)} & tainted
    )


def test_every_real_test_plans():
    """All 1082 snippets: targets never reach the child; each target assert becomes a record."""
    problems = load_problems("all")
    tests = [(s, i, t) for p in problems for s in p.steps for i, t in enumerate(s.tests)]
    assert len(tests) == 1082
    shapes: dict[str, int] = {"no-target": 0, "unpacked": 0, "boolop": 0, "helper": 0}
    for step, index, source in tests:
        plan = plan_test(index, source)
        child_names = _names(plan.child)
        assert "target" not in child_names, step.step_id
        unpacked = set().union(*(_names(u) for u in plan.unpack)) if plan.unpack else set()
        assert not (child_names & (unpacked - {"target"}) - _names_assigned_in_child(plan)), (
            step.step_id
        )
        expected = _target_asserts(source)
        assert len(plan.checks) == expected, step.step_id
        calls = [
            n
            for n in ast.walk(ast.parse(plan.child))
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == "__scievals_record__"
        ]
        assert len(calls) == expected
        for number, (call, check) in enumerate(zip(calls, plan.checks, strict=True)):
            assert [a.value for a in call.args[:2]] == [index, number]  # type: ignore[attr-defined]
            assert len(call.args[2].elts) == check.n_values  # type: ignore[attr-defined]
            compile(check.skeleton, "<skeleton>", "eval")
        ast.parse(plan.child)
        shapes["no-target"] += not plan.checks
        shapes["unpacked"] += bool(plan.unpack)
        shapes["boolop"] += any(" and " in c.skeleton for c in plan.checks) and not plan.unpack
        shapes["helper"] += bool(plan.helpers)
    # Spec §1: no target in 2 main (76.4) + 6 dev (78.1, 78.2) snippets; 21 unpacked;
    # 4 dev BoolOp (10.3); 3 dev are_equivalent (10.6).
    assert shapes == {"no-target": 8, "unpacked": 21, "boolop": 4, "helper": 3}


def _names_assigned_in_child(plan: Plan) -> set[str]:
    return {
        n.id
        for n in ast.walk(ast.parse(plan.child))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


# (id, snippet, unpack, [(skeleton, n_values)], helper names, recorded expressions)
SHAPES = [
    (
        "allclose",
        "x = 2\nassert np.allclose(f(x), target)",
        [],
        [("np.allclose(__v[0], target)", 1)],
        [],
        ["(f(x),)"],
    ),
    (
        "allclose-atol-constant",
        "assert np.allclose(f(1), target, atol=1e-3)",
        [],
        [("np.allclose(__v[0], target, atol=0.001)", 1)],
        [],
        ["(f(1),)"],
    ),
    (
        "allclose-rtol-variable",
        "tol = 1e-6\nassert np.allclose(f(1), target, rtol=tol)",
        [],
        [("np.allclose(__v[0], target, rtol=__v[1])", 2)],
        [],
        ["(f(1), tol)"],
    ),
    ("equality", "assert f(1) == target", [], [("__v[0] == target", 1)], [], ["(f(1),)"]),
    (
        "target-on-left",
        "assert np.allclose(target, f(1))",
        [],
        [("np.allclose(target, __v[0])", 1)],
        [],
        ["(f(1),)"],
    ),
    (
        "cmp-tuple-or-list",
        "assert cmp_tuple_or_list(f(1), target)",
        [],
        [("cmp_tuple_or_list(__v[0], target)", 1)],
        [],
        ["(f(1),)"],
    ),
    (
        "boolop-subscripts",
        "assert np.allclose(d(c)[0], target[0]) and np.allclose(d(c)[1], target[1])",
        [],
        [("np.allclose(__v[0], target[0]) and np.allclose(__v[1], target[1])", 2)],
        [],
        ["(d(c)[0], d(c)[1])"],
    ),
    (
        "unpacked",
        "s, v = target\nassert g(Z) == s and np.allclose(Z, v)",
        ["s, v = target"],
        [("__v[0] == s and np.allclose(__v[1], v)", 2)],
        [],
        ["(g(Z), Z)"],
    ),
    (
        "unpacked-tuple-compare",
        "aa, bb, cc = f()\na, b, c = target\nassert a == aa and np.allclose((b, c), (bb, cc))",
        ["a, b, c = target"],
        [("a == __v[0] and np.allclose((b, c), __v[1])", 2)],
        [],
        ["(aa, (bb, cc))"],
    ),
    (
        "target-method",
        "assert np.isclose(B[0], (0, -1)).any() == target.any()",
        [],
        [("__v[0] == target.any()", 1)],
        [],
        ["(np.isclose(B[0], (0, -1)).any(),)"],
    ),
    (
        "test-defined-helper",
        "def isin(c, cs):\n    return any(np.allclose(c, x) for x in cs)\n"
        "def are_equivalent(a, b):\n    return all(isin(c, b) for c in a)\n"
        "def unused():\n    pass\n"
        "assert are_equivalent(f(1), target)",
        [],
        [("are_equivalent(__v[0], target)", 1)],
        ["isin", "are_equivalent"],
        ["(f(1),)"],
    ),
    (
        "two-asserts",
        "assert np.allclose(f(1), target)\nassert f(2) == target",
        [],
        [("np.allclose(__v[0], target)", 1), ("__v[0] == target", 1)],
        [],
        ["(f(1),)", "(f(2),)"],
    ),
    (
        "self-checking",
        "def test_case_1():\n    assert np.allclose(f(1), 1), 'Failed'\ntest_case_1()",
        [],
        [],
        [],
        [],
    ),
    (
        "target-free-assert-kept",
        "assert f(0) == 0\nassert np.allclose(f(1), target)",
        [],
        [("np.allclose(__v[0], target)", 1)],
        [],
        ["(f(1),)"],
    ),
]


@pytest.mark.parametrize(
    ("snippet", "unpack", "checks", "helpers", "recorded"),
    [c[1:] for c in SHAPES],
    ids=[c[0] for c in SHAPES],
)
def test_plan_shapes(snippet, unpack, checks, helpers, recorded):
    plan = plan_test(4, snippet)
    assert plan.index == 4
    assert plan.unpack == unpack
    assert [(c.skeleton, c.n_values) for c in plan.checks] == checks
    assert [ast.parse(h).body[0].name for h in plan.helpers] == helpers  # type: ignore[attr-defined]
    calls = [
        n
        for n in ast.walk(ast.parse(plan.child))
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "__scievals_record__"
    ]
    assert [ast.unparse(c.args[2]) for c in calls] == recorded
    assert "target" not in _names(plan.child)
    if not checks:
        assert plan.child.count("assert") == snippet.count("assert")


def test_child_tests_wraps_each_test():
    plans = [plan_test(0, "x = 1"), plan_test(1, "assert f(1) == target")]
    text = child_tests(plans)
    assert text.splitlines()[0] == "__scievals_begin__(0)"
    assert text.index("__scievals_done__(0)") < text.index("__scievals_begin__(1)")
    assert text.splitlines()[-1] == "__scievals_done__(1)"


# ---- the recorder's encoding (child.py) and decode -----------------------------------------


def _record_in_process(tmp_path, values: list[Any]) -> Records:
    """Run the recorder source here (as the sandbox does) and parse what it wrote.

    The done marker is not called: the recorder accepts it only from the step program's own
    module code at its placed line (tested through the sandbox in test_grade.py)."""
    path = tmp_path / "records.jsonl"
    namespace: dict[str, Any] = {}
    exec(recorder(str(path)), namespace)
    namespace["__scievals_begin__"](0)
    for number, value in enumerate(values):
        namespace["__scievals_record__"](0, number, (value,))
    namespace["__scievals_done__"](0)
    records = parse_records(path.read_text())
    assert records.done == set(), "a done marker called from elsewhere must be ignored"
    return records


class _IntSub(int):
    pass


class _ArrayLike:
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0])


DENSE = np.array([[0.0, 1.5], [2.0, 0.0]])
ENCODINGS = [
    ("none", None, None),
    ("bool", True, True),
    ("int", 12345678901234567890, 12345678901234567890),
    ("str", "héllo", "héllo"),
    ("float", 0.1, 0.1),
    ("float-nan", float("inf"), float("inf")),
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
    ("array-bool", np.array([True, False]), np.array([True, False])),
    ("array-complex", np.array([1j, 2.0]), np.array([1j, 2.0])),
    ("array-str", np.array(["a", "bc"]), np.array(["a", "bc"])),
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
    ("int-subclass", _IntSub(5), 5),
    ("array-like", _ArrayLike(), np.array([1.0, 2.0])),
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


def _param(case: Any) -> Any:
    if hasattr(case, "marks"):  # already a pytest.param
        return pytest.param(*case.values[1:], id=case.values[0], marks=case.marks)
    return pytest.param(*case[1:], id=case[0])


@pytest.mark.parametrize(("value", "expected"), [_param(c) for c in ENCODINGS])
def test_recorder_round_trip(tmp_path, value, expected):
    records = _record_in_process(tmp_path, [value])
    assert records.begun == {0}
    assert records.errors == {}
    (got,) = records.values[(0, 0)]
    assert _equal(got, expected), (got, expected)


def test_recorder_reports_unencodable_values(tmp_path):
    class Opaque:
        pass

    deep: list[Any] = []
    for _ in range(80):
        deep = [deep]
    records = _record_in_process(tmp_path, [Opaque(), deep, 1.0])
    assert records.errors[(0, 0)] == "TypeError: cannot record a value of type Opaque"
    assert "nested too deeply" in records.errors[(0, 1)]
    assert records.values[(0, 2)] == [1.0]


@pytest.mark.parametrize(
    "value",
    [
        [1, 2],
        {},
        3.5,
        {"ndarray": "|O", "shape": [1], "b64": ""},
        {"npscalar": "|O8", "b64": ""},
        {"ndarray": "V8", "shape": [1], "b64": "AAAAAAAAAAA="},
        {"pickle": "gASVAAAAAAAAAAA="},
        {
            "sparse": "weird",
            "shape": [1, 1],
            "row": {"ndarray": "<i8", "shape": [1], "b64": "AAAAAAAAAAA="},
            "col": {"ndarray": "<i8", "shape": [1], "b64": "AAAAAAAAAAA="},
            "data": {"ndarray": "<f8", "shape": [1], "b64": "AAAAAAAA8D8="},
        },
        {"tuple": [{"unknown": 1}]},
    ],
    ids=[
        "bare-list",
        "empty-dict",
        "json-float",
        "object-dtype-array",
        "object-dtype-scalar",
        "void-dtype",
        "unknown-kind",
        "unknown-sparse-format",
        "nested-unknown",
    ],
)
def test_decode_refuses(value):
    with pytest.raises(RecordError):
        decode(value)


def test_decode_object_array_decodes_items_not_pickle():
    array = decode({"objarray": [2], "items": [{"float": "1.5"}, "a"]})
    assert array.dtype == object and list(array) == [1.5, "a"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "unreadable record line"),
        ('{"check": 0}', "unreadable record line"),
        ('{"test": "x", "event": "begin"}', "unreadable record line"),
        ('{"test": 0, "check": 0, "values": [[1]]}', "bare list"),
        ('{"test": 0, "check": 0, "values": [{"x": 1}]}', "unknown record value kind"),
    ],
    ids=["not-json", "no-test", "bad-test", "bare-list", "bad-kind"],
)
def test_parse_records_errors(text, match):
    with pytest.raises(RecordError, match=match):
        parse_records(text)


def test_parse_records():
    lines = [
        {"test": 0, "event": "begin"},
        {"test": 0, "check": 0, "values": [{"float": "1.0"}, 2]},
        {"test": 0, "check": 1, "error": "TypeError: x" * 100},
        {"test": 0, "event": "done"},
        {"test": 1, "event": "begin"},
    ]
    records = parse_records("\n".join(json.dumps(x) for x in lines) + "\n\n")
    assert records.begun == {0, 1} and records.done == {0}
    assert records.values == {(0, 0): [1.0, 2]}
    assert len(records.errors[(0, 1)]) == 500


# ---- check_test ------------------------------------------------------------------------------


def _records(values: dict[tuple[int, int], list[Any]], errors=None) -> Records:
    return Records(begun={0}, done={0}, values=values, errors=errors or {})


ARRAY = np.array([1.0, 2.0])
CHECKS = [
    ("allclose-pass", "assert np.allclose(f(1), target)", ARRAY, {(0, 0): [ARRAY + 1e-9]}, None),
    (
        "allclose-fail",
        "assert np.allclose(f(1), target)",
        ARRAY,
        {(0, 0): [ARRAY + 1]},
        "assertion failed: np.allclose(value[0], target)",
    ),
    (
        "allclose-atol-pass",
        "assert np.allclose(f(1), target, atol=0.5)",
        ARRAY,
        {(0, 0): [ARRAY + 0.4]},
        None,
    ),
    ("equality-pass", "assert f(1) == target", "spin", {(0, 0): ["spin"]}, None),
    (
        "equality-fail",
        "assert f(1) == target",
        np.int64(3),
        {(0, 0): [4]},
        "assertion failed: value[0] == target",
    ),
    (
        "equality-arrays-ambiguous",
        "assert f(1) == target",
        ARRAY,
        {(0, 0): [ARRAY]},
        "ValueError while comparing",
    ),
    (
        "boolop-pass",
        "assert np.allclose(g(1)[0], target[0]) and np.allclose(g(1)[1], target[1])",
        (ARRAY, np.float64(3.0)),
        {(0, 0): [ARRAY, 3.0]},
        None,
    ),
    (
        "boolop-second-fails",
        "assert np.allclose(g(1)[0], target[0]) and np.allclose(g(1)[1], target[1])",
        (ARRAY, np.float64(3.0)),
        {(0, 0): [ARRAY, 4.0]},
        "assertion failed",
    ),
    (
        "unpacked-pass",
        "s, v = target\nassert g(Z) == s and np.allclose(Z, v)",
        (np.bool_(True), ARRAY),
        {(0, 0): [True, ARRAY]},
        None,
    ),
    (
        "unpacking-fails",
        "s, v = target\nassert g(Z) == s and np.allclose(Z, v)",
        np.float64(1.0),
        {(0, 0): [True, ARRAY]},
        "target unpacking failed: TypeError",
    ),
    (
        "cmp-tuple-or-list",
        "assert cmp_tuple_or_list(f(1), target)",
        [ARRAY, np.ones(3)],
        {(0, 0): [(ARRAY, np.ones(3))]},
        None,
    ),
    (
        "are-dicts-close",
        "assert are_dicts_close(f(1), target)",
        {"a": np.float64(1.0), 2.0: np.float64(3.0)},
        {(0, 0): [{"a": 1.0, 2.0: 3.0}]},
        None,
    ),
    (
        "test-helper",
        "def are_equivalent(a, b):\n    return a.shape == b.shape\n"
        "assert are_equivalent(f(1), target)",
        ARRAY,
        {(0, 0): [np.zeros(2)]},
        None,
    ),
    (
        "never-recorded",
        "assert np.allclose(f(1), target)",
        ARRAY,
        {},
        "the compared value was never recorded",
    ),
    (
        "wrong-number-of-values",
        "assert np.allclose(f(1), target)",
        ARRAY,
        {(0, 0): [ARRAY, ARRAY]},
        "wrong number of recorded values",
    ),
    ("self-checking", "assert f(0) == 0", None, {}, None),
]


@pytest.mark.parametrize(
    ("snippet", "target", "values", "expected"),
    [c[1:] for c in CHECKS],
    ids=[c[0] for c in CHECKS],
)
def test_check_test(snippet, target, values, expected):
    result = check_test(plan_test(0, snippet), target, _records(values))
    if expected is None:
        assert result is None
    else:
        assert result is not None and result.startswith(expected), result


def test_check_test_reports_recording_error():
    plan = plan_test(0, "assert np.allclose(f(1), target)")
    records = _records({}, {(0, 0): "TypeError: cannot record a value of type Foo"})
    assert check_test(plan, ARRAY, records) == "TypeError: cannot record a value of type Foo"


def test_check_test_ignores_child_names():
    """The trusted namespace has only np/math/helpers: a value named like a helper is data."""
    plan = plan_test(0, "assert np.allclose(f(1), target)")
    assert check_test(plan, ARRAY, _records({(0, 0): ["np.ones(2)"]})) is not None


# ---- solve_target ----------------------------------------------------------------------------

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


@pytest.mark.parametrize(
    ("snippet", "values", "expected"), [c[1:] for c in SOLVES], ids=[c[0] for c in SOLVES]
)
def test_solve_target(snippet, values, expected):
    plan = plan_test(0, snippet)
    solved = solve_target(plan, _records({(0, 0): values}))
    assert _equal_loose(solved, expected)
    assert check_test(plan, solved, _records({(0, 0): values})) is None


def _equal_loose(a: Any, b: Any) -> bool:
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(_equal_loose(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.all(a == b)) and type(a) is type(b)


def test_solve_target_without_checks_is_none():
    assert solve_target(plan_test(0, "assert f(0) == 0"), _records({})) is None


@pytest.mark.parametrize(
    ("snippet", "values"),
    [
        ("assert np.isclose(B[0], (0, -1)).any() == target.any()", {(0, 0): [True]}),
        ("assert np.allclose(f(1), target)", {}),
        ("assert target", {(0, 0): []}),
    ],
    ids=["target-method", "not-recorded", "bare-target"],
)
def test_solve_target_unsolvable(snippet, values):
    with pytest.raises(Unsolvable):
        solve_target(plan_test(0, snippet), _records(values))
