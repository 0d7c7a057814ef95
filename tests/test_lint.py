"""inspect-evals-lint on both benchmarks: every rule passes, or its finding is marked with why.

Findings in the code are marked where they are (``# inspect-evals-lint: ignore[...] -- reason``);
the layout and the repository-wide exceptions are here, each with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_evals_lint.config import config_from_table
from inspect_evals_lint.runner import lint_package

ROOT = Path(__file__).resolve().parents[1]
CONFIG = config_from_table(
    {
        "preset": "multi-eval",
        "source-root": "src/scievals",
        "import-prefix": "scievals",
        # one entry point module imports every task (and registers the scorers' log names)
        "registry": "module",
        "registry-module": "src/scievals/_registry.py",
        "helper-dirs": ["sandbox", "models", "report"],
        "per-file-ignores": {
            # PLW1514 (open() without an encoding) needs ruff's preview mode, and the sandbox's
            # own open() calls get their encodings first; every benchmark file passes it now.
            "pyproject.toml": ["ruff_rules_enabled"],
        },
    }
)


@pytest.mark.parametrize("benchmark", ["scibench", "scicode"])
def test_benchmark_passes_the_lint(benchmark: str) -> None:
    if not (ROOT / "src" / "scievals" / benchmark / "__init__.py").is_file():
        pytest.skip(f"scievals.{benchmark} is not a package yet (the linter needs __init__.py)")
    report = lint_package(ROOT, benchmark, CONFIG)
    open_findings = [
        f"{d.rule.code if d.rule else '?'} {d.message} ({d.file}:{d.line})"
        for d in report.diagnostics
        if not d.suppressed
    ]
    assert open_findings == []
