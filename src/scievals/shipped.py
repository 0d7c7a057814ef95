"""The one loader of the programs that run inside a scoring runtime or a container.

They live in the ``inside`` packages and import only the standard library and the scoring
libraries, never scievals (``tests/test_layers.py``): inside there is no scievals to import them
from, so they travel as their source text, read here, and run there under names of their own.

A program made of several modules (the zygote, the container runner) travels as one text,
``program``: its sibling modules, found by their relative imports, are run first in a private
package that is registered in ``sys.modules`` only while they load and is gone before the
program starts. So a program run in place by the zygote sees no name of ours in ``sys.modules``,
``sys.path``, its environment or its file system: the modules live on only as the globals of
the functions that use them.
"""

from __future__ import annotations

import ast
from functools import cache
from importlib import resources

SANDBOX = "scievals.sandbox.inside"
"""The sandbox's programs: zygote, container runner, tail runner, host probes."""
SCICODE = "scievals.scicode.inside"
"""SciCode's grading: the recorder, and the record format and comparison helpers it shares with the
trusted side."""
INSIDE = (SANDBOX, SCICODE)
PRIVATE = "_scievals_inside"
"""The package an assembled program's modules load in (and leave ``sys.modules`` after)."""

BOOT = '''
def __scievals_boot__(package, modules):
    """Run ``modules`` (name, file name, source; each after those it imports) in ``package``,
    registered only while they load; the last one's module."""
    import sys
    import types

    home = sys.modules[package] = types.ModuleType(package)
    home.__path__ = []
    try:
        for name, filename, text in modules:
            module = types.ModuleType(f"{package}.{name}")
            module.__file__, module.__package__ = filename, package
            sys.modules[module.__name__] = module
            setattr(home, name, module)
            exec(compile(text, filename, "exec"), module.__dict__)
    finally:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
    return module


'''
"""The start of an assembled program: it defines the modules, then calls the last one's
``main()`` (below)."""


@cache
def source(package: str, name: str) -> str:
    """The source of the inside module ``name`` of ``package`` (one of ``INSIDE``)."""
    if package not in INSIDE:
        raise ValueError(f"{package} is not an inside package ({', '.join(INSIDE)})")
    return resources.files(package).joinpath(f"{name}.py").read_text("utf-8")


def siblings(package: str, name: str) -> list[str]:
    """The modules of ``package`` that ``name`` imports (relative imports, top level only)."""
    found = []
    for node in ast.parse(source(package, name)).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level != 1:
                raise ValueError(f"{package}.{name}: only sibling modules may be imported")
            found += [node.module] if node.module else [alias.name for alias in node.names]
    return found


def _ordered(package: str, name: str, done: list[str], path: tuple[str, ...] = ()) -> list[str]:
    """``name`` after every module it needs, each once (depth first; a cycle is refused)."""
    if name in path:
        raise ValueError(f"{package}: an import cycle {' -> '.join((*path, name))}")
    for sibling in siblings(package, name):
        if sibling not in done:
            _ordered(package, sibling, done, (*path, name))
    if name not in done:
        done.append(name)
    return done


@cache
def program(package: str, name: str) -> str:
    """The inside program ``name`` of ``package`` as one source text to run under
    ``python -I ... -c TEXT`` or from a file: its modules, then its ``main()``."""
    root = resources.files(package)
    modules = [
        (module, str(root.joinpath(f"{module}.py")), source(package, module))
        for module in _ordered(package, name, [])
    ]
    return f"{BOOT}__scievals_boot__({PRIVATE!r}, {modules!r}).main()\n"
