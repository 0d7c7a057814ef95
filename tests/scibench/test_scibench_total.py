"""Every SciBench parser and scorer is total: any text gets a verdict, quickly, never an exception.

Property-based runs over random and adversarial text (tests/hostile_text.py), the exact value of
numbers far beyond a double's range, and a table of million-character worst cases, each costing
CPU time in proportion to its length. A verdict must also survive JSON (no inf or nan in what a
log or ``scievals grade`` writes).
"""

from __future__ import annotations

import json
import math

import pytest
from hostile_text import FUZZ, GIANT, hostile_text
from hypothesis import given
from hypothesis import strategies as st
from timing import assert_linear

from scievals.scibench.code_blocks import official_code, robust_code
from scievals.scibench.exam import parse_points
from scievals.scibench.faithful import faithful_score, faithful_tool_score
from scievals.scibench.robust import (
    last_boxed,
    parse_gold,
    parse_number,
    robust_extract,
    robust_score,
    robust_tool_score,
)
from scievals.scibench.units import Unit, official_unit
from scievals.scibench.verdict import Verdict

LATEX = [
    "\\boxed{", "\\boxed {", "\\fbox{", "oxed{", "{", "}", "\\frac", "\\dfrac", "\\sqrt", "\\times",
    "\\cdot", "\t", "imes", "*", "**", "^", "10^", "10^{", "10**", "e", "E", "e400", "1e", "-",
    "+", "\u2212", "\u00d7", "\u00b7", "\u2248", "=", "\\approx", "\\sim", ".", ",", "{,}", " ",
    "\n", "\\", "\\\\", "$", "\\text{", "\\mathrm{", "~", "\\,", "%", "\\%", "^\\circ", "\u00b0",
    "(", ")", "pi", "\\pi", "\u03c0", "\u221a", "nan", "inf", "NaN", "-Infinity", "0", "1", "2.5",
    "9", "answer is", "The answer is therefore ", "x", "```", "```python\n", "POINTS:", "1_000",
    "sqrt(", "exp(", "log", "\\left(", "\\right)", "2^{2^{2^{2}}}", "10**10**10",
]  # fmt: skip
# The official unit paths (spec 1.3), plus units that are themselves hostile.
UNITS = [
    "", " ", "$", "$10^{-19} \\mathrm{~J}$", "$10^6$ ", "$10^{42}$", "$10^{400}$ m",
    "$10^{-400} \\mathrm{~J}$", "10^{" + "9" * 5000 + "} J", "10^{-" + "0" * 5000 + "7} J",
]  # fmt: skip
GOLDS = ["5", " +65.49 ", "0", "-2", "\u22122", "89,034.79", "9/4", "1e400", "nan", "", "2.2"]

replies = hostile_text(LATEX)
units = st.one_of(st.sampled_from(UNITS), hostile_text(LATEX, max_pieces=4)).map(official_unit)
golds = st.one_of(st.sampled_from(GOLDS), hostile_text(LATEX, max_pieces=3))


def check_verdict(verdict: Verdict) -> None:
    """A well-formed verdict that JSON carries as it is (``allow_nan=False``: no inf, no nan)."""
    assert isinstance(verdict.correct, bool) and isinstance(verdict.extracted, bool)
    assert isinstance(verdict.rule, str) and verdict.rule
    assert verdict.parsed is None or isinstance(verdict.parsed, str | float)
    json.dumps([verdict.parsed, verdict.rule, verdict.details], allow_nan=False)


# ---- properties over hostile text ------------------------------------------------------------
@FUZZ
@given(reply=replies, gold=golds, unit=units)
def test_robust_score_is_total(reply: str, gold: str, unit: Unit) -> None:
    check_verdict(robust_score(reply, gold, unit))


@FUZZ
@given(stdout=st.one_of(st.none(), replies), gold=golds, unit=units)
def test_robust_tool_score_is_total(stdout: str | None, gold: str, unit: Unit) -> None:
    check_verdict(robust_tool_score(stdout, gold, unit))


@FUZZ
@given(reply=replies, gold=golds, unit=units)
def test_faithful_score_is_total(reply: str, gold: str, unit: Unit) -> None:
    verdict = faithful_score(reply, gold, unit)
    check_verdict(verdict)
    assert verdict.parsed is None or isinstance(verdict.parsed, str)


@FUZZ
@given(stdout=st.one_of(st.none(), replies), gold=golds, unit=units)
def test_faithful_tool_score_is_total(stdout: str | None, gold: str, unit: Unit) -> None:
    check_verdict(faithful_tool_score(stdout, gold, unit))


@FUZZ
@given(text=replies)
def test_number_and_span_readers_are_total(text: str) -> None:
    value, rule = parse_number(text)
    assert value is None or isinstance(value, float)
    assert isinstance(rule, str)
    gold = parse_gold(text)
    assert gold is None or math.isfinite(gold)
    span, where = robust_extract(text)
    assert span is None or isinstance(span, str)
    boxed = last_boxed(text)
    assert boxed is None or boxed in text


@FUZZ
@given(reply=replies)
def test_code_spans_are_total(reply: str) -> None:
    assert isinstance(official_code(reply), str)
    code = robust_code(reply)
    assert code is None or code in reply


@FUZZ
@given(reply=replies, possible=st.floats(0.5, 100))
def test_grader_points_are_total_and_clamped(reply: str, possible: float) -> None:
    points = parse_points(reply, possible)
    assert points is None or 0.0 <= points <= possible


# ---- numbers far beyond a double: read exactly as float() reads them, never a crash -----------
mantissas = st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False)
exponents = st.integers(-6000, 6000)


@FUZZ
@given(mantissa=mantissas, k=exponents)
def test_scientific_notation_reads_as_float_does(mantissa, k: int) -> None:
    """ "m \\times 10^{k}" is float("{m}e{k}") for any k: +-inf past a double's range, 0.0 below."""
    expected = float(f"{mantissa}e{k}")
    value, rule = parse_number(f"{mantissa} \\times 10^{{{k}}}")
    assert (value, rule) == (expected, "scientific")
    verdict = robust_score(f"\\boxed{{{mantissa} \\times 10^{{{k}}}}}", "5", official_unit(""))
    check_verdict(verdict)
    assert verdict.correct == (math.isfinite(expected) and math.isclose(expected, 5, rel_tol=0.05))
    assert verdict.extracted


@FUZZ
@given(k=exponents)
def test_faithful_rescaled_huge_exponent_is_wrong_not_a_crash(k: int) -> None:
    """The official cal_not catches the OverflowError of 10 ** 400.0: the answer is just wrong."""
    verdict = faithful_score(f"\\boxed{{2.0 \\times 10^{{{k}}}}}", "2.0", official_unit(UNITS[3]))
    check_verdict(verdict)
    assert verdict.correct == (k == -19)


# ---- the cases of the issue, and what each verdict says -----------------------------------------
DIGITS_5000 = "9" * 5000
ISSUE_CASES = [
    ("\\boxed{10^{400}}", "10^{400}", "boxed/power-of-ten; out-of-range"),
    ("\\boxed{2 \\times 10^{400}}", "2 \\times 10^{400}", "boxed/scientific; out-of-range"),
    (
        f"\\boxed{{10^{{{DIGITS_5000}}}}}",
        f"10^{{{DIGITS_5000}}}",
        "boxed/power-of-ten; out-of-range",
    ),
    ("\\boxed{1e400}", "1e400", "boxed/plain; out-of-range"),
    (f"\\boxed{{{DIGITS_5000}}}", DIGITS_5000, "boxed/plain; out-of-range"),
    ("\\boxed{10**10**10}", "10**10**10", "boxed/not-a-number"),
    ("\\boxed{nan}", "nan", "boxed/not-a-number"),
    ("\\boxed{-inf}", "-inf", "boxed/not-a-number"),
    ("\\boxed{10^{-400}}", 0.0, "boxed/power-of-ten"),  # below a double: 0.0, as float() reads it
    ("\\boxed{\u0663.\u0665}", 3.5, "boxed/plain"),  # Arabic-Indic digits: float() reads them
]


@pytest.mark.parametrize(("reply", "parsed", "rule"), ISSUE_CASES)
def test_issue_cases_are_wrong_answers(reply: str, parsed: str | float, rule: str) -> None:
    verdict = robust_score(reply, "5", official_unit(""))
    check_verdict(verdict)
    assert (verdict.correct, verdict.parsed, verdict.rule) == (False, parsed, rule)


def test_a_program_printing_a_huge_number_is_a_wrong_answer() -> None:
    for stdout in ("10^400\n", f"{10**400}\n", "result: 2 * 10**400\n"):
        verdict = robust_tool_score(stdout, "5", official_unit(""))
        check_verdict(verdict)
        assert not verdict.correct and verdict.extracted and "out-of-range" in verdict.rule


def test_huge_numbers_never_match_each_other() -> None:
    """inf == inf must not make 10^{500} equal a 10^{400} gold (nor any gold past a double)."""
    assert parse_gold("1e400") is None
    unit = official_unit("$10^{400}$ m")  # scale only: the mantissa is compared, and the full 1e400
    verdict = robust_score("\\boxed{10^{500}}", "1", unit)
    assert not verdict.correct


# ---- million-character worst cases, each read in linear time -----------------------------------
WORST_CASES = {  # each built at size n: GIANT, and GIANT / SIZE_RATIO to compare with
    "spaces-then-mismatch": lambda n: "1" + " " * n + "x",
    "times-ten-spaces": lambda n: ("1 \\times 10^{" + " " * 1000) * (n // 1000),
    "boxed-storm": lambda n: "\\boxed{" * (n // 7),
    "open-braces": lambda n: "{" * n,
    "close-braces": lambda n: "}" * n,
    "backslashes": lambda n: "\\" * n,
    "text-nesting": lambda n: "\\text{" * (n // 12) + "}" * (n // 12),
    "text-units": lambda n: "\\text{m}" * (n // 8),
    "digits": lambda n: "1" * n,
    "fracs": lambda n: "\\frac{1}{2}" * (n // 11),
    "degree-spaces": lambda n: "^" + " " * n + "z",
    "answer-is-spaces": lambda n: "answer" + " " * n,
    "parentheses": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "unary-minus": lambda n: "-" * n + "1",
    "fences": lambda n: "```" * (n // 3),
    "points": lambda n: "POINTS: " * (n // 8),
    "unicode-digits": lambda n: "\u0663" * n,
}


@pytest.mark.parametrize("name", list(WORST_CASES))
def test_worst_cases_in_linear_time(name: str) -> None:
    """Each parser on each million-character worst case costs at most about ten times what it
    costs on a tenth of it (CPU time: a busy machine slows both alike); quadratic costs 100x."""
    unit = official_unit("$10^{-19} \\mathrm{~J}$")
    calls = {
        "robust": lambda text: robust_score(text, "5", unit),
        "robust boxed": lambda text: robust_score(f"\\boxed{{{text}}}", "5", unit),
        "robust tool": lambda text: robust_tool_score(text, "5", unit),
        "faithful": lambda text: faithful_score(f"\\boxed{{{text}}}", "5", unit),
        "faithful tool": lambda text: faithful_tool_score(text, "5", unit),
        "code": lambda text: (official_code(text), robust_code(text)),
        "points": lambda text: parse_points(text, 10.0),
    }
    for label, call in calls.items():
        result = assert_linear(call, WORST_CASES[name], GIANT, f"{label} on {name}")
        if isinstance(result, Verdict):
            check_verdict(result)
