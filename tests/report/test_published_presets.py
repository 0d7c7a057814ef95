"""Published figures beside the runs of the presets that reproduce them: the protocol each preset
really writes into its log, matched against ``published.csv``."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from scievals.report.published import REFERENCES, references_for
from scievals.scibench.presets import PRESETS as SCIBENCH_PRESETS
from scievals.scicode.presets import PRESETS as SCICODE_PRESETS

HAL_CODEX = "hal-harness PR #149 (2026-02-24), Codex agent with iterative local validation"
NEMOTRON = (
    "NVIDIA Model-Optimizer, Nemotron-3-Nano-30B-A3B tutorial (NeMo Evaluator ns_scicode, mean "
    "of 8 repeats, sd 1.2)"
)


@cache
def preset_protocol(name: str) -> dict[str, Any]:
    """The protocol a run under preset ``name`` records (the task built as Inspect builds it)."""
    from scievals.scicode.task import scicode

    return scicode(preset=name).metadata["protocol"]


@pytest.mark.parametrize(
    ("preset", "sources"),
    [
        ("hal", {HAL_CODEX}),
        ("hal_easy", set()),  # with background
        ("hal_hard", set()),  # 65 whole problems, not steps
        ("artificial_analysis", {NEMOTRON}),
        ("artificial_analysis_reasoning", {NEMOTRON}),
        ("nemo", {NEMOTRON}),  # NeMo-Skills' test_aai: the setup the figure was measured in
        ("paper", {"SciCode leaderboard"}),
        ("inspect_evals", set()),
    ],
)
def test_a_published_figure_sits_beside_the_preset_that_reproduces_it(
    preset: str, sources: set[str]
) -> None:
    assert {ref.source for ref in references_for(preset_protocol(preset))} == sources


def test_the_figures_as_published() -> None:
    [hal] = [r for r in REFERENCES if r.source == HAL_CODEX]
    # 8 of 65 problems and 114 of 291 steps: "12.31%" and "39.18%" in the PR
    assert (round(hal.metrics["main"], 2), round(hal.metrics["sub"], 2)) == (12.31, 39.18)
    assert (
        hal.protocol == "hal" and hal.url == "https://github.com/princeton-pli/hal-harness/pull/149"
    )
    assert "291" in hal.setting  # HAL's subproblem figures count the pre-supplied steps
    [nano] = [r for r in REFERENCES if r.source == NEMOTRON]
    assert (nano.model, nano.metrics, nano.protocol) == (
        "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        {"sub": 31.8},
        "artificial_analysis",
    )
    presets = {p.name for p in SCICODE_PRESETS + SCIBENCH_PRESETS}
    assert {r.protocol for r in REFERENCES} <= presets  # each named by the preset reproducing it
