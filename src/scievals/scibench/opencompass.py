"""OpenCompass's SciBench protocol (``configs/datasets/scibench/scibench_gen_2b21f3.py`` and
``datasets/scibench.py``, spec scibench.md section 6): its four prompts, its extraction and its
exact-match scoring, so that a run of the ``opencompass`` presets gives OpenCompass's number.

What it does differently from the official harness, and is reproduced here: the question is the
stripped problem text alone (the unit is dropped), in one user turn with no system message; the
zero-shot instruction asks for ``\\boxed[ANSWER]`` in square brackets; the few-shot prompts are
its own files (``lib_prompt/<book>_prompt.txt`` and ``_sol.txt``, "Promblem" typo included), read
from the ``opencompass`` wheel on the package index (verified by sha256, never installed); one
generation, no retry; the answer is the text after the first "answer is", then the first
``\\boxed{...}`` matched non-greedily (nested braces are cut), else the last number; and it is
right only when it equals the stripped gold as a string ("50.70" is not "50.7").
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal, get_args

from scievals.artifacts import pip_wheel, wheel_member
from scievals.scibench.prompts import Message
from scievals.scibench.verdict import Verdict

Variant = Literal["opencompass_zs", "opencompass_zs_cot", "opencompass_fs", "opencompass_fs_cot"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)

WHEEL = "opencompass==0.5.4"
WHEEL_SHA256 = "362aafb77b264d9eb51e4a8f6730d22c98ea93a8d73f5f1be56928ed3141474a"
LIB_PROMPT = "opencompass/configs/datasets/scibench/lib_prompt/{name}"
# sha256 of each few-shot file: ``<book>_prompt.txt`` (fs) and ``<book>_sol.txt`` (fs-cot).
LIB_PROMPT_SHA256 = {
    "atkins_prompt.txt": "e2caf15105d909a57babbd337375de9fc83d6f14440d25c08ec2c88a0de21061",
    "atkins_sol.txt": "7f7d0ea3aa064c6da31612af13e480ab3c260f98cea42e77f5ca64258db8b357",
    "calculus_prompt.txt": "2d12e5a4284e946e0953391916880c3edaebb0587c0d6959c2df4ac092521478",
    "calculus_sol.txt": "e1dd94b2f02f07a335dcd4d56e75cf7fcb48cb8fa07e1958d87473efb84f3233",
    "chemmc_prompt.txt": "8dcceb95926fb17f9727e3b9aeee87dd33573cd005df6af1fb14b63ca8abd66c",
    "chemmc_sol.txt": "564ed30c273d611e3e59e25418b59871dbeec5479a80cb79a3650ce47cbc6033",
    "class_prompt.txt": "a72709d0c9a3b801775db16c2d13c1524798ec5b9b78d68b30b4ff77de44673e",
    "class_sol.txt": "2c275984916173888fe508689aa5fce05f4c6f49b01a06e14beae7e9221dad8d",
    "diff_prompt.txt": "62da1ce025eba6b2fedd981a3ba1bf6af9286df643b31371d047ee4d45b8dc20",
    "diff_sol.txt": "6551d64f9ed708eb18b9320ca708e0c6c44bc6ef1474732fb949f8058cce8cf6",
    "fund_prompt.txt": "1cc2070d7a562077d527477b77210651c1fdbc919dc2131c02c8010a56a35d89",
    "fund_sol.txt": "8de5bf90222f1cca5e2637f189697c83459aa2af2a89f9a60b1d3d34404907f3",
    "matter_prompt.txt": "9c69c5b54ab111ffa621077b4fdd7c384acb9283ab4d0b1635d369cbd12c8271",
    "matter_sol.txt": "3831b1a3b8c6aec6127e9f7e053320c6e38c50b529f702d5a5539a8c41050a13",
    "quan_prompt.txt": "d17e2bf0805582c06bf703949c89202f8145802abc169b3f5123b038fd3c09bb",
    "quan_sol.txt": "da8965a6c059b053dc7f349d51e50a724b2226b0b8a7b37e75f88179591af61f",
    "stat_prompt.txt": "f30813bfc098964310526f2153afd388d4d0065ec05fda06b7c1268a3f5c149c",
    "stat_sol.txt": "9e076be2c1e54f6381d0134b11f19c21b3144d2e26bf993e8a97cf17a944105e",
    "thermo_prompt.txt": "22d0a9ae4792d1d8654a9ed5865c386967649b5b0a3a46a3768c63b0a444aca6",
    "thermo_sol.txt": "7372a19f6f638f90205578cf9907dab7f55aba4cf56bf682460c8027ce06b0f9",
}

INSTRUCTION = (
    "Please provide a clear and step-by-step solution for a scientific problem in the categories "
    "of Chemistry, Physics, or Mathematics. The problem will specify the unit of measurement, "
    "which should not be included in the answer. Express the final answer as a decimal number "
    "with three digits after the decimal point. Conclude the answer by stating 'Therefore, the "
    "answer is \\boxed[ANSWER].'\n\n"
)
COT_CUE = "Let\u2019s think step by step."  # a typographic apostrophe, as in its config
BOXED = "\\boxed{"
DIGIT_COMMA = re.compile(r"(\d),(\d)")
NUMBER = re.compile(r"-?\d*\.?\d+|\d+")


def question(problem_text: str) -> str:
    """The question OpenCompass asks: the problem text, stripped, and nothing of the unit."""
    return problem_text.strip()


@cache
def few_shot_hint(book: str, cot: bool) -> str:
    """The book's few-shot file from the pinned wheel, as its config reads it (text mode)."""
    name = f"{book}_{'sol' if cot else 'prompt'}.txt"
    wheel = pip_wheel(WHEEL, WHEEL_SHA256)
    data = wheel_member(wheel, LIB_PROMPT.format(name=name), LIB_PROMPT_SHA256[name])
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def messages(variant: Variant, problem_text: str, book: str) -> list[Message]:
    """One user turn, no system message, as each of the four variants lays it out."""
    q = question(problem_text)
    if variant == "opencompass_zs":
        text = INSTRUCTION + f"Problem: {q}\nAnswer:"
    elif variant == "opencompass_zs_cot":
        text = INSTRUCTION + f"Problem: {q}\nAnswer:{COT_CUE}"
    elif variant == "opencompass_fs":
        text = few_shot_hint(book, cot=False) + f"\n\nProblem 6: {q}\nAnswer: "
    else:
        text = few_shot_hint(book, cot=True) + f"\n\nProblem 6: {q}\nExplanation for Problem 6: "
    return [Message("user", text)]


def first_boxed(text: str) -> str | None:
    r"""What OpenCompass's ``re.search(r"\boxed\{(.+?)\}")`` captures, in linear time (the
    regex is quadratic on a reply of many unclosed boxes): from the first box where it can, one
    character or more, no newline, up to the nearest "}" after the first."""
    close = newline = -1  # the nearest "}" and newline at or after the last place looked
    start = text.find(BOXED)
    while start != -1:
        j = start + len(BOXED)
        if close < j + 1:
            close = text.find("}", j + 1)
            if close == -1:
                return None  # no later box can close either
        if newline < j:
            newline = text.find("\n", j) % (len(text) + 1)  # none: the end of the text
        if newline > close:
            return text[j:close]
        start = text.find(BOXED, start + 1)
    return None


def extract(reply: str) -> tuple[str, str]:
    """(answer, rule): after the first "answer is" (up to the next one), the first boxed
    content, else the last number once digit-grouping commas are gone, else that text."""
    parts = reply.split("answer is")
    text = parts[1].strip() if len(parts) > 1 else reply
    boxed = first_boxed(text)
    if boxed is not None:
        return boxed, "boxed"
    numbers = NUMBER.findall(DIGIT_COMMA.sub(r"\1\2", text))
    if numbers:
        return numbers[-1], "last number"
    return text, "whole text"


def opencompass_score(reply: str, answer_number: str) -> Verdict:
    """OpenCompass's verdict: the extracted string equals the stripped gold, character for
    character (its ``AccEvaluator``)."""
    answer, rule = extract(reply)
    gold = answer_number.strip()
    return Verdict(
        correct=answer == gold,
        parsed=answer,
        rule=f"opencompass: {rule}, exact match",
        extracted=rule != "whole text",
        details={"gold": gold},
    )
