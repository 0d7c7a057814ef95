"""OpenCompass's SciBench protocol (spec scibench.md section 6): its extraction and exact-match
scoring, table-driven; its prompts laid out as its config builds them; totality of its parser."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from timing import assert_linear

from scievals.inputs import InputError
from scievals.scibench import opencompass
from scievals.scibench.config import SciBenchConfig

EXTRACT = [
    # (reply, extracted, rule)
    ("Therefore, the answer is \\boxed{50.70}.", "50.70", "boxed"),
    ("The answer is 3. Later: the answer is 4.", "3", "last number"),  # the first one counts
    ("So the answer is \\boxed{1.2 \\times 10^{-3}}.", "1.2 \\times 10^{-3", "boxed"),
    ("The answer is 1,234.5 J", "1234.5", "last number"),
    ("the answer is unknown ", "unknown", "whole text"),
    ("x = 5, then y = 7", "7", "last number"),
    ("no digits at all", "no digits at all", "whole text"),
    ("answer is \\boxed{1\n2}", "2", "last number"),  # "." stops at a newline: no boxed match
    ("The answer is -3.5 eV", "-3.5", "last number"),
    ("The answer is .5", ".5", "last number"),
    ("\\boxed{7} and \\boxed{8}", "7", "boxed"),  # no "answer is": the whole reply, first box
    ("The answer is \\boxed[2.5].", "2.5", "last number"),  # its own square-bracket wording
    ("The Answer Is 9", "9", "last number"),  # "answer is" is case-sensitive
]


@pytest.mark.parametrize(("reply", "extracted", "rule"), EXTRACT)
def test_extraction(reply, extracted, rule):
    assert opencompass.extract(reply) == (extracted, rule)


SCORE = [
    # (reply, gold, correct)
    ("the answer is \\boxed{50.7}", "50.7", True),
    ("the answer is \\boxed{50.70}", "50.7", False),  # exact string equality, no tolerance
    ("the answer is \\boxed{+65.49}", "65.49", False),
    ("the answer is \\boxed{0.4908}", " 0.4908 ", True),  # the gold is stripped
    ("the answer is \\boxed{ 0.4908}", "0.4908", False),  # the answer is not
    ("the answer is 50.69", "50.7", False),  # within 5%, still wrong
    ("", "0", False),
]


@pytest.mark.parametrize(("reply", "gold", "correct"), SCORE)
def test_exact_match(reply, gold, correct):
    verdict = opencompass.opencompass_score(reply, gold)
    assert verdict.correct is correct
    assert verdict.rule.startswith("opencompass: ")


@given(st.text())
def test_extraction_is_total(reply):
    answer, rule = opencompass.extract(reply)
    assert isinstance(answer, str) and rule in ("boxed", "last number", "whole text")
    assert opencompass.opencompass_score(reply, "1.0").extracted == (rule != "whole text")


def test_zero_shot_prompts_are_one_user_turn_without_the_unit():
    [zs] = opencompass.messages("opencompass_zs", "  What is the energy?\n", "quan")
    [cot] = opencompass.messages("opencompass_zs_cot", "What is the energy?", "quan")
    assert zs.role == cot.role == "user"
    assert zs.content.startswith("Please provide a clear and step-by-step solution")
    assert "'Therefore, the answer is \\boxed[ANSWER].'\n\nProblem: What is the energy?\n" in (
        zs.content
    )
    assert zs.content.endswith("\nAnswer:")
    assert cot.content.endswith("\nAnswer:Let\u2019s think step by step.")
    assert "unit of the answer" not in zs.content


@pytest.mark.parametrize(
    ("variant", "cot"), [("opencompass_fs", False), ("opencompass_fs_cot", True)]
)
def test_few_shot_prompts_are_its_files_then_problem_6(variant, cot):
    """The wheel's files (sha256-checked): 5 examples ("Promblem", its typo), then the test."""
    [message] = opencompass.messages(variant, "How far?", "quan")
    hint = opencompass.few_shot_hint("quan", cot)
    assert hint.count("Promblem ") == 5 and "Promblem 1:" in hint
    tail = "\n\nProblem 6: How far?\n" + ("Explanation for Problem 6: " if cot else "Answer: ")
    assert message.content == hint + tail


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"setting": "opencompass_fs", "subset": "solutions"}, "text problems only"),
        ({"setting": "python", "scorer": "opencompass"}, "reads a text reply"),
        ({"setting": "python", "scorer": "all"}, "reads a text reply"),
    ],
)
def test_refused_where_it_has_no_meaning(params, message):
    with pytest.raises(InputError, match=message):
        SciBenchConfig.from_params(**params)


OPENCOMPASS_BOXED = re.compile(r"\\boxed\{(.+?)\}")  # its postprocessor's pattern, to compare


PIECES = st.sampled_from(["\\boxed{", "}", "{", "\n", "x", "\\", "b"])


@given(st.lists(PIECES, max_size=40).map("".join) | st.text(max_size=60))
def test_first_boxed_is_its_regex(text):
    """The linear scan captures what OpenCompass's non-greedy regex captures, on any text."""
    found = OPENCOMPASS_BOXED.search(text)
    assert opencompass.first_boxed(text) == (found.group(1) if found else None)


UNCLOSED = {
    "open": lambda n: "\\boxed{" * n,
    "open-then-close": lambda n: "\\boxed{" * n + "}",
    "open-lines-then-close": lambda n: "\\boxed{\n" * n + "}",
}


@pytest.mark.parametrize("name", list(UNCLOSED))
def test_many_unclosed_boxes_are_linear(name):
    """Its regex is quadratic here (minutes on 700,000 characters); the scan is not."""
    make = UNCLOSED[name]
    assert_linear(lambda text: opencompass.extract("the answer is " + text), make, 100_000, name)
