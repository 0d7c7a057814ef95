"""What a log records against its re-grade, as lines: each step's verdict, and the metrics.

A step's verdict is recorded twice, as the score's value (``{step: 1.0|0.0}``) and in its
metadata (``steps``, each with ``passed``); a step whose records are not what the re-grade gives
is one line, naming which record says what. The metrics are the task's own, of the re-graded
scores, each problem's epochs reduced by the task's reducer: a metric the log reports otherwise
is one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score

from scievals.regrade_verify import metric_differences, metric_values
from scievals.scicode.metrics import METRICS, scicode_epochs
from scievals.scicode.regrade.scievals_log import SCORER

REDUCER = "scicode_epochs"


Claim = bool | str | None
"""A step's verdict as a score records it: pass, fail, nothing, or a value that is neither."""


def _claims(score: Score) -> tuple[dict[str, Claim], dict[str, Claim]]:
    """Step -> verdict, as ``score``'s value records it and as its metadata's steps do."""
    value = score.value if isinstance(score.value, dict) else {}
    values = {str(step): _verdict(v) for step, v in value.items()}
    steps = (score.metadata or {}).get("steps") if isinstance(score.metadata, dict) else None
    verdicts = (
        {
            str(v["step"]): _verdict(v.get("passed"))
            for v in steps
            if isinstance(v, dict) and "step" in v
        }
        if isinstance(steps, list)
        else {}
    )
    return values, verdicts


def _verdict(value: Any) -> Claim:
    if isinstance(value, bool | int | float) and value in (0, 1):
        return bool(value)
    return repr(value)[:40]


def step_lines(name: str, recorded: Score | None, regraded: Score) -> list[str]:
    """One line for each step whose recorded verdict is not the re-graded one."""
    if recorded is None:
        return [f"{name}: the log records no {SCORER} score; re-graded {regraded.answer}"]
    theirs_value, theirs_verdict = _claims(recorded)
    ours_value, ours_verdict = _claims(regraded)
    reasons = {str(v["step"]): v.get("reason") for v in (regraded.metadata or {}).get("steps", [])}
    steps = list(dict.fromkeys([*ours_verdict, *ours_value, *theirs_verdict, *theirs_value]))
    lines = []
    for step in steps:
        differ = [
            (kind, theirs.get(step))
            for kind, theirs, ours in (
                ("score", theirs_value, ours_value),
                ("verdict", theirs_verdict, ours_verdict),
            )
            if (step in theirs or step in ours) and theirs.get(step) != ours.get(step)
        ]
        if not differ:
            continue
        ours = ours_verdict.get(step, ours_value.get(step))
        reason = reasons.get(step)
        why = f" ({str(reason).splitlines()[0][:150]})" if ours is False and reason else ""
        if len(differ) == 2 and differ[0][1] == differ[1][1]:
            said = f"the log's score and verdict say {_word(differ[0][1])}"
        else:
            said = "the log's " + ", its ".join(f"{k} says {_word(v)}" for k, v in differ)
        lines.append(f"{name} step {step}: re-graded {_word(ours)}{why}; {said}")
    return lines


def _word(claim: Claim) -> str:
    if claim is None:
        return "nothing"
    if isinstance(claim, bool):
        return "pass" if claim else "fail"
    return claim


def recomputed(by_id: Mapping[str, list[tuple[int, Score]]]) -> dict[str, float]:
    """The task's metrics of the re-graded scores, each problem's epochs reduced by its reducer,
    named as the log names them."""
    return metric_values(METRICS, scicode_epochs(), by_id)


def metric_lines(log: EvalLog, by_id: Mapping[str, list[tuple[int, Score]]]) -> list[str]:
    """One line for each metric the log reports otherwise than the re-graded scores give."""
    return metric_differences(log, SCORER, REDUCER, recomputed(by_id))
