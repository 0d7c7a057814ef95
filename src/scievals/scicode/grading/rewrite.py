"""Rewriting a SciCode test snippet into its sandboxed and its trusted halves.

A test snippet asserts things about ``target`` and about the model's functions. It is split so
that no verdict is ever taken from the sandbox:

- ``child`` runs in the sandbox after the model's code. It never sees a target and asserts
  nothing: every assert becomes the evaluation of its parts that do not involve the target, so
  the model's functions are called with the arguments the test builds, in the test's order.
  Names the model defined are reached through ``__scievals__.ref`` (which records what they
  return); the dependencies', the builtins' and the comparison helpers' names through
  ``__scievals__.trusted``, so model code cannot swap them under the test.
- ``judge`` runs on the trusted side, with the real target bound and the model's names bound to
  what the sandbox recorded (``replay.py``): it is the original test, each assert on the target
  evaluating its recorded parts (``__v``) then the remaining *skeleton* against the target.
- ``solve`` is the same with the skeleton's values collected instead of checked, so that dev
  targets can be regenerated from gold code (``regenerate.py``).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from functools import cache

from scievals.scicode.grading.compare import HELPERS

TARGET = "target"
VALUES = "__v"
HOOKS = "__scievals__"
CHECK = "__scievals_check__"
SOLVE = "__scievals_solve__"


@dataclass(frozen=True)
class Check:
    """One assert about the target: its skeleton over ``__v[i]`` and the target's names."""

    skeleton: str
    n_values: int


@dataclass(frozen=True)
class TestPlan:
    """How one test snippet runs in the sandbox and is judged (or solved) outside it."""

    index: int
    child: str
    judge: str
    solve: str
    unpack: tuple[str, ...]
    checks: tuple[Check, ...]
    names: tuple[str, ...]
    """Names the test reads that the program may define (model functions and values)."""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound_by(tree: ast.AST) -> set[str]:
    """Every name the snippet itself binds anywhere (assignments, defs, imports, parameters)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


@cache
def dependency_names(dependencies: str) -> frozenset[str]:
    """The names a problem's import lines bind (the benchmark's, never the model's)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(dependencies)):
        if isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return frozenset(names)


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
            return ast.Subscript(ast.Name(VALUES, ast.Load()), index, ast.Load())
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


def _hook(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name(HOOKS, ast.Load()), name, ast.Load()), list(args), [])


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


class _Asserts(ast.NodeTransformer):
    """Rewrites every assert on the target for one of the three halves."""

    def __init__(self, tainted: set[str], mode: str, checks: list[Check]):
        self.tainted, self.mode, self.checks = tainted, mode, checks

    def visit_Assert(self, node: ast.Assert) -> ast.stmt | list[ast.stmt]:
        if not (_names(node.test) & self.tainted):
            if self.mode == "child":
                return ast.copy_location(ast.Expr(node.test), node)
            return node
        splitter = _Splitter(self.tainted)
        skeleton = splitter.split(node.test)
        values = ast.Tuple(splitter.captures, ast.Load())
        if self.mode == "child":
            return ast.copy_location(ast.Expr(values), node)
        number = len(self.checks)
        text = ast.unparse(skeleton)
        self.checks.append(Check(text, len(splitter.captures)))
        if self.mode == "solve":
            return ast.copy_location(ast.Expr(_call(SOLVE, ast.Constant(number), values)), node)
        message = ast.Constant(f"assertion failed: {text.replace(VALUES, 'value')}")
        return [
            ast.Assign([ast.Name(VALUES, ast.Store())], values),
            ast.Expr(_call(CHECK, ast.Name(VALUES, ast.Load()), ast.Name(TARGET, ast.Load()))),
            ast.Assert(skeleton, message),
        ]


class _Reach(ast.NodeTransformer):
    """Sandbox side: the model's names through ``ref``, trusted names through ``trusted``."""

    def __init__(self, trusted: set[str], model: set[str]):
        self.trusted, self.model = trusted, model

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if not isinstance(node.ctx, ast.Load):
            return node
        if node.id in self.trusted:
            return ast.copy_location(_hook("trusted", ast.Constant(node.id)), node)
        if node.id in self.model:
            return ast.copy_location(_hook("ref", ast.Constant(node.id), node), node)
        return node


def plan_test(index: int, source: str, dependencies: str = "") -> TestPlan:
    """Split one test snippet (tests of a step share one namespace, in order)."""
    tree = ast.parse(source)
    tainted = {TARGET}
    unpack: list[str] = []
    kept: list[ast.stmt] = []
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id in tainted
        ):
            unpack.append(ast.unparse(stmt))
            for tgt in stmt.targets:
                tainted |= _names(tgt)
            continue
        kept.append(stmt)

    def module(body: list[ast.stmt]) -> ast.Module:
        return ast.Module(body, [])

    def variant(mode: str, body: list[ast.stmt]) -> tuple[ast.Module, list[Check]]:
        checks: list[Check] = []
        copy = ast.parse(ast.unparse(module(body)))
        rewritten = _Asserts(tainted, mode, checks).visit(copy)
        return ast.fix_missing_locations(rewritten), checks

    child_tree, _ = variant("child", kept)
    bound = _bound_by(tree)
    loaded = {n.id for n in ast.walk(child_tree) if isinstance(n, ast.Name) and n.id not in tainted}
    reserved = set(vars(builtins)) | set(HELPERS) | dependency_names(dependencies)
    trusted = (loaded & reserved) - bound
    model = loaded - reserved - {VALUES, HOOKS}
    child = ast.fix_missing_locations(_Reach(trusted, model).visit(child_tree))
    judge_tree, checks = variant("judge", tree.body)
    solve_tree, _ = variant("solve", kept)
    return TestPlan(
        index=index,
        child=ast.unparse(child),
        judge=ast.unparse(judge_tree),
        solve=ast.unparse(solve_tree),
        unpack=tuple(unpack),
        checks=tuple(checks),
        names=tuple(sorted(model)),
    )


def child_tests(plans: list[TestPlan]) -> str:
    """The tests as the sandbox runs them, each between its begin and end events."""
    parts = []
    for plan in plans:
        parts.append(f"{HOOKS}.begin({plan.index})")
        parts.append(plan.child)
        parts.append(f"{HOOKS}.end({plan.index})")
    return "\n".join(parts)
