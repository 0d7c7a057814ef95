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

from scievals.scicode.grading.scopes import Claims, Scopes, names_in
from scievals.scicode.inside.compare import HELPERS

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
        if not (names_in(node) & self.tainted):
            self.captures.append(node)
            index = ast.Constant(len(self.captures) - 1)
            return ast.Subscript(ast.Name(VALUES, ast.Load()), index, ast.Load())
        if isinstance(node, ast.Name):
            return node
        if isinstance(node, ast.Call):
            func = node.func if not (names_in(node.func) & self.tainted) else self.split(node.func)
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
        if not (names_in(node.test) & self.tainted):
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
    """Sandbox side: the model's names through ``ref``, trusted names through ``trusted``; only
    loads that Python resolves to the module's globals (``scopes.py``), never the test's own
    parameters and locals."""

    def __init__(self, scopes: Scopes, reserved: set[str], tainted: set[str]):
        self.scopes, self.reserved, self.tainted = scopes, reserved, tainted
        self.scope = scopes.module
        self.model: set[str] = set()

    def _visit_list(self, items: list[ast.AST]) -> list[ast.AST]:
        out: list[ast.AST] = []
        for item in items:
            if not isinstance(item, ast.AST):
                out.append(item)
                continue
            visited = self.visit(item)
            out.extend(visited if isinstance(visited, list) else [visited])
        return out

    def _outside_parts(self, args: ast.arguments) -> None:
        args.defaults = self._visit_list(args.defaults)
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.decorator_list = self._visit_list(node.decorator_list)
        self._outside_parts(node.args)
        outer, self.scope = self.scope, self.scopes.of(node) or self.scope
        node.body = self._visit_list(node.body)
        self.scope = outer
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self._outside_parts(node.args)
        outer, self.scope = self.scope, self.scopes.of(node) or self.scope
        node.body = self.visit(node.body)
        self.scope = outer
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.decorator_list = self._visit_list(node.decorator_list)
        node.bases = self._visit_list(node.bases)
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)
        outer, self.scope = self.scope, self.scopes.of(node) or self.scope
        node.body = self._visit_list(node.body)
        self.scope = outer
        return node

    def _comprehension(self, node: ast.AST) -> ast.AST:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        generators[0].iter = self.visit(generators[0].iter)
        outer, self.scope = self.scope, self.scopes.of(node) or self.scope
        for number, generator in enumerate(generators):
            if number:
                generator.iter = self.visit(generator.iter)
            generator.ifs = self._visit_list(generator.ifs)
        for name in ("elt", "key", "value"):
            if isinstance(getattr(node, name, None), ast.AST):
                setattr(node, name, self.visit(getattr(node, name)))
        self.scope = outer
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Name(self, node: ast.Name) -> ast.expr:
        name = node.id
        if (
            not isinstance(node.ctx, ast.Load)
            or name in self.tainted
            or name in (VALUES, HOOKS)
            or not self.scopes.resolves_global(name, self.scope)
        ):
            return node
        if name in self.reserved:
            return ast.copy_location(_hook("trusted", ast.Constant(name)), node)
        self.model.add(name)
        return ast.copy_location(_hook("ref", ast.Constant(name), node), node)


def _claim(names: set[str]) -> ast.stmt:
    return ast.Expr(_hook("claim", ast.List([ast.Constant(n) for n in sorted(names)], ast.Load())))


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
                tainted |= names_in(tgt)
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
    scopes = Scopes(child_tree)
    reserved = set(vars(builtins)) | set(HELPERS) | dependency_names(dependencies)
    reach = _Reach(scopes, reserved, tainted)
    reach.visit(child_tree)
    child_tree.body = Claims(scopes, _claim).body(child_tree.body, scopes.module)
    child = ast.fix_missing_locations(child_tree)
    judge_tree, checks = variant("judge", tree.body)
    solve_tree, _ = variant("solve", kept)
    return TestPlan(
        index=index,
        child=ast.unparse(child),
        judge=ast.unparse(judge_tree),
        solve=ast.unparse(solve_tree),
        unpack=tuple(unpack),
        checks=tuple(checks),
        names=tuple(sorted(reach.model)),
    )


def child_tests(plans: list[TestPlan]) -> str:
    """The tests as the sandbox runs them, each between its begin and end events."""
    parts = []
    for plan in plans:
        parts.append(f"{HOOKS}.begin({plan.index})")
        parts.append(plan.child)
        parts.append(f"{HOOKS}.end({plan.index})")
    return "\n".join(parts)
