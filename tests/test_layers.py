"""The floors of the house hold: pyproject.toml's import-linter contracts, and the programs that
run inside the scoring runtime or a container importing only what is there.

The inside programs are shipped as source into a runtime that has the standard library and the
pinned scoring libraries, never scievals: an import of ours would fail there (or, worse, import
a copy the model's code can reach), so each file's imports are read from its syntax, at every
scope, and checked against that set.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scievals.shipped import INSIDE as SHIPPED

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
    """The top-level names of every module the file imports, relative imports as ``.``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add("." if node.level else (node.module or "").split(".")[0])
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
    foreign = sorted(
        n for n in imported if n not in sys.stdlib_module_names and n not in SCORING_LIBRARIES
    )
    assert foreign == [], f"{name} imports {foreign}: not in the scoring runtime"


def test_the_inside_programs_are_all_there_and_only_there():
    """The inside packages hold the six programs, and no other module is shipped as source."""
    assert INSIDE == [
        "sandbox/inside/container_runner.py",
        "sandbox/inside/tail_runner.py",
        "sandbox/inside/zygote.py",
        "scicode/inside/compare.py",
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
    assert _imported(probe) == {"os", "scievals", ".", "importlib", "inspect_ai"}
