"""Splitting each SciCode test into what runs in the sandbox and what the harness checks.

A test snippet asserts things about ``target``. The sandboxed child must never see targets, so
every assert that mentions ``target`` (or names unpacked from it) is rewritten: the child only
records the values of the sub-expressions that do not involve the target, and the trusted side
evaluates the remaining *skeleton* (``np.allclose(__v[0], target)``) against the real target.
Asserts without a target (self-checking tests) still run in the child. The same split lets the
dev targets be regenerated from gold code: solving a skeleton for ``target`` gives its value.
"""

from __future__ import annotations

import ast
import base64
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse
import sympy

from scievals.scicode.compare import HELPERS

TARGET = "target"
_VALUES = "__v"
# Callees a skeleton may use on the trusted side, besides helper functions the test defines.
_TRUSTED_GLOBALS: dict[str, Any] = {"np": np, "numpy": np, "math": math, **HELPERS}


@dataclass
class Check:
    """One assert about the target: a skeleton over ``__v[i]`` and target names."""

    skeleton: str
    n_values: int


@dataclass
class TestPlan:
    """How one test snippet is run (``child``) and checked (``unpack``, ``checks``, ``helpers``)."""

    index: int
    child: str
    unpack: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Splitter:
    """Replaces target-free sub-expressions by ``__v[i]``, collecting them as captures."""

    def __init__(self, tainted: set[str]):
        self.tainted = tainted
        self.captures: list[ast.expr] = []

    def split(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant):
            return node
        if not (_names(node) & self.tainted):
            self.captures.append(node)
            index = ast.Constant(len(self.captures) - 1)
            return ast.Subscript(ast.Name(_VALUES, ast.Load()), index, ast.Load())
        if isinstance(node, ast.Name):
            return node
        if isinstance(node, ast.Call):
            func = node.func if not (_names(node.func) & self.tainted) else self.split(node.func)
            return ast.Call(
                func,
                [self.split(arg) for arg in node.args],
                [ast.keyword(k.arg, self.split(k.value)) for k in node.keywords],
            )
        rebuilt = {}
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                rebuilt[name] = self.split(value)
            elif isinstance(value, list) and value and all(isinstance(v, ast.expr) for v in value):
                rebuilt[name] = [self.split(v) for v in value]
            else:
                rebuilt[name] = value
        return type(node)(**rebuilt)


def plan_test(index: int, source: str) -> TestPlan:
    """Rewrite one test snippet (it shares the step program's module namespace with the others)."""
    tree = ast.parse(source)
    tainted = {TARGET}
    plan = TestPlan(index=index, child="")
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name)
            and (stmt.value.id in tainted)
        ):
            plan.unpack.append(ast.unparse(stmt))
            for tgt in stmt.targets:
                tainted |= _names(tgt)
            continue
        body.append(stmt)

    class Rewriter(ast.NodeTransformer):
        def visit_Assert(self, node: ast.Assert) -> ast.stmt:
            if not (_names(node.test) & tainted):
                return node
            splitter = _Splitter(tainted)
            skeleton = splitter.split(node.test)
            check = len(plan.checks)
            plan.checks.append(Check(ast.unparse(skeleton), len(splitter.captures)))
            call = ast.Call(
                ast.Name("__scievals_record__", ast.Load()),
                [
                    ast.Constant(index),
                    ast.Constant(check),
                    ast.Tuple(splitter.captures, ast.Load()),
                ],
                [],
            )
            return ast.copy_location(ast.Expr(call), node)

    module = ast.fix_missing_locations(Rewriter().visit(ast.Module(body, [])))
    plan.child = ast.unparse(module)
    defined = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef | ast.ClassDef)}
    wanted: set[str] = set()
    frontier = (
        set().union(*(_names(ast.parse(c.skeleton)) for c in plan.checks)) if plan.checks else set()
    )
    while frontier:
        name = frontier.pop()
        if name in defined and name not in wanted:
            wanted.add(name)
            frontier |= _names(defined[name])
    plan.helpers = [ast.unparse(defined[n]) for n in defined if n in wanted]
    return plan


def child_tests(plans: list[TestPlan]) -> str:
    """The tests as the sandboxed child runs them, each between begin and done records."""
    parts = []
    for plan in plans:
        parts.append(f"__scievals_begin__({plan.index})")
        parts.append(plan.child)
        parts.append(f"__scievals_done__({plan.index})")
    return "\n".join(parts)


# ---- decoding what the child recorded (no pickle, a closed set of types) --------------------

_SAFE_KINDS = set("biufcUSmM")


class RecordError(ValueError):
    """The child's records are malformed (treated as a failed step, never trusted)."""


def _dtype(text: str) -> np.dtype:
    dtype = np.dtype(text)
    if dtype.kind not in _SAFE_KINDS:
        raise RecordError(f"refusing dtype {text!r}")
    return dtype


def decode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, list):
        raise RecordError("bare list in records")
    if not isinstance(value, dict) or len(value) < 1:
        raise RecordError(f"malformed record value: {str(value)[:80]}")
    if "float" in value:
        return float(value["float"])
    if "complex" in value:
        re_, im = value["complex"]
        return complex(float(re_), float(im))
    if "npscalar" in value:
        return np.frombuffer(base64.b64decode(value["b64"]), dtype=_dtype(value["npscalar"]))[0]
    if "ndarray" in value:
        raw = base64.b64decode(value["b64"])
        array = np.frombuffer(raw, dtype=_dtype(value["ndarray"]))
        return array.reshape([int(n) for n in value["shape"]]).copy()
    if "objarray" in value:
        items = [decode(x) for x in value["items"]]
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array.reshape([int(n) for n in value["objarray"]])
    if "tuple" in value:
        return tuple(decode(x) for x in value["tuple"])
    if "list" in value:
        return [decode(x) for x in value["list"]]
    if "dict" in value:
        return {decode(k): decode(v) for k, v in value["dict"]}
    if "bytes" in value:
        return base64.b64decode(value["bytes"])
    if "sparse" in value:
        coo = scipy.sparse.coo_matrix(
            (decode(value["data"]), (decode(value["row"]), decode(value["col"]))),
            shape=tuple(int(n) for n in value["shape"]),
        )
        fmt = value["sparse"]
        if fmt not in ("coo", "csr", "csc", "bsr", "dia", "lil", "dok"):
            raise RecordError(f"unknown sparse format {fmt!r}")
        matrix = coo.asformat(fmt)
        if str(value.get("class", "")).endswith("_array"):
            return getattr(scipy.sparse, f"{fmt}_array")(matrix)
        return matrix
    if "sympy" in value:
        # Symbols are rebuilt (comparisons turn them into strings); other expressions stay text:
        # parsing child-written text with sympy would evaluate it.
        if value["sympy"] == "Symbol":
            return sympy.Symbol(str(value["text"]))
        return str(value["text"])
    if "coerced" in value:
        return decode(value["value"])
    raise RecordError(f"unknown record value kind: {sorted(value)}")


@dataclass
class Records:
    """What one execution recorded, per test: began, finished, captured values or errors."""

    begun: set[int] = field(default_factory=set)
    done: set[int] = field(default_factory=set)
    values: dict[tuple[int, int], list[Any]] = field(default_factory=dict)
    errors: dict[tuple[int, int], str] = field(default_factory=dict)


def parse_records(text: str) -> Records:
    records = Records()
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            test = int(item["test"])
        except (ValueError, KeyError, TypeError) as exc:
            raise RecordError(f"unreadable record line: {exc}") from exc
        if item.get("event") == "begin":
            records.begun.add(test)
        elif item.get("event") == "done":
            records.done.add(test)
        elif "error" in item:
            records.errors[(test, int(item["check"]))] = str(item["error"])[:500]
        else:
            records.values[(test, int(item["check"]))] = [decode(v) for v in item["values"]]
    return records


# ---- the trusted side: evaluating skeletons against targets ---------------------------------


def check_test(plan: TestPlan, target: Any, records: Records) -> str | None:
    """None when every check of this test holds, else why not (one line)."""
    namespace: dict[str, Any] = dict(_TRUSTED_GLOBALS)
    for helper in plan.helpers:
        exec(compile(helper, f"<test {plan.index} helper>", "exec"), namespace)  # benchmark code
    namespace[TARGET] = target
    try:
        for statement in plan.unpack:
            exec(compile(statement, f"<test {plan.index} target>", "exec"), namespace)
    except Exception as exc:  # the target does not have the shape the test expects
        return f"target unpacking failed: {type(exc).__name__}: {exc}"
    for number, check in enumerate(plan.checks):
        key = (plan.index, number)
        if key in records.errors:
            return records.errors[key]
        if key not in records.values:
            return "the compared value was never recorded"
        values = records.values[key]
        if len(values) != check.n_values:
            return "wrong number of recorded values"
        namespace[_VALUES] = values
        try:
            if not eval(compile(check.skeleton, "<check>", "eval"), namespace):  # benchmark code
                return f"assertion failed: {check.skeleton.replace('__v', 'value')}"
        except Exception as exc:
            return f"{type(exc).__name__} while comparing: {str(exc)[:200]}"
    return None


# ---- regeneration: solving skeletons for the target -----------------------------------------


class Unsolvable(ValueError):
    """A check does not pin down the target (cannot regenerate from it)."""


def solve_target(plan: TestPlan, records: Records) -> Any:
    """The target that makes every check of this test hold with the recorded (gold) values."""
    if not plan.checks:
        return None
    bound: dict[str, Any] = {}
    subscripted: dict[int, Any] = {}

    def assign(leaf: ast.expr, value: Any) -> None:
        if isinstance(leaf, ast.Name):
            bound[leaf.id] = value
        elif (
            isinstance(leaf, ast.Subscript)
            and isinstance(leaf.value, ast.Name)
            and leaf.value.id == TARGET
            and isinstance(leaf.slice, ast.Constant)
        ):
            subscripted[int(leaf.slice.value)] = value
        elif isinstance(leaf, ast.Tuple):
            for element, item in zip(leaf.elts, value, strict=True):
                assign(element, item)
        else:
            raise Unsolvable(f"cannot solve for {ast.unparse(leaf)}")

    def value_of(node: ast.expr, values: list[Any]) -> Any:
        if is_value(node):
            return values[node.slice.value]  # type: ignore[attr-defined]
        raise Unsolvable(f"not a recorded value: {ast.unparse(node)}")

    def is_value(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == _VALUES
        )

    def solve(node: ast.expr, values: list[Any]) -> None:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            for part in node.values:
                solve(part, values)
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            left, right = node.args[0], node.args[1]
            if is_value(left):
                assign(right, value_of(left, values))
            else:
                assign(left, value_of(right, values))
        elif (
            isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
        ):
            left, right = node.left, node.comparators[0]
            if is_value(left):
                assign(right, value_of(left, values))
            else:
                assign(left, value_of(right, values))
        else:
            raise Unsolvable(f"cannot solve {ast.unparse(node)}")

    for number, check in enumerate(plan.checks):
        key = (plan.index, number)
        if key not in records.values:
            raise Unsolvable(records.errors.get(key, "value not recorded"))
        solve(ast.parse(check.skeleton, mode="eval").body, records.values[key])

    if TARGET in bound:
        return bound[TARGET]
    if subscripted:
        return tuple(subscripted[i] for i in range(len(subscripted)))
    for statement in plan.unpack:
        names = ast.parse(statement).body[0].targets[0]  # type: ignore[attr-defined]
        return tuple(bound[element.id] for element in names.elts)
    raise Unsolvable("no target found")
