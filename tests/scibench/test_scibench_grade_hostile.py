"""Hostile replies get a verdict and nothing stops: ``scievals grade scibench`` through the real
command (the valid lines after them are graded as usual), and a whole Inspect eval."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from timing import HANG_S

from scievals.scibench.dataset import Source
from scievals.scibench.task import scibench

from .scibench_helpers import DATA, last_user_text, needs_data, scripted

SCIEVALS = Path(sys.executable).with_name("scievals")
HOSTILE = [
    "\\boxed{10^{400}}",
    "\\boxed{2 \\times 10^{400}}",
    "\\boxed{10^{" + "9" * 5000 + "}}",
    "\\boxed{" + "9" * 5000 + "}",
    "\\boxed{10**10**10}",
    "\\boxed{nan} \\boxed{inf",
    "1 \\times 10^{" + " " * 200_000 + "x",
    "\\boxed{" * 100_000,
    "\\text{" * 50_000 + "}" * 50_000,
    "{" * 300_000,
]


@needs_data
@pytest.mark.parametrize("scorer", ["robust", "faithful", "opencompass"])
def test_valid_lines_after_hostile_lines_are_graded(tmp_path: Path, scorer: str) -> None:
    golds = Source("main", str(DATA)).book("atkins")
    lines = [{"book": "atkins", "index": i, "response": r} for i, r in enumerate(HOSTILE)]
    valid = range(len(HOSTILE), len(HOSTILE) + 3)
    lines += [
        {"book": "atkins", "index": i, "response": f"\\boxed{{{golds[i].answer_number.strip()}}}"}
        for i in valid
    ]
    replies, out = tmp_path / "replies.jsonl", tmp_path / "graded.jsonl"
    replies.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    argv = [str(SCIEVALS), "grade", "scibench", str(replies), "--scorer", scorer]
    argv += ["--data-dir", str(DATA), "--out", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    graded = [item for item in written if "index" in item]
    assert [g["index"] for g in graded] == [line["index"] for line in lines]
    assert not any(g["correct"] for g in graded[: len(HOSTILE)])
    assert all(g["correct"] for g in graded[len(HOSTILE) :])
    [summary] = [item["summary"] for item in written if "summary" in item]
    assert summary["total"] == len(lines) and json.dumps(written, allow_nan=False)
    if scorer == "robust":
        assert [g["rule"] for g in graded[:3]] == [
            "boxed/power-of-ten; out-of-range",
            "boxed/scientific; out-of-range",
            "boxed/power-of-ten; out-of-range",
        ]


@needs_data
def test_an_eval_of_hostile_replies_completes(tmp_path: Path) -> None:
    """Each problem answered with one hostile reply: the eval succeeds and scores every sample."""

    def reply(messages: list[ChatMessage]) -> str:
        return HOSTILE[len(last_user_text(messages)) % len(HOSTILE)]

    task = scibench(data_dir=str(DATA), books="quan", setting="zero", scorer="both")
    [log] = inspect_eval(task, model=scripted(reply), display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert log.samples and all(set(s.scores or {}) == {"faithful", "robust"} for s in log.samples)


@needs_data
def test_a_scorer_that_raises_fails_its_line_only(tmp_path: Path, monkeypatch) -> None:
    """The backstop behind the total parsers: a scorer's exception is that reply's failed
    verdict (rule ``scorer-error: ...``) and the lines after it are graded."""
    from scievals.inputs import read_jsonl
    from scievals.scibench import grade as grade_module

    real = grade_module.SCORE["robust"]

    def flaky(reply: str, *args: object) -> object:
        if reply == "boom":
            raise OverflowError("a scorer bug")
        return real(reply, *args)

    monkeypatch.setitem(grade_module.SCORE, "robust", flaky)
    source = Source(data_dir=str(DATA))
    answer = source.book("atkins")[1].answer_number
    path = tmp_path / "replies.jsonl"
    path.write_text(
        "".join(
            json.dumps({"book": "atkins", "index": i, "response": r}) + "\n"
            for i, r in enumerate(["boom", f"\\boxed{{{answer}}}"])
        )
    )
    results = list(grade_module.grade_lines(read_jsonl(path, grade_module.FIELDS), source))
    assert results[0]["correct"] is False and results[0]["rule"] == "scorer-error: OverflowError"
    assert len(results) == 2 and results[1]["correct"] is True
