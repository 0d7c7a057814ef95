"""``scievals regrade --verify LOG`` of scievals SciBench logs, real and edited by hand.

Each log is made by a real Inspect eval of ``scibench`` with a scripted ``mockllm`` model (no
network): one book (quan, 33 problems, a legal ``books=`` subset) answered with the reference
replies; a few problems of the Python setting, whose programs the verification runs again in
the scievals sandbox; and of the Wolfram setting, whose programs it cannot run (said per
sample). Edited copies are written back with Inspect's ``write_eval_log``: an untouched log
verifies clean, each edit is one line per difference and exit status 1, a file that cannot be
verified is one line and exit status 2.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessage
from inspect_ai.util import store
from verify_cli import differences, edited, sample_of, verify

from scievals.models.reference import REPLY_KEY
from scievals.scibench.task import scibench, to_read

from .scibench_helpers import DATA, needs_data, scripted

pytestmark = [needs_data, pytest.mark.slow]


BOOK = "quan"
PROBLEMS = 33
METRICS = ("accuracy", "lower", "upper", "quan", "macro", "chemistry", "unextracted", "pass_at_1")


@pytest.fixture(autouse=True)
def _data(monkeypatch) -> None:
    """The data are the copy the runs read (``--data-dir`` of the command, by its variable)."""
    monkeypatch.setenv("SCIEVALS_SCIBENCH_DIR", str(DATA))


def _reference(messages: list[ChatMessage]) -> str:
    """The reference reply the task left in the sample's store: its gold, boxed and printed."""
    return store().get(REPLY_KEY)


def _eval(
    log_dir: Path,
    reply: Callable[[list[ChatMessage]], str],
    limit: int | None = None,
    epochs: int | None = None,
    **params,
) -> Path:
    task = scibench(data_dir=str(DATA), **{"books": BOOK, **params})
    [log] = inspect_eval(
        task,
        model=scripted(reply),
        display="none",
        log_dir=str(log_dir),
        limit=limit,
        epochs=epochs,
    )
    assert log.status == "success", log.error
    assert log.location is not None
    return Path(log.location)


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    """Every quan problem answered with its reference reply, scored by faithful and robust."""
    return _eval(tmp_path_factory.mktemp("sb-verify"), _reference)


def _reply(sample: EvalSample, text: str) -> None:
    """The sample's reply replaced wherever the log holds it, as a careful hand would."""
    sample.output.completion = text
    sample.output.choices[0].message.content = text
    sample.messages[-1].content = text


def _refused(path: Path, capsys, *args: str) -> str:
    """The one error line of a log that cannot be verified (exit status 2, nothing on stdout)."""
    code, lines, err = verify(path, capsys, *args)
    assert (code, lines) == (2, []), lines + [err]
    assert len(err.splitlines()) == 1, err
    return err.strip()


def test_an_untouched_log_verifies_clean(real_log, tmp_path, capsys):
    code, lines, err = verify(real_log, capsys, "--out", str(tmp_path / "out"))
    assert code == 0, lines + [err]
    assert lines == [
        f"{real_log} verifies clean: {PROBLEMS} samples re-graded by faithful, robust; every "
        "verdict, metric and protocol field is what the log records"
    ]
    assert "note:" not in err  # the whole book ran, its data read from the same folder
    written = json.loads((tmp_path / "out" / "verify.json").read_text(encoding="utf-8"))
    assert (written["clean"], written["differences"], written["task"]) == (
        True,
        [],
        "scievals/scibench",
    )
    assert written["parameters"]["books"] == BOOK
    assert written["scores"]["sample quan-0"]["robust"]["value"] == 1


def test_a_flipped_score(real_log, tmp_path, capsys):
    def flip(log: EvalLog) -> None:
        sample_of(log, "quan-3").scores["faithful"].value = 0

    assert differences(edited(real_log, tmp_path, flip), capsys) == [
        "sample quan-3 faithful: re-graded value 1; the log records value 0"
    ]


def test_a_completion_changed_by_hand(real_log, tmp_path, capsys):
    """The completion is what is graded; its messages, left alone, no longer say it.
    The log's metrics are those of the gold answer, not of what the output now earns."""

    def change(log: EvalLog) -> None:
        sample_of(log, "quan-3").output.completion = "So \\boxed{42}."

    lines = differences(edited(real_log, tmp_path, change), capsys)
    gold = sample_of(read_eval_log(str(real_log)), "quan-3").scores["faithful"].answer
    assert lines[:2] == [
        "sample quan-3: its output's completion is not its output's message nor its last "
        "assistant message: graded from the completion",
        f"sample quan-3 faithful: re-graded value 0, answer '42'; the log records value 1, "
        f"answer {gold!r}",
    ]
    assert lines[2].startswith("sample quan-3 robust: re-graded value 0, answer '42.0', ")
    metrics = [line.split(":")[0] for line in lines[3:]]
    assert metrics == [
        f"metric {scorer} {name}"
        for scorer in ("faithful", "robust")
        for name in METRICS
        if name not in ("unextracted",)
    ]
    assert f"metric robust accuracy: the log reports 1, re-graded {32 / 33:g}" in lines


def test_the_data_version_altered(real_log, tmp_path, capsys):
    def alter(log: EvalLog) -> None:
        protocol = log.eval.metadata["protocol"]
        protocol["data_version"] = protocol["data_version"].replace("main", "old", 1)

    here = f"main (local {DATA / 'main'})"
    assert differences(edited(real_log, tmp_path, alter), capsys) == [
        f"protocol data_version: the log records {'old' + here[4:]!r}, this install {here!r}"
    ]


def test_a_sample_removed(real_log, tmp_path, capsys):
    """The book's dataset has 33 problems: a log of 32 lacks one (its metrics were over 33)."""

    def remove(log: EvalLog) -> None:
        log.samples = [s for s in log.samples or [] if str(s.id) != "quan-5"]

    lines = differences(edited(real_log, tmp_path, remove), capsys)
    assert lines[0] == "sample quan-5: missing from the log (the eval ran it)"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "metric faithful lower",
        "metric robust lower",
    ]


def test_a_gold_edited_to_match_a_wrong_answer(real_log, tmp_path, capsys):
    """The scorers read this install's gold: a log's own cannot make a wrong answer right."""

    def cheat(log: EvalLog) -> None:
        _reply(sample_of(log, "quan-3"), "So \\boxed{42}.")
        sample_of(log, "quan-3").metadata["answer_number"] = "42"

    lines = differences(edited(real_log, tmp_path, cheat), capsys)
    gold = sample_of(read_eval_log(str(real_log)), "quan-3").metadata["answer_number"]
    assert lines[0] == (
        f"sample quan-3: its metadata's answer_number is '42', this install's dataset's {gold!r}"
    )
    assert lines[1].startswith("sample quan-3 faithful: re-graded value 0")


def test_samples_the_eval_did_not_run_fail_alone(real_log, tmp_path, capsys):
    """Another book's sample, and an epoch the one-epoch run did not have, are lines of their
    own; the others are graded (a .eval file holds one sample per id and epoch)."""

    def splice(log: EvalLog) -> None:
        foreign = sample_of(log, "quan-3").model_copy(deep=True, update={"id": "atkins-1"})
        again = sample_of(log, "quan-4").model_copy(deep=True, update={"epoch": 2})
        log.samples = [*(log.samples or []), foreign, again]

    assert differences(edited(real_log, tmp_path, splice), capsys) == [
        "sample quan-4 epoch 2: not one of the samples the eval ran (its dataset's ids and "
        "epochs): not re-graded",
        "sample atkins-1: not one of the samples the eval ran (its dataset's ids and epochs): "
        "not re-graded",
    ]


def test_a_python_log_runs_its_programs_again(tmp_path, capsys):
    """The programs ran in Inspect's local sandbox; they run again in ours, and print the
    same. A program edited by hand prints otherwise, which is a line of its own."""

    def reply(messages: list[ChatMessage]) -> str:
        value = _reference(messages).split("print(")[1].split(")")[0]
        return f"Solution.\n```python\nprint({value})\n```\n"  # the tag fails the official exec

    path = _eval(tmp_path / "logs", reply, limit=3, setting="python", sandbox="local")
    code, lines, err = verify(path, capsys)
    assert code == 0, lines + [err]
    assert lines[0].endswith(
        "verifies clean: 3 samples re-graded by faithful, robust, 3 programs run again; every "
        "verdict, metric and protocol field is what the log records"
    )
    assert "note: the run's programs ran in sandbox local; re-run here in ours" in err

    def change(log: EvalLog) -> None:
        _reply(sample_of(log, "quan-0"), "```python\nprint(42)\n```")

    lines = differences(edited(path, tmp_path, change), capsys)
    assert lines[:2] == [  # its faithful run fails on the fence's tag, as the logged one did
        "sample quan-0: its robust program run again printed '42', the log records '15.425'",
        "sample quan-0 robust: re-graded value 0, answer '42.0', match None; the log records "
        "value 1, answer '15.425', match 'plain'",
    ]
    assert all(line.startswith("metric robust ") for line in lines[2:])


def test_a_wolfram_log_says_its_programs_were_not_run_again(tmp_path, capsys, monkeypatch):
    """This machine has no Wolfram kernel (a stand-in answered the run): each sample says that
    its program was not run again, and is scored from the output the log records."""
    kernel = tmp_path / "bin" / "wolframscript"
    kernel.parent.mkdir()
    kernel.write_text("#!/bin/sh\necho 1.5\n", encoding="utf-8")
    kernel.chmod(0o755)
    monkeypatch.setenv("PATH", f"{kernel.parent}:{os.environ['PATH']}")
    with to_read():  # the run needs no real kernel either
        path = _eval(tmp_path / "logs", _reference, limit=3, setting="wolfram", sandbox="local")
    code, lines, err = verify(path, capsys)
    assert code == 0, lines + [err]
    assert lines[0].endswith(
        "verifies clean: 3 samples re-graded by faithful, robust, 3 programs not run again; "
        "every verdict, metric and protocol field is what the log records"
    )
    for sample_id in ("quan-0", "quan-1", "quan-2"):
        assert (
            f"note: sample {sample_id}: its wolfram program was not run again (the scievals "
            "sandbox has no Wolfram kernel): scored from the output the log records"
        ) in err


PROTOCOLS = {
    "two epochs": {"epochs": 2},
    "a paper preset (old data, all books)": {"preset": "paper_few_cot"},
    "OpenCompass's preset and scorer": {"preset": "opencompass_fs"},
    "chain of thought": {"setting": "zero_cot"},
    "errata and a tolerance": {"scorer": "robust", "errata": True, "abs_tol": 0.01},
    "an agent": {"agent": "react", "agent_message_limit": 4},
}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_each_protocol_verifies_clean(protocol, tmp_path, capsys):
    """The protocol this install records, and the re-grade, are the run's for every protocol."""
    path = _eval(tmp_path, _reference, limit=3, **PROTOCOLS[protocol])
    code, lines, err = verify(path, capsys)
    assert (code, len(lines)) == (0, 1), lines + [err]
    samples = 3 * PROTOCOLS[protocol].get("epochs", 1)  # each epoch of each sample
    assert f" verifies clean: {samples} samples re-graded by " in lines[0]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda log: setattr(log.eval, "task", "scievals/other"),
            "is a log of task 'scievals/other', not of scievals/scibench",
        ),
        (
            lambda log: (
                setattr(log.eval, "task", "inspect_evals/gpqa_diamond"),
                log.eval.metadata.pop("protocol"),
            ),
            "is a log of task 'inspect_evals/gpqa_diamond': --verify checks logs of "
            "scievals/scicode, scievals/scicode_verified and scievals/scibench",
        ),
        (
            lambda log: log.eval.scorers[1].options.update(abs_tol="a lot"),
            "its scorer robust's arguments: abs_tol must be 0 or more, not 'a lot'",
        ),
        (
            lambda log: setattr(log.eval.scorers[0], "name", "model_graded_qa"),
            "records scorer 'model_graded_qa': not one of faithful, robust, opencompass",
        ),
        (
            lambda log: log.eval.task_args_passed.update(exam_file="/etc/passwd"),
            "",  # a parameter of the task: no error of its own
        ),
        (
            lambda log: log.eval.task_args_passed.update(subset="exam"),
            "is a log of the exam subset: a grader model scored it by a rubric",
        ),
        (
            lambda log: log.eval.task_args_passed.update(evil=1),
            "records task parameters ['evil'], not of scievals/scibench",
        ),
    ],
    ids=["task", "other-task", "scorer-arguments", "scorer", "unused-path", "exam", "parameter"],
)
def test_a_log_that_cannot_be_verified_is_one_line(real_log, tmp_path, capsys, edit, says):
    path = edited(real_log, tmp_path, edit)
    if not says:
        code, lines, _ = verify(path, capsys)
        assert (code, len(lines)) == (0, 1)
        return
    line = _refused(path, capsys)
    assert line.startswith(f"scievals: error: {path}") and says in line, line


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("notes.txt", b"a log?", "not an Inspect log (a .eval or .json file)"),
        ("log.json", b'{"version": ', "is not a readable Inspect log: "),
        ("bytes.eval", b"PK\x03\x04 not a zip", "a damaged or truncated .eval archive"),
    ],
)
def test_a_file_that_is_no_log_is_one_line(tmp_path, capsys, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)
    assert says in _refused(path, capsys)


def test_the_log_sets_its_protocol(real_log, capsys):
    assert _refused(real_log, capsys, "--version", "old", "--timeout", "5") == (
        f"scievals: error: {real_log} is a SciBench log: --verify grades under its own "
        "protocol: drop --timeout and --version"
    )
