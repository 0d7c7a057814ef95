"""Message layouts of every setting against spec section 2, and the data counts of section 8."""

from __future__ import annotations

import pytest

from scievals.scibench import prompts
from scievals.scibench.dataset import BOOKS, Record, Source, detect_version

from .scibench_helpers import DATA, needs_data

pytestmark = needs_data


def _rec(text: str, unit: str, answer: str = "1.5", solution: str | None = None) -> Record:
    return Record("atkins", 0, "sol", text, answer, unit, solution=solution)


def test_system_prompts_verbatim():
    assert prompts.SYS_CAL_BOX2.startswith("\nPlease provide a clear and step-by-step solution")
    assert prompts.SYS_CAL_BOX2.endswith(
        'Conclude the answer by stating "The answer is therefore \\boxed{[ANSWER]}."\n'
    )
    assert "three digits after the decimal point" in prompts.SYS_CAL_BOX2
    assert prompts.SYS_TOOL_PYTHON.endswith(
        "translate the solution steps into Python code and encase the Python code within triple "
        "backticks for clarity.\n"
    )
    assert "Wolfram Language code within triple backticks" in prompts.SYS_TOOL_WOLFRAM
    assert prompts.SYS_ANA.count("\n") == 13 and "7. Scientific Literacy:  This" in prompts.SYS_ANA


@pytest.mark.parametrize(
    ("unit", "line"),
    [
        ("$10^{-19} \\mathrm{~J}$", "P. The unit of the answer is \\mathrm{~J}$."),
        ("$10^6$ ", "P. The unit of the answer is  ."),
        ("$10^{42}$", "P. The unit of the answer is $10^{42}$."),
        (" ", "P. The unit of the answer is  ."),
        ("", "P. The unit of the answer is ."),
    ],
)
def test_test_and_example_unit_sentences(unit, line):
    record = _rec("P.", unit)
    assert prompts.test_text(record) == line
    assert prompts.example_text(record) == f"P. The unit of the answer is {unit}."


def test_zero_layouts():
    nosys = prompts.zero_messages("T", system="")
    assert [(m.role, m.content) for m in nosys] == [("user", "Q: T\nA: The answer is")]
    zero = prompts.zero_messages("T")
    assert [m.role for m in zero] == ["system", "user"]
    assert zero[0].content == prompts.SYS_CAL_BOX2


def test_zero_cot_two_stages_concatenate_without_spaces():
    stage1 = prompts.zero_cot_stage1("T")
    assert stage1[-1].content == "Q: T\nA: Let's think step by step."
    stage2 = prompts.zero_cot_stage2("T", "so 4.")
    assert [m.role for m in stage2] == ["system", "user"]
    assert stage2[-1].content == "Q: T\nA: Let's think step by step.so 4.Therefore, the answer is"


def test_few_and_few_cot_layouts():
    examples = [_rec(f"E{k}.", f"$10^{k}$ m", str(k), f"S{k}") for k in (1, 2)]
    few = prompts.few_messages("T", examples, cot=False)
    assert [m.role for m in few] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert few[1].content == "Problem 1.   E1. The unit of the answer is $10^1$ m.\n"
    assert few[2].content == "The answer is \\boxed{1} $10^1$ m"  # raw unit, 10^k kept
    assert few[-1].content == "Problem 3.   T\n"
    cot = prompts.few_messages("T", examples, cot=True)
    assert cot[4].content == "Explanation for Problem 2:   S2\nThe answer is \\boxed{2} $10^2$ m"


def test_tool_layout_numbers_the_test_after_five_loaded():
    examples = [_rec(f"E{k}.", " m", str(k), f"S{k}") for k in (1, 2, 3, 4)]
    msgs = prompts.tool_messages("T", examples, ["c1", "c2", "c3", "c4"], "python")
    assert msgs[0].content == prompts.SYS_TOOL_PYTHON
    assert msgs[2].content == (
        "Explanation for Problem 1:   S1\npython language for Problem 1: ```c1``` \n"
        " The answer is \\boxed{1}  m"
    )
    assert msgs[-1].content == "Problem 6.   T\n"
    assert len(msgs) == 1 + 2 * 4 + 1
    assert prompts.tool_shots("thermo") == 3 and prompts.tool_shots("atkins") == 4


def test_error_analysis_turn_cuts_tool_replies_after_first_block():
    plain = prompts.error_analysis_messages("Q.", "Sol", "Mine")
    assert plain[0].content == prompts.SYS_ANA
    assert (
        plain[1].content
        == "The question is Q.\nThe correct solution is Sol\nThe model solution is Mine"
    )
    tool = prompts.error_analysis_messages("Q.", "Sol", "a ```x``` b ```y```", "python", "3")
    assert tool[1].content.endswith(
        "The model solution is a ```x```\nThe translated program generates the answer as 3, "
        "which is treated as model's output answer."
    )


# ---- data (spec 1.2, 1.5, 8) ----------------------------------------------------------------
COUNTS = {
    "main": {"fund": 71, "thermo": 66, "class": 56, "quan": 33, "chemmc": 38, "atkins": 105,
             "matter": 47, "calculus": 42, "stat": 72, "diff": 50},
    "old": {"fund": 73, "thermo": 67, "class": 47, "quan": 34, "chemmc": 39, "atkins": 107,
            "matter": 49, "calculus": 42, "stat": 75, "diff": 50},
}  # fmt: skip


@pytest.mark.parametrize("version", ["main", "old"])
def test_book_counts(version):
    source = Source(version, DATA)
    assert {b: len(source.book(b)) for b in BOOKS} == COUNTS[version]
    assert detect_version(source.root) == version


def test_solution_pool_is_disjoint_and_counted():
    source = Source("main", DATA)
    pool = [r for b in BOOKS for r in source.book(b, pool="sol")]
    tests = {r.problem_text for b in BOOKS for r in source.book(b)}
    assert len(pool) == 112 and all(r.solution for r in pool)
    assert not tests & {r.problem_text for r in pool}


def test_multimodal_counts():
    records = Source("main", DATA).multimodal()
    assert len(records) == 177
    assert sum(r.pool == "img_sol" for r in records) == 26
    assert all(r.image is not None and r.image.exists() for r in records)


def test_version_mismatch_and_missing_copy_are_clear(tmp_path):
    with pytest.raises(ValueError, match="holds the 'main' SciBench data"):
        Source("old", DATA / "main")
    with pytest.raises(FileNotFoundError, match="--data-dir"):
        Source("main", tmp_path)


def test_unreachable_network_says_how_to_point_at_a_copy(monkeypatch, tmp_path):
    from scievals.artifacts import ArtifactError
    from scievals.scibench import dataset

    def offline(url, dest, sha256=None, timeout=30.0):
        raise ArtifactError(f"cannot download {url}: offline")

    monkeypatch.setattr(dataset, "download", offline)
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path))
    monkeypatch.delenv("SCIEVALS_SCIBENCH_DIR", raising=False)
    with pytest.raises(ArtifactError, match="SCIEVALS_SCIBENCH_DIR") as info:
        Source("main").book("atkins")
    assert "Hugging Face" in str(info.value)


def test_hugging_face_rows_drop_the_solution_pool(monkeypatch, tmp_path):
    import json

    from scievals.artifacts import ArtifactError
    from scievals.scibench import dataset

    rows = [
        {
            "source": "atkins",
            "problem_text": "t0",
            "answer_number": "1",
            "unit": "",
            "solution": "",
        },
        {
            "source": "atkins",
            "problem_text": "s0",
            "answer_number": "2",
            "unit": "",
            "solution": "x",
        },
        {
            "source": "stat",
            "problem_text": "t1",
            "answer_number": "3",
            "unit": "",
            "solution": None,
        },
    ]

    def fake(url, dest, sha256=None, timeout=30.0):
        if "huggingface" not in url:
            raise ArtifactError("github offline")
        dest.write_text(json.dumps({"rows": [{"row": r} for r in rows], "num_rows_total": 3}))
        return dest

    monkeypatch.setattr(dataset, "download", fake)
    monkeypatch.setenv("SCIEVALS_CACHE", str(tmp_path))
    monkeypatch.delenv("SCIEVALS_SCIBENCH_DIR", raising=False)
    assert [r.problem_text for r in Source("main").book("atkins")] == ["t0"]
