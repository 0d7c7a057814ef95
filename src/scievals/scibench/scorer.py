"""The SciBench scorers: ``faithful`` and ``robust``, reported side by side, and OpenCompass's.

Both read the gold from the sample metadata and the reply from the final output (or, in the tool
settings, the program outputs the solver stored). Each Score carries the parsed answer and the
rule that fired, so a log can be re-read, audited and re-scored later (``inspect score LOG``):
the scorers take only small, serializable parameters and rebuild the rest from the sample.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from scievals.scibench.config import SciBenchConfig
from scievals.scibench.faithful import faithful_score, faithful_tool_score
from scievals.scibench.metrics import scibench_metrics
from scievals.scibench.opencompass import opencompass_score
from scievals.scibench.robust import robust_score, robust_tool_score
from scievals.scibench.units import official_unit
from scievals.scibench.verdict import Verdict

TOOL_STORE_KEY = "scibench_tool"


@cache
def errata() -> dict[str, dict[str, dict[str, str]]]:
    """The errata overlay (version -> sample id -> corrected answer_number and a note)."""
    text = resources.files("scievals.scibench").joinpath("errata.json").read_text("utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def _score(verdict: Verdict, extra: dict[str, Any] | None = None) -> Score:
    parsed = verdict.parsed
    return Score(
        value=1 if verdict.correct else 0,
        answer=None if parsed is None else str(parsed),
        explanation=verdict.rule,
        metadata={"rule": verdict.rule, "extracted": verdict.extracted, **verdict.details}
        | (extra or {}),
    )


def _tool_output(state: TaskState, mode: str) -> tuple[bool, str | None]:
    """(is a tool setting, stdout or None) as stored by the tool solver."""
    runs = state.store.get(TOOL_STORE_KEY)
    if runs is None:
        return False, None
    return True, runs[mode]["stdout"]


@scorer(metrics=scibench_metrics(), name="faithful")
def faithful() -> Scorer:
    """The official extraction and comparison, quirks included (spec section 3)."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        unit = official_unit(meta["unit"])
        is_tool, stdout = _tool_output(state, "faithful")
        if is_tool:
            verdict = faithful_tool_score(stdout, meta["answer_number"], unit)
        else:
            verdict = faithful_score(state.output.completion, meta["answer_number"], unit)
        return _score(verdict)

    return score


@scorer(metrics=scibench_metrics(), name="robust")
def robust(use_errata: bool = False, abs_tol: float = 0.0) -> Scorer:
    """Careful parsing and scale-aware comparison (spec section 7), with the optional errata."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        unit = official_unit(meta["unit"])
        gold = meta["answer_number"]
        extra: dict[str, Any] = {}
        fix = errata().get(meta.get("version", ""), {}).get(str(state.sample_id))
        if use_errata and fix is not None:
            gold = fix["answer_number"]
            extra = {"errata": fix["note"], "published_gold": meta["answer_number"]}
        is_tool, stdout = _tool_output(state, "robust")
        if is_tool:
            verdict = robust_tool_score(stdout, gold, unit, abs_tol)
        else:
            verdict = robust_score(state.output.completion, gold, unit, abs_tol)
        return _score(verdict, extra)

    return score


@scorer(metrics=scibench_metrics(), name="opencompass")
def opencompass() -> Scorer:
    """OpenCompass's extraction and exact string match (``scievals.scibench.opencompass``)."""

    async def score(state: TaskState, target: Target) -> Score:
        return _score(opencompass_score(state.output.completion, state.metadata["answer_number"]))

    return score


SCORERS = {"faithful": faithful, "robust": robust, "opencompass": opencompass}
"""Each scorer by the name a log records it under."""


def scorer_args(config: SciBenchConfig) -> dict[str, dict[str, Any]]:
    """The scorers of ``scorer=faithful|robust|both|opencompass|all`` (all three, as ``scievals
    regrade`` grades OpenCompass's replies), in that order, each with its arguments as a log
    records them (``--verify`` checks a log's against these)."""
    if config.scorer == "opencompass":
        return {"opencompass": {}}
    chosen: dict[str, dict[str, Any]] = {}
    if config.scorer in ("faithful", "both", "all"):
        chosen["faithful"] = {}
    if config.scorer in ("robust", "both", "all"):
        chosen["robust"] = {"use_errata": config.errata, "abs_tol": config.abs_tol}
    if config.scorer == "all":
        chosen["opencompass"] = {}
    return chosen


def scorers(config: SciBenchConfig) -> list[Scorer]:
    """The scorers of the config (``scorer_args``)."""
    return [SCORERS[name](**args) for name, args in scorer_args(config).items()]
