"""Which scope a name of a test snippet belongs to, as Python's own scoping rules decide.

The sandboxed half of a test reaches the model's names through the recorder (``rewrite.py``),
but a name the test binds itself is the test's: a parameter, a local assignment, a loop or
comprehension target, an import inside a function. Routing such a name through the recorder
records calls the trusted side never replays (the test's own ``itertools`` is the real module
there), so only loads that Python resolves to the module's globals are routed; a global the
test rebinds at module level is claimed at run time (``claims``), where Python's module scope
is dynamic too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class Scope:
    """One scope: the module, a function or lambda, a class body or a comprehension."""

    node: ast.AST
    parent: Scope | None
    bound: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    @property
    def kind(self) -> str:
        if isinstance(self.node, ast.Module):
            return "module"
        if isinstance(self.node, ast.ClassDef):
            return "class"
        if isinstance(self.node, COMPREHENSIONS):
            return "comprehension"
        return "function"

    def binder(self) -> Scope:
        """Where a walrus target binds: the nearest scope that is not a comprehension."""
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope


def names_in(node: ast.AST) -> set[str]:
    """Every name a node mentions, in any context."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Collector(ast.NodeVisitor):
    """Builds every scope of a tree with the names bound in it (nested scopes' bodies apart)."""

    def __init__(self, tree: ast.Module) -> None:
        self.scopes: dict[int, Scope] = {}
        self.current = self._open(tree, None)
        self.generic_visit(tree)

    def _open(self, node: ast.AST, parent: Scope | None) -> Scope:
        scope = Scope(node, parent)
        self.scopes[id(node)] = scope
        return scope

    def _inside(self, node: ast.AST, visit: list[ast.AST]) -> None:
        outer = self.current
        self.current = self._open(node, outer)
        for child in visit:
            self.visit(child)
        self.current = outer

    def _arguments(self, args: ast.arguments) -> None:
        """Defaults and annotations are evaluated where the function is defined."""
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                self.visit(default)

    def _parameters(self, args: ast.arguments) -> set[str]:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        return {a.arg for a in every if a is not None}

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.current.bound.add(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._arguments(node.args)
        self._inside(node, list(node.body))
        self.scopes[id(node)].bound |= self._parameters(node.args)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments(node.args)
        self._inside(node, [node.body])
        self.scopes[id(node)].bound |= self._parameters(node.args)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.current.bound.add(node.name)
        for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(part)
        self._inside(node, list(node.body))

    def _comprehension(self, node: ast.AST, elements: list[ast.AST]) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter)  # the first iterable is evaluated outside
        outer = self.current
        self.current = self._open(node, outer)
        for number, generator in enumerate(generators):
            self.current.bound |= names_in(generator.target)
            if number:
                self.visit(generator.iter)
            for condition in generator.ifs:
                self.visit(condition)
        for element in elements:
            self.visit(element)
        self.current = outer

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.current.bound.add(node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.current.binder().bound.add(node.target.id)
        self.visit(node.value)

    def visit_alias(self, node: ast.alias) -> None:
        if node.name != "*":
            self.current.bound.add((node.asname or node.name).split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.current.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.current.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.current.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.current.bound.add(node.rest)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.current.declared_global |= set(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.current.declared_nonlocal |= set(node.names)


class Scopes:
    """The scopes of one snippet: ``resolves_global`` says whether a name read in a given
    scope is the module's global (or a builtin), as the compiler would decide it."""

    def __init__(self, tree: ast.Module) -> None:
        self.scopes = _Collector(tree).scopes
        self.module = self.scopes[id(tree)]

    def of(self, node: ast.AST) -> Scope | None:
        """The scope a scope-opening node opens (None for other nodes)."""
        return self.scopes.get(id(node))

    def resolves_global(self, name: str, scope: Scope) -> bool:
        innermost = True
        current: Scope | None = scope
        while current is not None:
            if current.kind == "module":
                return True
            if name in current.declared_global:
                return True
            if current.kind == "class":
                if innermost and name in current.bound:
                    return False  # a class body reads its own names first
            elif name in current.bound or name in current.declared_nonlocal:
                return False
            innermost = False
            current = current.parent
        return True

    def binds_global(self, name: str, scope: Scope) -> bool:
        """A binding of ``name`` in ``scope`` is a binding of the module's global."""
        return scope.kind == "module" or name in scope.declared_global


def bound_here(stmt: ast.stmt) -> set[str]:
    """The names a simple statement binds in the scope it runs in (not inside nested scopes)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    names: set[str] = set()
    for node in _walk_here(stmt):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.NamedExpr):
            names.add(node.target.id)
    return names


def _walk_here(node: ast.AST) -> list[ast.AST]:
    """``ast.walk`` without entering nested scopes (a comprehension's walrus still binds here)."""
    out, todo = [], [node]
    while todo:
        current = todo.pop()
        out.append(current)
        for child in ast.iter_child_nodes(current):
            if isinstance(child, (*FUNCTION_SCOPES, ast.ClassDef)):
                continue
            if isinstance(child, COMPREHENSIONS):
                todo.extend(n for n in ast.walk(child) if isinstance(n, ast.NamedExpr))
                continue
            todo.append(child)
    return out


class Claims:
    """After each binding of a global by the test, a claim of it (``claim(names)`` makes the
    statement): from then on that name is the test's, as at module level in Python, where a
    name is whatever was bound to it last."""

    def __init__(self, scopes: Scopes, claim: Callable[[set[str]], ast.stmt]):
        self.scopes, self.claim = scopes, claim

    def body(self, stmts: list[ast.stmt], scope: Scope) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            out.extend(self._statement(stmt, scope))
        return out

    def _after(self, names: set[str], scope: Scope) -> list[ast.stmt]:
        claimed = {n for n in names if self.scopes.binds_global(n, scope)}
        return [self.claim(claimed)] if claimed else []

    def _opened(self, stmts: list[ast.stmt], names: set[str], scope: Scope) -> list[ast.stmt]:
        """A block whose header binds ``names`` (a loop target, ``as``): claimed first thing."""
        return self._after(names, scope) + self.body(stmts, scope)

    def _statement(self, stmt: ast.stmt, scope: Scope) -> list[ast.stmt]:
        inner = self.scopes.of(stmt)
        if inner is not None:  # a def or class: its body binds in its own scope
            stmt.body = self.body(stmt.body, inner)  # type: ignore[attr-defined]
        if not isinstance(stmt, COMPOUND):
            return [stmt, *self._after(bound_here(stmt), scope)]
        header = header_names(stmt)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if block:
                setattr(stmt, name, self._opened(block, header if name == "body" else set(), scope))
        for handler in getattr(stmt, "handlers", []):
            handler.body = self._opened(handler.body, {handler.name} - {None}, scope)
        for case in getattr(stmt, "cases", []):
            case.body = self._opened(case.body, pattern_names(case.pattern), scope)
        return [stmt, *self._after(header, scope)]


COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.Match)
"""Statements with blocks of their own (try* too, where Python has it)."""
if hasattr(ast, "TryStar"):
    COMPOUND = (*COMPOUND, ast.TryStar)


def header_names(stmt: ast.stmt) -> set[str]:
    """What a compound statement's header binds: loop and ``as`` targets, walrus targets."""
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return names_in(stmt.target) | _walrus(stmt.iter)
    if isinstance(stmt, ast.With | ast.AsyncWith):
        targets = {n for i in stmt.items if i.optional_vars for n in names_in(i.optional_vars)}
        return targets | _walrus(*(i.context_expr for i in stmt.items))
    if isinstance(stmt, ast.While | ast.If):
        return _walrus(stmt.test)
    if isinstance(stmt, ast.Match):
        return _walrus(stmt.subject)
    return set()


def pattern_names(pattern: ast.AST) -> set[str]:
    """The capture names of a ``match`` pattern."""
    names = set()
    for node in ast.walk(pattern):
        for attr in ("name", "rest"):
            value = getattr(node, attr, None)
            if isinstance(node, ast.pattern) and isinstance(value, str):
                names.add(value)
    return names


def _walrus(*parts: ast.AST) -> set[str]:
    return {n.target.id for part in parts for n in ast.walk(part) if isinstance(n, ast.NamedExpr)}
