"""The floors of the house hold: pyproject.toml's import-linter contracts, and the programs that
run inside the scoring runtime or a container importing only what is there.

The inside programs are shipped as source into a runtime that has the standard library and the
pinned scoring libraries, never scievals: an import of ours would fail there (or, worse, import
a copy the model's code can reach), so each file's imports are read from its syntax, at every
scope, and checked against that set.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scievals.shipped import INSIDE as SHIPPED
from scievals.shipped import PRIVATE, SANDBOX, program

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "scievals"
INSIDE = sorted(
    str(path.relative_to(SOURCE))
    for package in SHIPPED
    for path in (SOURCE.parent / package.replace(".", "/")).glob("*.py")
    if path.name != "__init__.py"
)
"""Every program that runs in the scoring runtime or a container: the inside packages' modules
(the harness imports them too)."""
RUNTIMES = sorted((SOURCE / "sandbox" / "runtimes").glob("*.txt"))
SCORING_LIBRARIES = set.intersection(
    *(
        {line.split("==")[0].strip() for line in path.read_text().splitlines() if "==" in line}
        for path in RUNTIMES
    )
)
"""What every scoring runtime pins (numpy, scipy, sympy, matplotlib, ...), by distribution name:
for these libraries it is also the import name."""


def test_import_contracts_are_kept():
    """``lint-imports`` as a user runs it: every contract in pyproject.toml is kept."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-logo", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _imported(path: Path) -> set[str]:
    """The top-level names of every module the file imports, a relative import as ``.`` and
    the level and sibling it names (``.kernel``, ``..pkg``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:
            dots = "." * node.level
            names |= {
                dots + n for n in ([node.module] if node.module else [a.name for a in node.names])
            }
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value).split(".")[0])
    return names


@pytest.mark.parametrize("name", INSIDE)
def test_inside_programs_import_only_the_runtimes_libraries(name):
    assert {"numpy", "scipy", "sympy"} <= SCORING_LIBRARIES and len(RUNTIMES) >= 2
    imported = _imported(SOURCE / name)
    here = SOURCE / Path(name).parent
    siblings = {f".{path.stem}" for path in here.glob("*.py") if path.name != "__init__.py"}
    foreign = sorted(
        n
        for n in imported
        if n not in sys.stdlib_module_names and n not in SCORING_LIBRARIES and n not in siblings
    )
    assert foreign == [], f"{name} imports {foreign}: not in the scoring runtime"


@pytest.mark.parametrize("name", INSIDE)
def test_inside_modules_import_their_siblings_at_the_top(name):
    """A sibling is there only while the modules of an assembled program load: imported later
    (in a function), it would be missing inside."""
    tree = ast.parse((SOURCE / name).read_text("utf-8"))
    top = {id(node) for node in tree.body}
    late = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level and id(node) not in top
    ]
    assert late == [], f"{name} imports a sibling below its top level (lines {late})"


@pytest.mark.parametrize("name", ["zygote", "container_runner", "probes"])
def test_an_assembled_program_leaves_no_name_of_ours(name):
    """A program as it runs (``shipped.program``): its modules load, and then nothing of ours
    is in ``sys.modules`` or on ``sys.path`` for the programs it runs in place."""
    text = program(SANDBOX, name)
    body, call = text.rstrip("\n").rsplit("\n", 1)
    assert call.endswith(".main()")
    probe = (
        f"{body}\nentry = {call.removesuffix('.main()')}\n"
        "import json, sys\n"
        "print(json.dumps([sorted(sys.modules), sys.path, callable(entry.main)]))\n"
    )
    plain = "import json, sys\nprint(json.dumps([sorted(sys.modules), sys.path, True]))\n"
    ran = [
        subprocess.run(
            [sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=60
        )
        for code in (probe, plain)
    ]
    assert all(r.returncode == 0 for r in ran), [r.stderr[-2000:] for r in ran]
    (modules, path, has_main), (plain_modules, plain_path, _) = (json.loads(r.stdout) for r in ran)
    assert has_main and path == plain_path
    ours = [m for m in modules if "scievals" in m or m.startswith(PRIVATE)]
    assert ours == [], ours
    extra = {m.split(".")[0] for m in set(modules) - set(plain_modules)}
    assert extra <= sys.stdlib_module_names, sorted(extra - sys.stdlib_module_names)


def test_the_inside_programs_are_all_there_and_only_there():
    """The inside packages hold the programs and their modules, and no other module is shipped
    as source."""
    assert INSIDE == [
        "sandbox/inside/container_runner.py",
        "sandbox/inside/framing.py",
        "sandbox/inside/groups.py",
        "sandbox/inside/inplace.py",
        "sandbox/inside/kernel.py",
        "sandbox/inside/probes.py",
        "sandbox/inside/tail_runner.py",
        "sandbox/inside/verdict.py",
        "sandbox/inside/zygote.py",
        "scicode/inside/compare.py",
        "scicode/inside/events.py",
        "scicode/inside/recorder.py",
        "scicode/inside/wire.py",
    ]
    reads_python = re.compile(r"joinpath\([^)]*\.py")
    readers = [
        path.relative_to(SOURCE)
        for path in SOURCE.rglob("*.py")
        if reads_python.search(path.read_text("utf-8"))
    ]
    assert readers == [Path("shipped.py")], "source text read outside the one loader"


def test_the_import_check_sees_every_kind_of_import(tmp_path):
    """The reader itself: imports in functions, from-imports, relative ones, import_module."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os.path\n"
        "def f():\n"
        "    from scievals.paths import cache_dir\n"
        "    from . import sibling\n"
        "    import importlib\n"
        "    return importlib.import_module('inspect_ai.util')\n"
    )
    assert _imported(probe) == {"os", "scievals", ".sibling", "importlib", "inspect_ai"}
