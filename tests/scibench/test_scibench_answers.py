"""Tables for the answer rules: every official quirk (faithful) and every format (robust).

Rows cite the spec (../shared/specs/scibench.md) section they come from.
"""

from __future__ import annotations

import math

import pytest

from scievals.scibench.code_blocks import official_code, robust_code
from scievals.scibench.faithful import faithful_score, faithful_tool_score, official_extract
from scievals.scibench.robust import (
    parse_gold,
    parse_number,
    robust_extract,
    robust_score,
    robust_tool_score,
)
from scievals.scibench.units import official_unit

J = "$10^{-19} \\mathrm{~J}$"  # scale followed by a real unit: rescaled (spec 1.3 path 1)
BLANK = "$10^6$ "  # scale then only whitespace: rescaled, blank unit (path 2, thermo[2])
ONLY = "$10^{42}$"  # scale only: raw unit shown, mantissa compared (path 3, fund[8])


# ---- units: the three official paths (spec 1.3) -------------------------------------------
@pytest.mark.parametrize(
    ("raw", "shown", "rescaled", "exponent"),
    [
        (J, "\\mathrm{~J}$", True, -19),  # dangling "$" left in the prompt
        ("$\\mathrm{10^7} \\mathrm{~km}$", "\\mathrm{~km}$", True, 7),
        (" $10^{-31} \\mathrm{~m}$", "\\mathrm{~m}$", True, -31),
        (BLANK, " ", True, 6),  # " " is truthy: rescaled, blank unit shown
        ("$10^{21}$ ", " ", True, 21),
        (ONLY, ONLY, False, 42),  # "" is falsy: raw unit shown, mantissa compared
        ("$10^{28} $", "$10^{28} $", False, 28),
        (" $10^{-4}$", " $10^{-4}$", False, -4),
        ("$\\mathrm{~kJ} \\mathrm{~mol}^{-1}$", "$\\mathrm{~kJ} \\mathrm{~mol}^{-1}$", False, None),
        ("  ", "  ", False, None),
        ("", "", False, None),
        ("$", "$", False, None),  # dollars
    ],
)
def test_official_unit_paths(raw, shown, rescaled, exponent):
    unit = official_unit(raw)
    assert (unit.shown, unit.rescaled, unit.exponent) == (shown, rescaled, exponent)


# ---- faithful extraction (spec 3.1) -------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The answer is therefore \\boxed{3.142}.", "3.142"),
        ("\\boxed{1} then \\boxed{2}", "2"),  # last box wins
        ("\\boxed{x = 5}", "5"),  # after "="
        ("\\boxed{a = b =  7}", "7"),  # after the last "=", left-stripped
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),  # nested braces kept whole
        ("\\boxed {3}", None),  # space before the brace: not "oxed{"
        ("\\fbox{3}", None),  # the \fbox fallback never survives remove_boxed
        ("\\boxed{3", None),  # unbalanced
        ("The answer is 3.", None),  # no box, no fallback
        ("\\boxed{}", ""),
        ("foxed{4}", "4"),  # it searches for "oxed", not "\boxed"
    ],
)
def test_official_extract(reply, expected):
    assert official_extract(reply) == expected


# ---- faithful scoring (spec 3.2, 3.3) -----------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "gold", "unit", "correct", "rule"),
    [
        ("\\boxed{50.7}", "50.7", " atm", True, "whole"),
        ("\\boxed{50.7 \\text{atm}}", "50.7", " atm", True, "first-token"),
        ("\\boxed{\\text{about } 50.7}", "50.7", "", False, "not-a-number"),
        ("\\boxed{1,234.5}", "1234.5", "", True, "whole"),  # commas removed from the answer
        ("\\boxed{95}", "100", "", True, "whole"),  # |p-g| <= 0.05 max(|p|,|g|)
        ("\\boxed{105.26}", "100", "", True, "whole"),  # symmetric: not |p-g|/|g|
        ("\\boxed{105.3}", "100", "", False, "whole"),
        ("\\boxed{94.9}", "100", "", False, "whole"),
        ("\\boxed{0}", "0", "", True, "whole"),  # zero gold needs an exact zero
        ("\\boxed{0.0001}", "0", "", False, "whole"),
        ("\\boxed{+65.49}", " +65.49 ", "", True, "whole"),  # "+" and spaces in the gold
        ("\\boxed{1e-3}", "0.001", "", True, "whole"),  # float() syntax
        ("\\boxed{1_000}", "1000", "", True, "whole"),
        ("\\boxed{nan}", "1", "", False, "whole"),
        ("\\boxed{\u22122}", "-2", "", False, "not-a-number"),  # U+2212 rejected
        ("\\boxed{89034.79}", "89,034.79", "", False, "gold-unparsable"),  # diff[18]
        ("\\boxed{-2}", "\u22122", "", False, "gold-unparsable"),  # diff[26]
        ("no box", "3", "", False, "no-boxed"),
        # unrescaled item: "a \times 10^b" reduces to its first token (spec 3.2)
        ("\\boxed{1.31 \\times 10^{-3}}", "0.00131", " $\\mathrm{K}^{-1}$", False, "first-token"),
        ("\\boxed{0.00131}", "0.00131", " $\\mathrm{K}^{-1}$", True, "whole"),
        # rescaled item (path 1): the x10^ parsing, gold at full magnitude
        ("\\boxed{3.5 \\times 10^{-19}}", "3.5", J, True, "whole"),
        ("\\boxed{3.5*10^{-19}}", "3.5", J, True, "whole"),
        ("\\boxed{3.5 \\times 10^-19}", "3.5", J, True, "whole"),
        ("\\boxed{3.5e-19}", "3.5", J, True, "whole"),  # no separator: kept as is
        ("\\boxed{0.00000000000000000035}", "3.5", J, True, "whole"),
        ("\\boxed{3.5 \\cdot 10^{-19}}", "3.5", J, False, "first-token"),  # reads 3.5
        ("\\boxed{3.5}", "3.5", J, False, "whole"),  # the mantissa alone is 1e19 off
        ("\\boxed{3.5 \\times 10}", "3.5", J, False, "scale-parse-failed"),
        ("\\boxed{\\approx 3.5 \\times 10^{-19}}", "3.5", J, False, "scale-parse-failed"),
        ("no box", "3.5", J, False, "no-boxed"),
        # rescaled item with a blank unit (path 2)
        ("\\boxed{1.27 \\times 10^{6}}", "1.27", BLANK, True, "whole"),
        ("\\boxed{1270000}", "1.27", BLANK, True, "whole"),
        ("\\boxed{1.27}", "1.27", BLANK, False, "whole"),
        # scale-only unit (path 3): the mantissa is compared, no x10^ parsing
        ("\\boxed{4.16}", "4.16", ONLY, True, "whole"),
        ("\\boxed{4.16 \\times 10^{42}}", "4.16", ONLY, True, "first-token"),
        ("\\boxed{4.16e42}", "4.16", ONLY, False, "whole"),
    ],
)
def test_faithful_score(reply, gold, unit, correct, rule):
    verdict = faithful_score(reply, gold, official_unit(unit))
    assert (verdict.correct, verdict.rule) == (correct, rule)


def test_faithful_rescaled_answer_is_str_of_product():
    verdict = faithful_score("\\boxed{2.2 \\times 10^{-31}}", "2.2", official_unit(" $10^{-31} m$"))
    assert verdict.parsed == str(2.2 * 10**-31.0)
    assert verdict.details["gold"] == str(2.2 * 10**-31.0)


def test_faithful_second_separator_is_an_official_crash():
    verdict = faithful_score("\\boxed{2 \\times 3 \\times 10^{5}}", "6", official_unit(J))
    assert not verdict.correct
    assert verdict.rule.startswith("official-crash")


def test_faithful_tab_imes_is_the_first_separator_tested():
    # Python's "\times" is TAB + "imes": a literal tab-imes splits before the real "\times".
    verdict = faithful_score("\\boxed{3.5\times 10^{-19}}", "3.5", official_unit(J))
    assert verdict.correct


# ---- faithful tool mode (spec 3.4) --------------------------------------------------------
@pytest.mark.parametrize(
    ("stdout", "gold", "unit", "correct", "rule"),
    [
        ("0.28\n", "0.28", "", True, "whole"),
        ("The result is 0.28", "0.28", "", False, "not-a-number"),
        ("0.28 Pa", "0.28", "", True, "first-token"),
        ("1.0\n0.28", "0.28", "", False, "first-token"),  # whole stdout, not the last line
        (None, "0.28", "", False, "program-failed"),
        ("3.5e-19", "3.5", J, True, "whole"),  # gold rescaled
        ("3.5", "3.5", J, False, "whole"),  # output not rescaled
        ("3.5 \\times 10^{-19}", "3.5", J, False, "first-token"),  # no x10^ parsing in tool mode
    ],
)
def test_faithful_tool_score(stdout, gold, unit, correct, rule):
    verdict = faithful_tool_score(stdout, gold, official_unit(unit))
    assert (verdict.correct, verdict.rule) == (correct, rule)


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("text ```\nprint(1)\n``` more", "\nprint(1)\n"),
        ("```python\nprint(1)\n```", "python\nprint(1)\n"),  # tag kept: NameError officially
        ("```a``` ```b```", "a"),  # the first fence
        ("no fence here", " fence her"),  # find() == -1 slicing, as the official code does
    ],
)
def test_official_code_span(reply, code):
    assert official_code(reply) == code


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("```python\nprint(1)\n```", "print(1)\n"),
        ("```Python3\nprint(1)\n```", "print(1)\n"),
        ("```\nprint(1)\n```", "\nprint(1)\n"),
        ("no fence", None),
    ],
)
def test_robust_code_span(reply, code):
    assert robust_code(reply) == code


# ---- robust number parsing (spec 7, better mode 2) ---------------------------------------
@pytest.mark.parametrize(
    ("text", "value", "rule"),
    [
        ("3.142", 3.142, "plain"),
        ("+65.49", 65.49, "plain"),
        ("\u22121.642876", -1.642876, "plain"),  # unicode minus
        ("89,034.79", 89034.79, "thousands-separator"),
        ("1{,}234", 1234.0, "thousands-separator"),
        ("1\\,234.5", 1234.5, "plain"),
        ("1.2e-3", 1.2e-3, "plain"),
        ("1.2 \\times 10^{-3}", 1.2e-3, "scientific"),
        ("1.2\\times10^{-3}", 1.2e-3, "scientific"),
        ("1.2\\cdot 10^{-3}", 1.2e-3, "scientific"),
        ("1.2 \u00d7 10^{-3}", 1.2e-3, "scientific"),
        ("1.2*10**-3", 1.2e-3, "scientific"),
        ("1.2 x 10^-3", 1.2e-3, "scientific"),
        ("2.2 \\times 10^{-31} \\mathrm{~m}", 2.2e-31, "scientific"),
        ("2 \\times 10^{-3}\\ \\text{m}^2", 2e-3, "scientific"),
        ("10^{5}", 1e5, "power-of-ten"),
        ("\\frac{9}{4}", 2.25, "expression"),
        ("\\dfrac{-2}{3}", -2 / 3, "expression"),
        ("-2/3", -2 / 3, "expression"),
        ("32/3", 32 / 3, "expression"),
        ("\\frac{\\sqrt{2}}{\\pi}", math.sqrt(2) / math.pi, "expression"),
        ("2\\pi", 2 * math.pi, "expression"),
        ("\u221a2", math.sqrt(2), "expression"),
        ("45\\%", 45.0, "plain"),
        ("30^\\circ", 30.0, "plain"),
        ("30\u00b0", 30.0, "plain"),
        ("50.7 \\text{atm}", 50.7, "plain"),
        ("50.7 \\mathrm{~kJ} \\mathrm{~mol}^{-1}", 50.7, "plain"),  # unit and its power dropped
        ("2.5 \\mathrm{~m}^2", 2.5, "plain"),
        ("50.7 atm", 50.7, "leading-number"),
        ("$-0.28$", -0.28, "plain"),
        ("x = 3.5", 3.5, "plain"),
        ("E \\approx 2.5", 2.5, "plain"),
        ("E \u2248 2.5", 2.5, "plain"),
        ("\\text{ 4.2 }", 4.2, "plain"),
        ("\\left( 4.2 \\right)", 4.2, "expression"),
        ("seven", None, "not-a-number"),
        ("", None, "empty"),
        (None, None, "no-answer"),
        ("__import__('os')", None, "not-a-number"),  # never evaluated
    ],
)
def test_parse_number(text, value, rule):
    parsed, how = parse_number(text)
    assert how == rule
    if value is None:
        assert parsed is None
    else:
        assert parsed == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    ("reply", "span", "where"),
    [
        ("so \\boxed{3.1} and \\boxed{4.2}", "4.2", "boxed"),
        ("\\boxed {4.2}", "4.2", "boxed"),  # space before the brace
        ("\\fbox{4.2}", "4.2", "boxed"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", "boxed"),
        ("Thus the answer is 4.2 J. Done.", "4.2 J", "answer-is"),
        ("The answer is therefore: 1.5 \\times 10^{3} m\n", "1.5 \\times 10^{3} m", "answer-is"),
        ("We get 3 and then 2.2 \\times 10^{-31}", "2.2 \\times 10^{-31}", "last-number"),
        ("no numbers", None, "no-answer"),
    ],
)
def test_robust_extract(reply, span, where):
    assert robust_extract(reply) == (span, where)


@pytest.mark.parametrize(
    ("reply", "gold", "unit", "correct", "match"),
    [
        # LaTeX scientific notation on every item, not only rescaled ones
        ("\\boxed{1.31 \\times 10^{-3}}", "0.00131", " $\\mathrm{K}^{-1}$", True, "plain"),
        ("\\boxed{3.5 \\cdot 10^{-19}}", "3.5", J, True, "full"),
        ("\\boxed{3.5}", "3.5", J, True, "mantissa"),  # scale-aware: the mantissa also counts
        ("\\boxed{4.16e42}", "4.16", ONLY, True, "full"),
        ("\\boxed{4.16}", "4.16", ONLY, True, "mantissa"),
        ("\\boxed{1.27}", "1.27", BLANK, True, "mantissa"),
        ("\\boxed{89034.79}", "89,034.79", "", True, "plain"),  # gold normalised
        ("\\boxed{-2}", "\u22122", "", True, "plain"),
        ("\\boxed{\\frac{9}{4}}", "9/4", "", True, "plain"),  # fraction gold (multimodal)
        ("\\boxed{105.26}", "100", "", True, "plain"),  # same symmetric 5%
        ("\\boxed{105.3}", "100", "", False, None),
        ("\\boxed{0.0}", "0", "", True, "plain"),
    ],
)
def test_robust_score(reply, gold, unit, correct, match):
    verdict = robust_score(reply, gold, official_unit(unit))
    assert verdict.correct == correct
    assert verdict.details.get("match") == match


def test_robust_records_rule_and_unparsed():
    verdict = robust_score("I cannot say.", "3", official_unit(""))
    assert (verdict.correct, verdict.extracted) == (False, False)
    assert verdict.rule == "no-answer/no-answer"
    verdict = robust_score("\\boxed{3}", "", official_unit(""))
    assert verdict.rule.endswith("gold-unparsable")


def test_robust_zero_gold_abs_tol_option():
    unit = official_unit("")
    assert not robust_score("\\boxed{1e-9}", "0", unit).correct
    assert robust_score("\\boxed{1e-9}", "0", unit, abs_tol=1e-6).correct


@pytest.mark.parametrize(
    ("stdout", "gold", "correct"),
    [
        ("step 1\n0.28\n", "0.28", True),
        ("0.28\nDone", "0.28", True),  # last line holding a number
        ("result: 0.28 Pa\n", "0.28", True),
        ("1.27e6", "1.27", True),  # against the scale of BLANK below
        (None, "0.28", False),
        ("", "0.28", False),
    ],
)
def test_robust_tool_score(stdout, gold, correct):
    unit = official_unit(BLANK if gold == "1.27" else "")
    assert robust_tool_score(stdout, gold, unit).correct == correct


@pytest.mark.parametrize(
    ("gold", "value"),
    [(" 3.5 ", 3.5), ("+5", 5.0), ("\u22122", -2.0), ("102,965.21", 102965.21), ("3/4", 0.75)],
)
def test_parse_gold(gold, value):
    assert parse_gold(gold) == pytest.approx(value)
