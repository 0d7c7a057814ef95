"""SciBench answer parsing and comparison: the official rules (faithful) and ours (robust).

Pure functions only, so that every rule is a row in a test table. The faithful half reproduces
the official harness (``eval/post_process.py`` and ``equiv`` on the main branch) quirk by quirk,
failures included; the robust half is what a careful grader would do, and names the rule it used.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any

REL_TOL = 0.05

# The official unit regex: optional `$`, `10^`, optional `{`, an integer, optional `}` and `$`.
_UNIT_SCALE = re.compile(r"[\$]?\ *10\^[{]?\ *-?[0-9]+\ *[}]?\ *[\$]?")
# The official power regex used to read k out of "... 10^{k} ..." (first match wins).
_POWER = re.compile(r"10\^[{]?\ *-?[0-9]+\ *[}]?")


# --------------------------------------------------------------------------------------------
# Units: the three official paths (spec 1.3)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A record's unit as the official code treats it.

    ``shown`` is the U of "The unit of the answer is U."; ``rescaled`` says whether the gold is
    compared at full magnitude (mantissa x 10^k) with the x10^ parsing of the model's answer.
    ``exponent`` is k when the raw unit carries a power of ten (whatever the path).
    """

    raw: str
    shown: str
    rescaled: bool
    exponent: int | None


def official_unit(raw: str) -> Unit:
    """Apply the official ``remove_not``: keep the text after the last 10^k, tested for truthiness.

    The remainder of "$10^{21}$ " is " " (true: rescaled, blank unit shown); that of "$10^{42}$"
    is "" (false: the raw unit is shown and the mantissa is compared).
    """
    remainder = _UNIT_SCALE.split(raw)[-1] if _UNIT_SCALE.search(raw) else None
    shown = remainder if remainder else raw
    return Unit(raw=raw, shown=shown, rescaled=shown != raw, exponent=unit_exponent(raw))


def unit_exponent(raw: str) -> int | None:
    """k of the first ``10^k`` in a unit, as the official gold rescaling reads it."""
    match = _POWER.search(raw)
    if match is None:
        return None
    return int(match.group(0)[3:].strip("{} "))


# --------------------------------------------------------------------------------------------
# Faithful: the official extraction and comparison
# --------------------------------------------------------------------------------------------


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
    found = _POWER.findall(power_part)
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


@dataclass(frozen=True)
class Verdict:
    """One scored answer: what was parsed, by which rule, and whether it counts as extracted."""

    correct: bool
    parsed: str | float | None
    rule: str
    extracted: bool
    details: dict[str, Any] = field(default_factory=dict)


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
    """Score a text reply exactly as the official zero/zeroCot/few scripts do."""
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


# --------------------------------------------------------------------------------------------
# Robust: careful extraction, number parsing and scale-aware comparison
# --------------------------------------------------------------------------------------------

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_TIMES_TEN = r"\s*(?:\\times|\\cdot|\*|x)\s*10\s*(?:\^|\*\*)\s*\{?\s*\(?\s*([-+]?\d+)\s*\)?\s*\}?"
_SCI = re.compile(rf"^({_NUMBER}){_TIMES_TEN}(?![\d.])")
_LAST_NUMBER = re.compile(rf"{_NUMBER}(?:{_TIMES_TEN})?")
_POW10 = re.compile(r"^10\s*(?:\^|\*\*)\s*\{?\s*\(?([-+]?\d+)\)?\s*\}?$")
_ANSWER_IS = re.compile(r"answer\s+is\s*(?:therefore\s*)?:?\s*(.+)", re.IGNORECASE | re.DOTALL)
_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u2013": "-",  # en dash, used as a minus by some models
    "\u00d7": r"\times ",
    "\u00b7": r"\cdot ",
    "\u22c5": r"\cdot ",
    "\u2248": "=",  # approximately equal: keep what follows
    "\u03c0": r"\pi ",
    "\u221a": r"\sqrt",
    "\u2009": "",  # thin space inside numbers
    "\u202f": "",
    "\u00a0": " ",
    "\u00b0": " ",  # degree sign
}


def _balanced(text: str, start: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``text[start]``, and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last balanced ``\\boxed{}``/``\\fbox{}``, allowing spaces before the brace."""
    for match in reversed(list(re.finditer(r"\\(?:boxed|fbox)\s*\{", text))):
        group = _balanced(text, match.end() - 1)
        if group is not None:
            return group[0]
    return None


def _strip_wrappers(text: str) -> str:
    """Drop units and typesetting: ``\\text{..}``/``\\mathrm{..}`` words, ``$``, spacing."""
    for src, dst in _UNICODE.items():
        text = text.replace(src, dst)
    text = text.replace("{,}", ",")  # LaTeX thousands/decimal comma guard
    text = re.sub(r"\\(?:left|right|displaystyle|!|;|:|quad|qquad)", " ", text)
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    # \text{...}, \mathrm{...} etc.: a word (a unit) is dropped, anything else is unwrapped.
    # \text{..}, \mathrm{..} etc.: a word (a unit, with its power) is dropped, a number unwrapped.
    pattern = re.compile(
        r"\\(?:text|mathrm|textrm|mbox|operatorname|mathit|rm)\s*\{([^{}]*)\}"
        r"(\s*\^\s*(?:\{[^{}]*\}|-?\d+))?"
    )
    while (match := pattern.search(text)) is not None:
        inner = match.group(1)
        is_number = _NUMBER_RE.fullmatch(inner.strip()) is not None
        keep = (
            inner + (match.group(2) or "")
            if is_number or not re.search(r"[A-Za-z°%]", inner)
            else ""
        )
        text = text[: match.start()] + keep + text[match.end() :]
    text = text.replace("$", " ").replace("\\,", "").replace("~", " ")
    text = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", " ", text)  # degrees
    text = text.replace("\\%", "%").replace("%", " ")
    return text.strip().rstrip(".").strip()


def _after_equals(text: str) -> str:
    """Keep what follows the last "=", "\\approx" or "\\sim" ("x = 3", "E \\approx 2")."""
    parts = re.split(r"=|\\approx|\\simeq|\\sim(?![a-z])", text)
    return parts[-1].strip()


_FUNCS = {
    "sqrt": math.sqrt,
    "exp": math.exp,
    "ln": math.log,
    "log": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
}
_NAMES = {"pi": math.pi, "e": math.e}
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}


def _safe_eval(node: ast.AST) -> float:
    """Evaluate a tiny arithmetic AST (numbers, + - * / **, pi, e, sqrt/exp/ln/log); no exec."""
    if isinstance(node, ast.Expression):
        return _safe_eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _safe_eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _safe_eval(node.left), _safe_eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 400:
            raise ValueError("exponent too large")
        return float(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and len(node.args) == 1
        and not node.keywords
    ):
        return float(_FUNCS[node.func.id](_safe_eval(node.args[0])))
    raise ValueError(f"unsupported expression: {ast.dump(node)[:60]}")


def _latex_to_python(text: str) -> str:
    """Rewrite simple LaTeX arithmetic (\\frac, \\sqrt, \\pi, \\times, ^, braces) as Python."""
    frac = re.compile(r"\\frac\s*")
    while (match := frac.search(text)) is not None:
        num = _balanced(text, match.end())
        den = _balanced(text, num[1]) if num else None
        if num is None or den is None:
            break
        text = text[: match.start()] + f"(({num[0]})/({den[0]}))" + text[den[1] :]
    text = re.sub(r"\\sqrt\s*(\d+(?:\.\d+)?|[a-z]+)", r"sqrt(\1)", text)
    sqrt = re.compile(r"\\sqrt\s*")
    while (match := sqrt.search(text)) is not None:
        arg = _balanced(text, match.end())
        if arg is None:
            break
        text = text[: match.start()] + f"sqrt({arg[0]})" + text[arg[1] :]
    text = re.sub(r"\\(?:times|cdot)", "*", text)
    text = re.sub(r"\\(pi|ln|log|exp|sin|cos|tan)\b", r"\1", text)
    text = text.replace("^", "**").replace("{", "(").replace("}", ")")
    text = re.sub(r"(\d)\s*(\(|pi|sqrt)", r"\1*\2", text)  # implicit products: 2\pi, 3\sqrt{2}
    text = re.sub(r"\)\s*(\(|\d|pi|sqrt)", r")*\1", text)
    return text


def parse_number(text: str | None) -> tuple[float | None, str]:
    """Read one number from an answer string; returns (value, rule) with the rule that read it.

    Order: plain float; thousands separators; a x 10^b (every notation); 10^b; a safe evaluation of
    fractions, roots and pi; and last the leading number of the string ("50.7 atm").
    """
    if text is None:
        return None, "no-answer"
    cleaned = _after_equals(_strip_wrappers(text))
    compact = cleaned.replace(" ", "")
    if not compact:
        return None, "empty"
    try:
        value = float(compact)
        if math.isfinite(value):
            return value, "plain"
    except ValueError:
        pass
    if _THOUSANDS.match(compact):
        return float(compact.replace(",", "")), "thousands-separator"
    match = _SCI.match(cleaned)
    if match is not None and not re.match(r"\s*[-+*/^]", cleaned[match.end() :]):
        return float(match.group(1)) * 10.0 ** int(match.group(2)), "scientific"
    if (match := _POW10.match(compact)) is not None:
        return 10.0 ** int(match.group(1)), "power-of-ten"
    try:
        value = _safe_eval(ast.parse(_latex_to_python(cleaned.replace(",", "")), mode="eval"))
        if math.isfinite(value):
            return value, "expression"
    except (SyntaxError, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        pass
    lead = re.match(rf"^({_NUMBER})(?:\s|$)", cleaned.replace(",", ""))
    if lead is not None:
        return float(lead.group(1)), "leading-number"
    return None, "not-a-number"


def robust_extract(reply: str) -> tuple[str | None, str]:
    """The answer span: last \\boxed/\\fbox, else after "answer is", else the last number."""
    boxed = last_boxed(reply)
    if boxed is not None:
        return boxed, "boxed"
    matches = list(_ANSWER_IS.finditer(reply))
    if matches:
        tail = matches[-1].group(1).strip()
        sentence = re.split(r"(?<!\d)\.(?!\d)|\n", tail, maxsplit=1)[0].strip()
        if parse_number(sentence)[0] is not None:
            return sentence, "answer-is"
    numbers = [m.group(0) for m in _LAST_NUMBER.finditer(_strip_wrappers(reply))]
    if numbers:
        return numbers[-1], "last-number"
    return None, "no-answer"


def parse_gold(answer_number: str) -> float | None:
    """A gold ``answer_number`` as a float: unicode minus, thousands commas, fractions."""
    return parse_number(answer_number)[0]


def robust_compare(
    pred: float, gold: float, exponent: int | None, abs_tol: float = 0.0
) -> str | None:
    """Scale-aware comparison: the full magnitude (mantissa x 10^k) first, then the bare mantissa.

    Returns the match type ("plain", "full", "mantissa") or None when nothing matches.
    """
    candidates = (
        [("plain", gold)]
        if exponent is None
        else [
            ("full", gold * 10.0**exponent),
            ("mantissa", gold),
        ]
    )
    for name, value in candidates:
        if math.isclose(pred, value, rel_tol=REL_TOL, abs_tol=abs_tol):
            return name
    return None


def robust_score(reply: str, answer_number: str, unit: Unit, abs_tol: float = 0.0) -> Verdict:
    """Score a text reply with the robust rules; the rule names the extraction and parse steps."""
    span, where = robust_extract(reply)
    return _robust_verdict(span, where, answer_number, unit, abs_tol)


def _robust_verdict(
    span: str | None, where: str, answer_number: str, unit: Unit, abs_tol: float
) -> Verdict:
    gold = parse_gold(answer_number)
    value, how = parse_number(span)
    rule = f"{where}/{how}"
    if gold is None:
        return Verdict(False, value, f"{rule}; gold-unparsable", value is not None)
    if value is None:
        return Verdict(False, span, rule, False, {"gold": gold})
    match = robust_compare(value, gold, unit.exponent, abs_tol)
    return Verdict(match is not None, value, rule, True, {"gold": gold, "match": match})


_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_LANG_TAG = re.compile(r"^[ \t]*(?:python3?|py|wolfram|mathematica|wl)[ \t]*\r?\n", re.IGNORECASE)


def official_code(reply: str) -> str:
    """The official ``extract_lan`` code span: after the first ``` up to the next (tag included)."""
    after = reply[reply.find("```") + 3 :]
    return after[: after.find("```")]


def robust_code(reply: str) -> str | None:
    """The first fenced block with its language tag removed; None when the reply has no fence."""
    match = _FENCE.search(reply)
    if match is None:
        return None
    return _LANG_TAG.sub("", match.group(1), count=1)


def robust_tool_score(
    stdout: str | None, answer_number: str, unit: Unit, abs_tol: float = 0.0
) -> Verdict:
    """Score a program's output: the last line of stdout that holds a number."""
    if stdout is None:
        return _robust_verdict(None, "program-failed", answer_number, unit, abs_tol)
    for line in reversed(stdout.strip().splitlines()):
        numbers = [m.group(0) for m in _LAST_NUMBER.finditer(line)]
        if numbers:
            span = line if parse_number(line)[0] is not None else numbers[-1]
            return _robust_verdict(span, "stdout-last-number-line", answer_number, unit, abs_tol)
    return _robust_verdict(None, "stdout-no-number", answer_number, unit, abs_tol)
