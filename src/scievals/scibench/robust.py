"""Robust SciBench grading: careful extraction, number parsing and scale-aware comparison.

What a careful grader would do (spec section 7), as pure functions; every verdict names the rule
that read the answer, so the robust and faithful scores can be compared item by item.
"""

from __future__ import annotations

import ast
import math
import operator
import re

from scievals.scibench.units import Unit
from scievals.scibench.verdict import REL_TOL, Verdict

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
