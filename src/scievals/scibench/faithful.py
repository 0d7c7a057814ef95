"""The official SciBench extraction and comparison (``eval/post_process.py``, ``equiv`` on main).

Reproduced quirk by quirk, failures included, as pure functions so that every rule is a row in a
test table.
"""

from __future__ import annotations

import math
from typing import Any

from scievals.scibench.units import POWER, Unit
from scievals.scibench.verdict import REL_TOL, Verdict


class OfficialCrash(Exception):
    """An input on which the official harness raises outside any ``try`` (the run would stop)."""


def last_boxed_only(text: str) -> str | None:
    """The official ``last_boxed_only_string``: last "oxed" (else "\\fbox") to its closing brace."""
    idx = text.rfind("oxed")
    if idx < 0:
        idx = text.rfind("\\fbox")
        if idx < 0:
            return None
    depth = 0
    for i in range(idx, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[idx : i + 1]
    return None


def remove_boxed(boxed: str | None) -> str | None:
    """The official ``remove_boxed``: must start with "oxed{" ("\\fbox{..}", "\\boxed {" fail).

    After an "=", only the text after the last "=" is kept (left-stripped of spaces).
    """
    left = "oxed{"
    if boxed is None or not boxed.startswith(left) or not boxed.endswith("}"):
        return None
    answer = boxed[len(left) : -1]
    if "=" in answer:
        answer = answer.split("=")[-1].lstrip(" ")
    return answer


def official_extract(reply: str) -> str | None:
    """The official ``parse_math_answer``."""
    return remove_boxed(last_boxed_only(reply))


def _parse_not(text: str | None) -> str | tuple[str, str]:
    """The official ``parse_not``: split a x10^ answer into (mantissa, power part).

    Its first test is for TAB + "imes" (Python's escape of a one-backslash "\\times"), then the
    real "\\times", then "*". A second separator makes its tuple unpacking raise, uncaught.
    """
    if not text:
        return ("", "")
    for separator in ("\times", "\\times", "*"):
        if separator in text:
            parts = text.split(separator)
            if len(parts) != 2:
                raise OfficialCrash(f"{len(parts) - 1} occurrences of {separator!r}")
            return (parts[0], parts[1])
    return text


def _cal_not(value: str | tuple[str, str]) -> str | tuple[str, str]:
    """The official ``cal_not``: mantissa x 10^k as ``str(float)``; on any failure, the input back.

    A plain string only unpacks when it has two characters, and then has no power, so strings
    always come back unchanged.
    """
    if not isinstance(value, tuple):
        return value
    mantissa, power_part = value
    found = POWER.findall(power_part)
    if not found:
        return value
    power = found[0][found[0].find("^") + 1 :]
    if "{" in power:
        power = power[power.find("{") + 1 :]
    if "}" in power:
        power = power[: power.find("}")]
    try:
        return str(float(mantissa.strip()) * 10 ** float(power))
    except (ValueError, OverflowError):
        return value


def faithful_gold(answer_number: str, unit: Unit) -> str | tuple[str, str]:
    """The gold string the official code compares against (rescaled to full magnitude or raw)."""
    if unit.rescaled:
        return _cal_not((answer_number, unit.raw))
    return answer_number


def _official_float(text: str) -> float | None:
    """Python's ``float`` as the official code uses it (accepts "+5", "1e-3", "1_0", "nan")."""
    try:
        return float(text)
    except (ValueError, TypeError):
        return None


def official_equiv(pred: Any, gold: Any) -> tuple[bool, str]:
    """The official ``equiv`` (main branch): commas removed, whole string then first token.

    ``math.isclose(rel_tol=0.05)``, abs_tol 0. Returns (correct, rule) where the rule says which
    try matched, or why neither could.
    """
    if not isinstance(pred, str):
        return False, "no-answer"
    pred = pred.replace(",", "")
    gold_value = _official_float(gold.strip()) if isinstance(gold, str) else None
    if gold_value is None:
        return False, "gold-unparsable"
    whole = _official_float(pred.strip())
    tokens = pred.strip().split()
    first = _official_float(tokens[0]) if tokens else None
    if whole is not None and math.isclose(whole, gold_value, rel_tol=REL_TOL):
        return True, "whole"
    if first is not None and math.isclose(first, gold_value, rel_tol=REL_TOL):
        return True, "first-token"
    if whole is None and first is None:
        return False, "not-a-number"
    return False, "whole" if whole is not None else "first-token"


def _official_number(pred: Any) -> bool:
    """Whether the official comparison could read a number from ``pred`` at all."""
    if not isinstance(pred, str):
        return False
    text = pred.replace(",", "").strip()
    tokens = text.split()
    return _official_float(text) is not None or (
        bool(tokens) and _official_float(tokens[0]) is not None
    )


def faithful_score(reply: str, answer_number: str, unit: Unit) -> Verdict:
    """Score a text reply exactly as the official zero/zeroCot/few scripts do.

    Total like the official code where it is total: a number past a double's range reads as inf
    (float()) or fails its x10^ rescaling (cal_not catches the OverflowError), and is wrong. Where
    the official code raises uncaught (``OfficialCrash``: its run would stop), the reply is wrong
    with rule "official-crash": one reply must not end an evaluation, and the rule says which
    replies the official harness could not have scored.
    """
    boxed = official_extract(reply)
    gold = faithful_gold(answer_number, unit)
    pred: Any = boxed
    if unit.rescaled:
        try:
            pred = _cal_not(_parse_not(boxed))
        except OfficialCrash as exc:
            return Verdict(False, boxed, f"official-crash: {exc}", False)
    correct, rule = official_equiv(pred, gold)
    if boxed is None:
        rule = "no-boxed"
    elif not isinstance(pred, str):
        rule = "scale-parse-failed"
    parsed = pred if isinstance(pred, str) else boxed
    return Verdict(correct, parsed, rule, _official_number(pred), {"gold": _gold_repr(gold)})


def faithful_tool_score(stdout: str | None, answer_number: str, unit: Unit) -> Verdict:
    """Score a program's output as ``eval_tool`` does: whole stripped stdout, "None" on error.

    The gold is rescaled as usual but the output gets no x10^ parsing.
    """
    pred = "None" if stdout is None else stdout.strip()
    gold = faithful_gold(answer_number, unit)
    correct, rule = official_equiv(pred, gold)
    if stdout is None:
        rule = "program-failed"
    return Verdict(correct, pred, rule, _official_number(pred), {"gold": _gold_repr(gold)})


def _gold_repr(gold: str | tuple[str, str]) -> str:
    return gold if isinstance(gold, str) else "|".join(gold)
