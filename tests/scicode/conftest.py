"""Shared fixtures for the SciCode tests.

The reference implementations (the original SciCode harness in the ``nvidia-scicode`` wheel and
inspect_evals 0.26.0, version 3-A) are read from the same verified wheels the product reads its
data and templates from, and their functions are run side by side with ours: most tests are
differential, so "faithful" means "gives what the official code gives".
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import h5py
import numpy as np
import pytest
import scipy
import scipy.sparse
import sympy
from timing import hang_s

from scievals.artifacts import pip_wheel, wheel_member
from scievals.scicode.data.dataset import (
    SCICODE_WHEEL,
    SCICODE_WHEEL_SHA256,
    find_step,
    official_file,
)
from scievals.scicode.prompts import INSPECT_EVALS_WHEEL, INSPECT_EVALS_WHEEL_SHA256


@cache
def official_source(member: str) -> str:
    """A source file of the original SciCode harness (nvidia-scicode 26.3 wheel)."""
    return wheel_member(pip_wheel(SCICODE_WHEEL, SCICODE_WHEEL_SHA256), member).decode()


@cache
def inspect_evals_source(member: str) -> str:
    """A source file of inspect_evals 0.26.0 (SciCode 3-A)."""
    wheel = pip_wheel(INSPECT_EVALS_WHEEL, INSPECT_EVALS_WHEEL_SHA256)
    return wheel_member(wheel, member).decode()


def functions_from(source: str, names: set[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Define the named top-level functions (and assignments) of ``source`` in ``namespace``."""
    tree = ast.parse(source)
    body = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name in names)
        or (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in names for t in node.targets)
        )
    ]
    exec(compile(ast.Module(body, []), "<official>", "exec"), namespace)
    missing = names - set(namespace)
    assert not missing, f"not found in the official source: {missing}"
    return namespace


class _NumpyWithFloat:
    """numpy as the official writer expects it (``np.float_`` was removed in NumPy 2)."""

    float_ = np.float64

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


@cache
def official() -> SimpleNamespace:
    """The original harness's extraction, comparison helpers and h5 reader/writer."""
    models = functions_from(
        official_source("scicode/gen/models.py"),
        {"extract_python_script"},
        {"re": __import__("re")},
    )
    cmp = functions_from(
        official_source("scicode/compare/cmp.py"),
        {"are_dicts_close", "process_symbol_in_dict", "are_csc_matrix_close", "cmp_tuple_or_list"},
        {"np": np, "scipy": scipy, "sympy": sympy},
    )
    parse = functions_from(
        official_source("scicode/parse/parse.py"),
        {
            "process_hdf5_list",
            "process_hdf5_dict",
            "process_hdf5_sparse_matrix",
            "process_hdf5_datagroup",
            "process_hdf5_to_tuple",
            "save_data_to_hdf5",
            "save_dict_to_hdf5",
        },
        {
            "np": _NumpyWithFloat(),
            "scipy": scipy,
            "h5py": h5py,
            "Symbol": sympy.Symbol,
            "H5PY_FILE": "test_data.h5",
        },
    )
    return SimpleNamespace(
        extract_python_script=models["extract_python_script"],
        are_dicts_close=cmp["are_dicts_close"],
        cmp_tuple_or_list=cmp["cmp_tuple_or_list"],
        process_hdf5_to_tuple=parse["process_hdf5_to_tuple"],
        save_data_to_hdf5=parse["save_data_to_hdf5"],
    )


@cache
def inspect_evals_extract(strip_pattern: str | None = None):
    """inspect_evals 3-A ``extract_code`` as shipped (or with another fence-strip pattern)."""
    code: dict[str, Any] = {}
    exec(compile(inspect_evals_source("inspect_evals/utils/code.py"), "<code.py>", "exec"), code)
    util = inspect_evals_source("inspect_evals/scicode/util.py")
    shipped = 'r"```python|```"'
    assert shipped in util
    if strip_pattern is not None:
        util = util.replace(shipped, repr(strip_pattern))
    namespace = functions_from(
        util,
        {"_defined_names", "extract_code", "header_name", "_HEADER_NAME"},
        {
            "re": __import__("re"),
            "ast": ast,
            "defines": code["defines"],
            "extract_code_blocks": code["extract_code_blocks"],
        },
    )
    return namespace["extract_code"], namespace["header_name"]


# ---- completions and grading -------------------------------------------------------------------


def gold(step_id: str) -> str:
    """A step's gold code as a model would reply with it."""
    code = find_step(step_id, "dev")[1].gold_code
    assert code
    return f"Here is the function.\n\n```python\n{code}\n```\n"


def write_jsonl(path: Path, completions: dict[str, str]) -> Path:
    path.write_text(
        "".join(json.dumps({"step": s, "completion": c}) + "\n" for s, c in completions.items()),
        encoding="utf-8",
    )
    return path


def read_grade_output(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    summary = lines[-1]["summary"]
    return {v["step"]: v for v in lines[:-1]}, summary


@pytest.fixture(scope="session")
def fresh_dev_targets(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    """All 50 dev steps regenerated from gold code now, into a temporary file (slow: minutes)."""
    from scievals.aio import run_sync
    from scievals.sandbox import session
    from scievals.scicode.regenerate import regenerate_dev

    dest = tmp_path_factory.mktemp("regenerated") / "dev_regenerated.h5"

    async def build() -> dict[str, Any]:
        async with session() as env:
            return await regenerate_dev(env, dest)

    return dest, run_sync(build())


@pytest.fixture(scope="session")
def dev_targets_file(request) -> Path:
    """The cached regenerated dev targets; when absent, built once (shared with the slow tests)."""
    from scievals.scicode.regenerate import dev_targets_path, ensure_dev_targets

    cached = dev_targets_path()
    if not cached.exists():
        fresh, _ = request.getfixturevalue("fresh_dev_targets")
        part = cached.with_name(cached.name + ".part")
        shutil.copyfile(fresh, part)
        os.replace(part, cached)
    return ensure_dev_targets()


@pytest.fixture(scope="session")
def official_runner(tmp_path_factory, dev_targets_file):
    """Runs a step program exactly as the original harness writes it, with its own package.

    ``run(step_ids, codes)`` gives each step's verdict by the official rule (exit status 0);
    ``errors``, when given, receives the end of each failing program's stderr.
    """
    from scievals.sandbox.runtime import ensure_runtime

    root = tmp_path_factory.mktemp("official")
    wheel = pip_wheel(SCICODE_WHEEL, SCICODE_WHEEL_SHA256)
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.startswith(("scicode/parse/", "scicode/compare/")) or member in (
                "scicode/__init__.py",
                "scicode/data/__init__.py",
            ):
                zf.extract(member, root)
    data = root / "h5"
    data.mkdir()
    (data / "test_data.h5").symlink_to(dev_targets_file)
    raw = {}
    for line in official_file("problems_dev.jsonl").decode().splitlines():
        item = json.loads(line)
        raw[str(item["problem_id"])] = item
    python = str(ensure_runtime().python)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(root), "DATA_CACHE_DIR": str(data)}

    def program(step_id: str, codes: dict[str, str]) -> str:
        problem_id, number = step_id.split(".")
        prob = raw[problem_id]
        steps = prob["sub_steps"]
        k = int(number)
        previous = "\n".join(codes.get(s["step_number"], "") for s in steps[: k - 1])
        text = f"{prob['required_dependencies']}\n{previous}\n" + "\n" + codes.get(step_id, "")
        tests = steps[k - 1]["test_cases"]
        text += "\n\nfrom scicode.parse.parse import process_hdf5_to_tuple\n\n"
        text += f"targets = process_hdf5_to_tuple('{step_id}', {len(tests)})\n"
        for index, test in enumerate(tests):
            text += f"target = targets[{index}]\n\n" + "".join(
                line + "\n" for line in test.split("\n")
            )
        return text

    def run(
        step_ids: list[str], codes: dict[str, str], errors: dict[str, str] | None = None
    ) -> dict[str, bool]:
        def one(step_id: str) -> bool:
            path = root / f"{step_id}_0.py"
            path.write_text(program(step_id, codes), encoding="utf-8")
            proc = subprocess.run(
                [python, str(path)], cwd=root, env=env, capture_output=True, timeout=hang_s()
            )
            if proc.returncode != 0 and errors is not None:
                errors[step_id] = proc.stderr.decode(errors="replace")[-600:]
            return proc.returncode == 0

        with ThreadPoolExecutor(4) as pool:
            return dict(zip(step_ids, pool.map(one, step_ids), strict=True))

    return run
