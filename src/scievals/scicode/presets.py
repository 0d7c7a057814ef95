"""SciCode's published setups (``preset=NAME``), each field as its source gives it.

Sources and every assumption, field by field: ``docs/presets.md`` (shared/specs/protocols.md,
scicode.md). Where a source is silent, the value is the original harness's and the docs say so.
"""

from __future__ import annotations

from scievals.presets import Preset

_ORIGINAL_HARNESS = {
    "dataset": "original",
    "prompt_protocol": "single_turn",
    "previous_steps": "model",
    "extraction": "original",
    "timeout": 1800,
    "step_count": "official",
    "runtimes": "2024",
}
_PAPER = {**_ORIGINAL_HARNESS, "split": "test", "provide_scientific_background": False}
_ALL_WITH_BACKGROUND = {**_ORIGINAL_HARNESS, "split": "all", "provide_scientific_background": True}
# HAL's code agent: a Python interpreter, at most 5 steps, 60 s per test program.
_HAL = {
    **_PAPER,
    "timeout": 60,
    "runtimes": "2025",
    "agent": "react",
    "agent_tool_call_limit": 5,
    "agent_tool_timeout": 60,
}

PRESETS = (
    Preset(  # the SciCode paper and leaderboard, without background: 65 test problems, 288 steps
        "paper",
        _PAPER,
        temperature=0.0,
        epochs=1,
        sources=("SciCode paper", "SciCode harness"),
    ),
    Preset(  # the SciCode paper, with background: 65 test problems, 288 steps
        "paper_background",
        {**_PAPER, "provide_scientific_background": True},
        temperature=0.0,
        epochs=1,
        sources=("SciCode paper", "SciCode harness"),
    ),
    Preset(  # inspect_evals' scicode with include_dev_set: 80 problems, 341 steps, chat, 300 s
        "inspect_evals",
        {
            "dataset": "original",
            "split": "all",
            "provide_scientific_background": False,
            "prompt_protocol": "chat",
            "previous_steps": "model",
            "extraction": "inspect",
            "timeout": 300,
            "step_count": "inspect_evals",
            "runtimes": "2025",
        },
        epochs=1,
        sources=("inspect_evals",),
    ),
    Preset(  # SciCode-Verified's canonical protocol: 64 problems, 287 steps, 2024+2025, 1,800 s
        "verified",
        {
            **_ORIGINAL_HARNESS,
            "dataset": "verified",
            "split": "test",
            "provide_scientific_background": False,
            "step_count": "verified",
            "runtimes": "2024,2025",
        },
        temperature=0.0,
        epochs=1,
        sources=("SciCode-Verified",),
    ),
    Preset(  # Artificial Analysis, non-reasoning models: dev and test (80, 338), background, repeats
        "artificial_analysis",
        _ALL_WITH_BACKGROUND,
        temperature=0.0,
        epochs=3,
        sources=("Artificial Analysis", "NeMo-Skills"),
    ),
    Preset(  # Artificial Analysis, reasoning models: as artificial_analysis at temperature 0.6
        "artificial_analysis_reasoning",
        _ALL_WITH_BACKGROUND,
        temperature=0.6,
        epochs=3,
        sources=("Artificial Analysis", "NeMo-Skills"),
    ),
    Preset(  # NeMo-Skills' test_aai: 80 problems, 338 steps, background, 30 s, 16 samples
        "nemo",
        {**_ALL_WITH_BACKGROUND, "timeout": 30},
        temperature=0.6,
        epochs=16,
        sources=("NeMo-Skills",),
    ),
    Preset(  # HAL's scicode with a code agent: 65 test problems, each step answered by an agent
        "hal",
        _HAL,
        epochs=1,
        sources=("HAL",),
    ),
    Preset(  # HAL's scicode_easy: as hal, with background
        "hal_easy",
        {**_HAL, "provide_scientific_background": True},
        epochs=1,
        sources=("HAL",),
    ),
    Preset(  # HAL's scicode_hard: the whole problem in one prompt, graded on its last step
        "hal_hard",
        {**_HAL, "prompt_protocol": "whole_problem"},
        epochs=1,
        sources=("HAL",),
    ),
)
