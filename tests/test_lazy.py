"""Package faces export their names on first use: every exported name resolves to what its
submodule defines, and importing a face (or asking the command line for help) loads no Inspect,
SciPy or report code, which once cost every command 4 s before it did anything."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

FACES = ("scievals.scicode", "scievals.scibench", "scievals.report", "scievals.models")
HEAVY = ("inspect_ai", "scipy", "matplotlib", "openai")


@pytest.mark.parametrize("face", FACES)
def test_every_export_is_its_submodules_object(face):
    package = importlib.import_module(face)
    for name in package.__all__:
        origin = importlib.import_module(f"{face}.{package._exports[name]}")
        assert getattr(package, name) is getattr(origin, name), name


@pytest.mark.parametrize("face", FACES)
def test_an_unknown_name_is_an_attribute_error(face):
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = importlib.import_module(face).nothing_here


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


@pytest.mark.parametrize("face", FACES)
def test_importing_a_face_loads_nothing_heavy(face):
    assert _loaded_after(f"import {face}") == []


@pytest.mark.parametrize("argv", [["--help"], ["grade", "scicode", "--help"], ["report", "--help"]])
def test_help_loads_nothing_heavy(argv):
    code = f"from scievals.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert _loaded_after(code) == []


def test_a_submodule_named_like_an_export_does_not_replace_it():
    import scievals.scicode
    import scievals.scicode.grade  # noqa: F401 - the submodule ``grade`` beside the function

    assert callable(scievals.scicode.grade) and not isinstance(scievals.scicode.grade, type(sys))
