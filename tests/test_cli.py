"""The front door's error contract: the user's mistakes are one line and exit 2, our bugs keep
their traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from timing import HANG_S

from scievals import cli
from scievals.inputs import InputError


def test_input_errors_are_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert cli.main(["report", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"scievals: error: no scievals logs found in {tmp_path}\n"


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path: Path) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("an internal invariant broke")

    monkeypatch.setattr("scievals.report.write.write_report", broken)
    with pytest.raises(ValueError, match="internal invariant"):
        cli.main(["report", str(tmp_path)])


def test_input_error_is_a_value_error() -> None:
    """Callers that caught ValueError for bad input keep working."""
    assert issubclass(InputError, ValueError)


def test_inspect_options_pass_with_their_own_arity() -> None:
    """Every `inspect eval` option passes as Inspect reads it (a flag, a value, an optional
    value); our tasks' parameters win where names collide (--timeout, --sandbox)."""
    rest = ["--no-score", "--fail-on-error", "--time-limit", "60", "--fail-on-error", "0.5"]
    rest += ["--sandbox", "docker", "--model", "m/x"]
    assert cli._eval_args("scicode", rest) == [
        "eval",
        "scievals/scicode",
        "--no-score",
        "--fail-on-error",
        "--time-limit",
        "60",
        "--fail-on-error",
        "0.5",
        "-T",
        "sandbox=docker",
        "--model",
        "m/x",
    ]
    other = cli._eval_args("other/task", ["--sandbox", "docker", "--splitt", "dev"])
    assert other[2:] == ["--sandbox", "docker", "-T", "splitt=dev", "--model", "scievals/local"]


def test_refused_parameters_are_a_line_each() -> None:
    with pytest.raises(SystemExit) as refused:
        cli._eval_args("scicode_verified", ["-T", "splitt=dev", "--runtime", "2025"])
    assert str(refused.value).splitlines() == [
        "scievals eval: scievals/scicode_verified has no parameter splitt; did you mean split?",
        "scievals eval: scievals/scicode_verified has no parameter --runtime; "
        "did you mean --runtimes?",
    ]


def test_prerequisite_errors_keep_their_kind_and_text() -> None:
    """Inspect prints the message through Rich: markup in it is escaped, not interpreted."""
    from inspect_ai._util.error import PrerequisiteError

    from scievals.prerequisite import prerequisite

    with pytest.raises(InputError) as caught, prerequisite():
        raise InputError("books must be one of [bold], not 'x'")
    assert isinstance(caught.value, PrerequisiteError)
    assert str(caught.value) == "books must be one of [bold], not 'x'"
    assert caught.value.message == r"books must be one of \[bold], not 'x'"


SCIEVALS = str(Path(sys.executable).with_name("scievals"))


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["--model", "nosuch/provider"],
            [
                "--model nosuch/provider: no model provider 'nosuch' (nearest: moonshot, none, mockllm)"
            ],
        ),
        (
            ["--model", "mockllm/model", "--epochs", "0", "--top-p", "2", "--max-tokens", "0"],
            [
                "--epochs 0: must be 1 or more",
                "--top-p 2: must be between 0 and 1",
                "--max-tokens 0: must be 1 or more",
            ],
        ),
    ],
    ids=["unknown-provider", "impossible-settings"],
)
def test_a_model_or_setting_that_cannot_run_is_a_line_and_exit_2(
    tmp_path: Path, args: list[str], lines: list[str]
) -> None:
    """Refused before Inspect starts: no traceback, no run that does nothing or waits forever."""
    command = [SCIEVALS, "eval", "scicode", "--split", "dev", "--limit", "1", "--no-score", *args]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"scievals: error: {line}" for line in lines]
    assert not (tmp_path / "logs").exists()


def test_every_model_and_setting_is_checked_before_the_run() -> None:
    argv = cli._eval_args("scicode", ["--model", "opnai/gpt-4o,mockllm/model", "--epochs=-1"])
    argv += ["--temperature", "nan", "--epochs", "abc", "--limit", "0", "--limit", "2-5"]
    argv += ["--model", "gpt-4o", "--max-tokens", "1.5", "--display", "fancy", "--top-k", "3"]
    assert cli._refused(argv) == [
        "--model opnai/gpt-4o,mockllm/model: no model provider 'opnai' (nearest: openai, "
        "openai-api, anthropic)",
        "--epochs -1: must be 1 or more",
        "--temperature nan: must be a finite number",
        "--epochs abc: 'abc' is not a valid integer.",
        "--limit 0: must be 1 or more",
        "--model gpt-4o: name each model PROVIDER/MODEL (openai/gpt-4o), not 'gpt-4o'",
        "--max-tokens 1.5: '1.5' is not a valid integer.",
        "--display fancy: 'fancy' is not one of 'full', 'conversation', 'rich', 'plain', 'log', "
        "'none'.",
    ]
    ours = cli._eval_args("scicode", ["--model", "scievals/local", "--temperature", "0.6"])
    assert cli._refused(ours + ["--model", "openai-api/local/qwen", "--top-p", "1"]) == []
