"""Every SciCode preset end to end, offline, on the slice its data allows: the dev split (15
problems, 50 steps) with the reference and a mock model, and SciCode-Verified's test problems
generated without scoring (its targets are not here). The log's protocol holds the preset's name
and every field it sets, and the split override is recorded. HAL's presets run their agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog

from scievals.presets import Preset, spelled
from scievals.report.load import run_from_log
from scievals.scicode.data.dataset import load_problems
from scievals.scicode.presets import PRESETS

VERIFIED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scicode-verified"
ON_DEV = [p for p in PRESETS if p.fields["dataset"] == "original"]


def _shown(log: EvalLog, field: str, value: Any) -> bool:
    """Whether the log shows the preset's ``field`` at ``value`` (protocol, or Inspect's own
    record of generation settings)."""
    protocol = log.eval.metadata["protocol"]  # type: ignore[index]
    config = log.eval.config
    run = run_from_log(log)  # generation settings as the report reads them
    where = {
        "dataset": protocol["dataset"],
        "split": protocol["preset_fields"]["split"],
        "provide_scientific_background": protocol["background"],
        "prompt_protocol": protocol["prompt"].split(" + ")[0],
        "previous_steps": "gold" if "gold previous steps" in protocol["prompt"] else "model",
        "extraction": protocol["scorer"].split("extraction=")[1].split(";")[0],
        "timeout": protocol["timeout"],
        "step_count": protocol["step_count"],
        "runtimes": protocol["runtimes"],
        "agent": (protocol["agent"] or "").split(":")[0],
        "agent_tool_call_limit": (protocol["agent_limits"] or {}).get("tool_calls"),
        "agent_tool_timeout": (protocol["agent_limits"] or {}).get("tool_timeout"),
        "temperature": run.temperature,
        "max_tokens": run.max_tokens,
        "epochs": config.epochs,
    }
    return spelled(where[field]) == spelled(value)


def _check(log: EvalLog, preset: Preset, overridden: dict[str, Any] | None) -> None:
    assert log.status == "success", log.error
    protocol = log.eval.metadata["protocol"]  # type: ignore[index]
    assert protocol["preset"] == preset.name
    assert protocol["overridden"] == overridden
    assert protocol["preset_fields"] == preset.record()
    unshown = [f for f, v in preset.record().items() if not _shown(log, f, v)]
    assert unshown == []


def _failures(log: EvalLog) -> set[str]:
    """The reason kinds of the failed steps, over every sample and epoch."""
    return {
        step["reason_kind"]
        for sample in log.samples or []
        for score in (sample.scores or {}).values()
        for step in (score.metadata or {}).get("steps", [])
        if not step["passed"]
    }


def _scores(log: EvalLog) -> dict[str, float]:
    [scores] = log.results.scores  # type: ignore[union-attr]
    return {name: m.value for name, m in scores.metrics.items()}


SLICE = ("19", "29")
"""Two small dev problems (5 steps): every preset's whole path, in CI's time."""


@pytest.mark.slow
@pytest.mark.parametrize("preset", ON_DEV, ids=[p.name for p in ON_DEV])
def test_each_preset_runs_the_dev_split(preset: Preset, tmp_path: Path) -> None:
    from scievals.scicode.task import scicode

    split = {"split": "dev"} if preset.fields["split"] != "dev" else None
    for model in ("scievals/reference", "mockllm/model"):
        [log] = eval(
            scicode(preset=preset.name, split="dev"),
            model=model,
            sample_id=list(SLICE),
            display="none",
            log_dir=str(tmp_path / model.replace("/", "-")),
        )
        _check(log, preset, split)
        scores = _scores(log)
        assert log.eval.config.epochs == preset.epochs
        counted = sum(len(p.scored_steps) for p in load_problems("dev") if p.problem_id in SLICE)
        main, sub = scores["total_main_problems_solved"], scores["total_subproblems_solved"]
        if model == "mockllm/model":
            assert sub == 0
        elif preset.fields["timeout"] < 300:  # gold fails only where it needs more time
            assert _failures(log) <= {"timeout"}
        else:
            assert (main, sub) == (len(SLICE), counted)


@pytest.mark.slow
@pytest.mark.skipif(not VERIFIED.is_dir(), reason=f"no SciCode-Verified copy at {VERIFIED}")
def test_the_verified_preset_generates_its_test_problems(tmp_path: Path) -> None:
    """Verified has no dev split and its targets are not here: generation only (--no-score)."""
    from scievals.scicode.task import scicode

    [preset] = [p for p in PRESETS if p.name == "verified"]
    for model in ("scievals/reference", "mockllm/model"):
        [log] = eval(
            scicode(preset="verified", source=str(VERIFIED)),
            model=model,
            score=False,
            limit=3,
            display="none",
            log_dir=str(tmp_path / model.replace("/", "-")),
        )
        _check(log, preset, None)
        assert log.eval.metadata["protocol"]["steps_counted"] == 287  # type: ignore[index]
