"""Splitting test snippets into their sandboxed and trusted halves (``rewrite.py``), from the
shapes listed in spec §1, and over every real snippet of both splits."""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from scievals.scicode.data.dataset import load_problems
from scievals.scicode.grading.rewrite import child_tests, dependency_names, plan_test

DEPS = "import numpy as np\nfrom scipy.integrate import simps"


def _names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}


def _asserts(source: str) -> int:
    return sum(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(source)))


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
        1 for node in ast.walk(tree) if isinstance(node, ast.Assert) and _names_of(node) & tainted
    )


def _names_of(node: ast.Assert) -> set[str]:
    return {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}


def test_every_real_snippet_splits():
    """All 1082 snippets: no target and no assert in the sandbox; every target assert is a
    check judged outside; all three halves compile."""
    problems = load_problems("all")
    tests = [(p, s, i, t) for p in problems for s in p.steps for i, t in enumerate(s.tests)]
    assert len(tests) == 1082
    shapes = {"no-target": 0, "unpacked": 0, "boolop": 0}
    for problem, step, index, source in tests:
        plan = plan_test(index, source, problem.dependencies)
        where = f"{step.step_id} test {index + 1}"
        assert "target" not in _names(plan.child), where
        assert _asserts(plan.child) == 0, where
        assert len(plan.checks) == _target_asserts(source), where
        assert _asserts(plan.judge) == _asserts(source), where
        for half in (plan.child, plan.judge, plan.solve):
            compile(half, where, "exec")
        for check in plan.checks:
            compile(check.skeleton, where, "eval")
        assert not set(plan.names) & dependency_names(problem.dependencies), where
        shapes["no-target"] += not plan.checks
        shapes["unpacked"] += bool(plan.unpack)
        shapes["boolop"] += any(" and " in c.skeleton for c in plan.checks) and not plan.unpack
    # Spec §1: no target in 2 main (76.4) + 6 dev (78.1, 78.2) snippets; 21 unpacked;
    # 4 dev BoolOp (10.3).
    assert shapes == {"no-target": 8, "unpacked": 21, "boolop": 4}


# (id, snippet, [(skeleton, n_values)], the sandboxed half)
SHAPES = [
    (
        "allclose",
        "x = 2\nassert np.allclose(f(x), target)",
        [("np.allclose(__v[0], target)", 1)],
        "x = 2\n__scievals__.claim(['x'])\n(__scievals__.ref('f', f)(__scievals__.ref('x', x)),)",
    ),
    (
        "allclose-atol-constant",
        "assert np.allclose(f(1), target, atol=1e-3)",
        [("np.allclose(__v[0], target, atol=0.001)", 1)],
        "(__scievals__.ref('f', f)(1),)",
    ),
    (
        "allclose-rtol-variable",
        "tol = 1e-6\nassert np.allclose(f(1), target, rtol=tol)",
        [("np.allclose(__v[0], target, rtol=__v[1])", 2)],
        "tol = 1e-06\n__scievals__.claim(['tol'])\n(__scievals__.ref('f', f)(1), __scievals__.ref('tol', tol))",
    ),
    (
        "equality",
        "assert f(1) == target",
        [("__v[0] == target", 1)],
        "(__scievals__.ref('f', f)(1),)",
    ),
    (
        "target-on-left",
        "assert np.allclose(target, f(1))",
        [("np.allclose(target, __v[0])", 1)],
        "(__scievals__.ref('f', f)(1),)",
    ),
    (
        "cmp-tuple-or-list",
        "assert cmp_tuple_or_list(f(1), target)",
        [("cmp_tuple_or_list(__v[0], target)", 1)],
        "(__scievals__.ref('f', f)(1),)",
    ),
    (
        "boolop-subscripts",
        "assert np.allclose(d(c)[0], target[0]) and np.allclose(d(c)[1], target[1])",
        [("np.allclose(__v[0], target[0]) and np.allclose(__v[1], target[1])", 2)],
        "(__scievals__.ref('d', d)(__scievals__.ref('c', c))[0], __scievals__.ref('d', d)(__scievals__.ref('c', c))[1])",
    ),
    (
        "unpacked",
        "s, v = target\nassert g(Z) == s and np.allclose(Z, v)",
        [("__v[0] == s and np.allclose(__v[1], v)", 2)],
        "(__scievals__.ref('g', g)(__scievals__.ref('Z', Z)), __scievals__.ref('Z', Z))",
    ),
    (
        "target-method",
        "assert np.isclose(B[0], (0, -1)).any() == target.any()",
        [("__v[0] == target.any()", 1)],
        "(__scievals__.trusted('np').isclose(__scievals__.ref('B', B)[0], (0, -1)).any(),)",
    ),
    (
        "self-checking",
        "def test_case_1():\n    assert np.allclose(f(1), 1), 'Failed'\ntest_case_1()",
        [],
        "def test_case_1():\n    __scievals__.trusted('np').allclose(__scievals__.ref('f', f)(1), 1)\n__scievals__.claim(['test_case_1'])\n__scievals__.ref('test_case_1', test_case_1)()",
    ),
    (
        "builtins-and-helpers-stay-trusted",
        "assert abs(len(f(1)) - 2) < 1 and cmp_tuple_or_list(f(2), target)",
        [("__v[0] and cmp_tuple_or_list(__v[1], target)", 2)],
        "(__scievals__.trusted('abs')(__scievals__.trusted('len')(__scievals__.ref('f', f)(1)) - 2) < 1, __scievals__.ref('f', f)(2))",
    ),
    (
        "name-the-test-binds-is-not-redirected",
        "import numpy as np\nassert np.allclose(f(1), target)",
        [("np.allclose(__v[0], target)", 1)],
        "import numpy as np\n__scievals__.claim(['np'])\n(__scievals__.ref('f', f)(1),)",
    ),
]


@pytest.mark.parametrize(
    ("snippet", "checks", "child"), [c[1:] for c in SHAPES], ids=[c[0] for c in SHAPES]
)
def test_split_shapes(snippet, checks, child):
    plan = plan_test(4, snippet, DEPS)
    assert plan.index == 4
    assert [(c.skeleton, c.n_values) for c in plan.checks] == checks
    assert plan.child == child


def test_judge_keeps_the_test_and_checks_each_target_assert():
    plan = plan_test(0, "s, v = target\nassert g(Z) == s and np.allclose(Z, v)", DEPS)
    assert plan.unpack == ("s, v = target",)
    assert plan.judge.splitlines() == [
        "s, v = target",
        "__v = (g(Z), Z)",
        "__scievals_check__(__v, target)",
        "assert __v[0] == s and np.allclose(__v[1], v), "
        "'assertion failed: value[0] == s and np.allclose(value[1], v)'",
    ]
    assert "s, v = target" not in plan.solve
    assert "__scievals_solve__(0, (g(Z), Z))" in plan.solve


def test_names_are_what_the_program_may_define():
    plan = plan_test(0, "x = np.ones(2)\nassert np.allclose(simps(f(x)), target)", DEPS)
    assert plan.names == ("f", "x")


def test_child_tests_wraps_each_test():
    plans = [plan_test(0, "x = 1"), plan_test(1, "assert f(1) == target")]
    lines = child_tests(plans).splitlines()
    assert lines[0] == "__scievals__.begin(0)"
    assert lines.index("__scievals__.end(0)") < lines.index("__scievals__.begin(1)")
    assert lines[-1] == "__scievals__.end(1)"


# (id, snippet, how often each name is routed to the model through ``ref``, names the test claims)
SCOPES = [
    (
        "module-import",
        "import itertools\nx = itertools.product(f(1))",
        {"itertools": 1, "f": 1},
        {"itertools", "x"},
    ),
    (
        "from-import-alias",
        "from itertools import product as p\ny = p(f(1))",
        {"p": 1, "f": 1},
        {"p", "y"},
    ),
    (
        "import-inside-a-function",
        "def g():\n    import itertools\n    return itertools.count(f(1))\ng()",
        {"f": 1, "g": 1},
        {"g"},
    ),
    ("parameter-shadows", "def g(f):\n    return f(1)\ng(f)", {"f": 1, "g": 1}, {"g"}),
    (
        "local-assignment-shadows",
        "def g():\n    h = 2\n    return h + k\nz = g()",
        {"k": 1, "g": 1},
        {"g", "z"},
    ),
    ("comprehension-target", "r = [f(x) for x in xs]", {"f": 1, "xs": 1}, {"r"}),
    ("lambda-parameter", "s = (lambda f: f(1))(f)", {"f": 1}, {"s"}),
    ("class-body", "class C:\n    y = f(1)\n    z = y + w", {"f": 1, "w": 1}, {"C"}),
    ("loop-target", "for i in range(3):\n    f(i)", {"f": 1, "i": 1}, {"i"}),
    ("with-target", "with ctx() as (a, b):\n    f(a)", {"ctx": 1, "f": 1, "a": 1}, {"a", "b"}),
    (
        "except-name",
        "try:\n    f(1)\nexcept ValueError as err:\n    g(err)",
        {"f": 1, "g": 1, "err": 1},
        {"err"},
    ),
    ("walrus", "if (n := f(1)) > 0:\n    g(n)", {"f": 1, "g": 1, "n": 1}, {"n"}),
    (
        "global-declared-in-a-function",
        "def g():\n    global q\n    q = f(1)\ng()\nq",
        {"f": 1, "g": 1, "q": 1},
        {"g", "q"},
    ),
    (
        "nonlocal-closure",
        "def g():\n    c = 0\n    def h():\n        nonlocal c\n        c = f(c)\n    h()\ng()",
        {"f": 1, "g": 1},
        {"g"},
    ),
    ("used-before-rebound", "a = f(1)\nf = 3\nb = f", {"f": 2}, {"a", "f", "b"}),
]


@pytest.mark.parametrize(
    ("snippet", "routed", "claimed"), [c[1:] for c in SCOPES], ids=[c[0] for c in SCOPES]
)
def test_only_globals_are_routed_and_test_bindings_are_claimed(snippet, routed, claimed):
    """Python's own scoping decides (``scopes.py``): a name the test binds in a nested scope is
    never routed; each global the test binds is claimed right after it is bound, and from then
    on the recorder hands back the test's own value."""
    plan = plan_test(0, snippet, DEPS)
    calls = [
        node
        for node in ast.walk(ast.parse(plan.child))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    ]
    refs = Counter(c.args[0].value for c in calls if ast.unparse(c.func) == "__scievals__.ref")
    claims = {
        elt.value
        for c in calls
        if ast.unparse(c.func) == "__scievals__.claim"
        for elt in c.args[0].elts
    }
    assert dict(refs) == routed
    assert set(plan.names) == set(routed)
    assert claims == claimed
