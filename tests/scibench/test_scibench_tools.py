"""The grade CLI, the exam subset and the error-analysis protocol, with scripted models."""

from __future__ import annotations

import argparse
import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

from scievals.inputs import InputError
from scievals.scibench.cli import register
from scievals.scibench.dataset import Source
from scievals.scibench.errors import analyze_log, parse_category
from scievals.scibench.exam import load_exams, parse_points
from scievals.scibench.grade import grade_file
from scievals.scibench.reference import reply_for
from scievals.scibench.task import scibench

from .scibench_helpers import DATA, last_user_text, needs_data, scripted

pytestmark = needs_data


# ---- grade ----------------------------------------------------------------------------------
def cli_main(argv: list[str]) -> int:
    """Our subcommands wired as scievals.cli wires them (without the other rooms)."""
    parser = argparse.ArgumentParser(prog="scievals")
    sub = parser.add_subparsers(dest="command", required=True)
    groups = {
        "root": sub,
        "grade": sub.add_parser("grade").add_subparsers(dest="benchmark", required=True),
        "analyze": sub.add_parser("analyze").add_subparsers(dest="analysis", required=True),
    }
    register(groups)
    ns = parser.parse_args(argv)
    return ns.func(ns)


def test_grade_cli(tmp_path, capsys):
    atkins3 = Source("main", DATA).book("atkins")[3]
    lines = [
        {"book": "atkins", "index": 3, "response": reply_for(atkins3.answer_number, atkins3.unit)},
        {"book": "diff", "index": 26, "response": "so \\boxed{\u22122}"},
        {"book": "stat", "index": 0, "response": "no idea"},
    ]
    replies = tmp_path / "replies.jsonl"
    replies.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    for scorer, expected in (("robust", [True, True, False]), ("faithful", [True, False, False])):
        out = tmp_path / f"{scorer}.jsonl"
        args = ["grade", "scibench", str(replies), "--scorer", scorer, "--data-dir", str(DATA)]
        assert cli_main([*args, "--out", str(out)]) == 0
        *graded, last = [json.loads(x) for x in out.read_text().splitlines()]
        assert [g["correct"] for g in graded] == expected
        assert set(graded[0]) == {"book", "index", "correct", "parsed", "rule", "extracted"}
        summary = last["summary"]
        assert summary["correct"] == sum(expected) and summary["total"] == 3
        assert summary["by_subject"]["math"] == {"correct": expected[1], "total": 2}
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.splitlines() == [
            f"scibench {summary['data_version']}, {scorer} scorer: {sum(expected)}/3 correct "
            f"({100 * summary['micro']:.1f}%, 95% CI {100 * summary['ci_low']:.1f}-"
            f"{100 * summary['ci_high']:.1f}%), macro {100 * summary['macro']:.1f}% over 3 "
            f"books; {100 * summary['unextracted_rate']:.1f}% without a readable answer"
        ]


ATKINS_3 = {"book": "atkins", "index": 3, "response": "x"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{**ATKINS_3, "index": 999}], ":1: atkins has 105 problems, no 999"),
        ([{**ATKINS_3, "book": "physics"}], ":1: unknown SciBench book 'physics'"),
        ([ATKINS_3, {}, ATKINS_3], ':2: expected {"book", "index", "response"}'),
        ([ATKINS_3, ATKINS_3], ":2: problem atkins 3 is given again (first on line 1)"),
        ([{**ATKINS_3, "index": "3"}], ":1: index must be an integer"),
        ([{**ATKINS_3, "response": 3.5}], ":1: book and response must be strings"),
    ],
    ids=["index", "book", "keys", "twice", "index-type", "response-type"],
)
def test_grade_cli_names_the_bad_line(tmp_path, capsys, lines, message):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert cli_main(["grade", "scibench", str(bad), "--data-dir", str(DATA)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"scievals grade scibench: {bad}")
    assert message in err[0]


def test_grade_of_no_lines_has_no_interval(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    results, summary = grade_file(empty, data_dir=str(DATA))
    assert results == [] and summary["total"] == 0 and summary["ci_low"] is None


# ---- exam -----------------------------------------------------------------------------------
EXAM = {
    "exams": [
        {
            "name": "DE exam 1",
            "problems": [
                {"id": "1", "question": "Solve y' = y, y(0) = 1; give y(1).", "points": 10,
                 "rubric": "10 for e (2.718); 5 for the general solution only.",
                 "reference_answer": "e"},
                {"id": "2", "question": "Is y = 0 a solution of y' = y?", "points": 4,
                 "rubric": "4 for True.", "type": "true_false"},
            ],
        },
        {
            "name": "ML final",
            "problems": [
                {"id": "1", "question": "Which is a convex loss?", "points": 6,
                 "rubric": "6 for B.", "type": "multiple_choice",
                 "choices": ["A. 0-1 loss", "B. squared loss"]},
            ],
        },
    ]
}  # fmt: skip


def test_exam_end_to_end_with_scripted_grader(tmp_path):
    exam_file = tmp_path / "exam.json"
    exam_file.write_text(json.dumps(EXAM))

    def student(messages: list[ChatMessage]) -> str:
        text = last_user_text(messages)
        if "convex" in text:
            return "The answer is A."
        return "The answer is \\boxed{2.718}." if "y(1)" in text else "True."

    def grader(messages: list[ChatMessage]) -> str:
        text = last_user_text(messages)
        answer = text.split("Student answer:\n")[1]
        rubric = text.split("Rubric:\n")[1]
        if "2.718" in answer:
            return "Correct value.\nPOINTS: 10"
        if "True" in answer and "4 for True" in rubric:
            return "POINTS: 4"
        return "Wrong choice. POINTS: 0"

    task = scibench(subset="exam", exam_file=str(exam_file), setting="zero")
    log = inspect_eval(
        task,
        model=scripted(student),
        model_roles={"grader": scripted(grader)},
        epochs=2,  # agreeing epochs: the points of one
        display="none",
        log_dir=str(tmp_path),
    )[0]
    assert log.status == "success", log.error
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["DE exam 1 earned"] == 14 and metrics["DE exam 1 possible"] == 14
    assert metrics["ML final earned"] == 0 and metrics["ML final possible"] == 6
    assert metrics["mean exam percent"] == pytest.approx(50.0)
    sample = log.samples[2]
    assert "B. squared loss" in last_user_text(sample.messages)
    assert log.eval.metadata["protocol"]["split"] == "exam"


def test_exam_needs_a_file_and_a_valid_format(tmp_path):
    with pytest.raises(InputError, match="not public"):
        scibench(subset="exam")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"name": "X", "problems": [{"question": "q", "points": 1}]}))
    with pytest.raises(InputError, match="missing 'rubric'"):
        load_exams(broken)
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON exam file"):
        load_exams(broken)


@pytest.mark.parametrize(
    ("text", "points"),
    [("POINTS: 7", 7.0), ("points: 3.5\nPOINTS: 4", 4.0), ("POINTS: 99", 10.0), ("none", None)],
)
def test_parse_points(text, points):
    assert parse_points(text, 10.0) == points


# ---- error analysis -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("... so the error is \\boxed{10}.", 10),
        ("\\boxed{Category 5}", 5),
        ("It is category 7: scientific literacy.", 7),
        ("\\boxed{11}", None),
        ("no idea", None),
    ],
)
def test_parse_category(text, category):
    assert parse_category(text) == category


def test_error_analysis_aligns_records_by_sample(tmp_path):
    def wrong_model(messages: list[ChatMessage]) -> str:
        return "I reason badly. The answer is therefore \\boxed{123456}."

    task = scibench(data_dir=str(DATA), books="diff,stat", subset="solutions", setting="zero")
    log = inspect_eval(task, model=scripted(wrong_model), display="none", log_dir=str(tmp_path))[0]
    seen: list[str] = []

    def verifier(messages: list[ChatMessage]) -> str:
        seen.append(last_user_text(messages))
        return "Calculation went wrong. \\boxed{10}"

    result = analyze_log(log.location, scripted(verifier))
    assert result["n"] == 25  # 5 diff + 20 stat solution-pool problems, all wrong
    assert result["distribution"] == {"Calculation Skills": {"count": 25, "share": 1.0}}
    source = Source("main", DATA)
    stat7 = source.book("stat", pool="sol")[7]
    item = next(i for i in result["items"] if i["id"] == "sol-stat-7")
    assert item["category"] == 10
    text = next(t for t in seen if stat7.problem_text in t)
    assert text.startswith("The question is " + stat7.problem_text + " The unit of the answer is ")
    assert "The correct solution is " + stat7.solution in text
    assert text.endswith(
        "The model solution is I reason badly. The answer is therefore \\boxed{123456}."
    )
