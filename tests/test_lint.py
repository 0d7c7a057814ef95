"""inspect-evals-lint on both benchmarks: every rule passes, or its finding is marked with why.

Findings in the code are marked where they are (``# inspect-evals-lint: ignore[...] -- reason``);
the layout and the repository-wide exceptions are in pyproject.toml's ``[tool.inspect-evals-lint]``,
each with its reason, so that the plain ``inspect-evals-lint`` command agrees with this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_evals_lint.config import load_config
from inspect_evals_lint.runner import lint_package

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_config(ROOT)
"""The ``[tool.inspect-evals-lint]`` table of pyproject.toml, as the plain command reads it."""


@pytest.mark.parametrize("package", ["scibench", "scicode", *sorted(CONFIG.helper_dirs)])
def test_package_passes_the_lint(package: str) -> None:
    """Each package ``inspect-evals-lint --all`` checks: both benchmarks and the helpers."""
    report = lint_package(ROOT, package, CONFIG)
    open_findings = [
        f"{d.rule.code if d.rule else '?'} {d.message} ({d.file}:{d.line})"
        for d in report.diagnostics
        if not d.suppressed
    ]
    assert open_findings == []
