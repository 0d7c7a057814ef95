"""What a new user sees from the real commands (``scievals`` and ``inspect`` as processes): one
line per problem, never a traceback for their own mistakes, and a non-zero exit whenever a task
did not finish. Scoring without targets stops before any model call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest
from inspect_ai.log import read_eval_log

from scievals.scicode.data.dataset import load_problems
from scievals.scicode.data.targets import ENV_H5, official_h5, write_test_target
from scievals.scicode.data.targets_source import NO_H5
from scievals.scicode.data.verified_targets import ENV_VERIFIED_H5, NO_VERIFIED_H5, verified_h5
from scievals.scicode.regenerate import dev_targets_path

BIN = Path(sys.executable).parent
VERIFIED_COPY = Path(__file__).resolve().parents[2] / "shared" / "data" / "scicode-verified"
SCIBENCH_COPY = Path(__file__).resolve().parents[2] / "shared" / "data" / "scibench" / "main"
SMALLEST = "74"
"""The test problem with fewest tests: one scored step, 74.1, three tests."""


def _run(
    tmp_path: Path, *args: str, command: str = "scievals", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, from ``tmp_path``, with no targets file named anywhere."""
    environ = {k: v for k, v in os.environ.items() if k not in (ENV_H5, ENV_VERIFIED_H5)}
    environ |= {"COLUMNS": "200", "SCIEVALS_SCIBENCH_DIR": str(SCIBENCH_COPY)} | (env or {})
    return subprocess.run(
        [str(BIN / command), *args],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if "error" in line]


@pytest.fixture(scope="module")
def no_test_targets() -> None:
    if official_h5() is not None or verified_h5() is not None:
        pytest.skip("a cached targets file is here: the missing-targets path cannot be shown")


@pytest.fixture(scope="module")
def fake_targets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An official-layout targets file with problem 74's three targets (zeros)."""
    path = tmp_path_factory.mktemp("h5") / "test_data.h5"
    (step,) = next(p for p in load_problems("test") if p.problem_id == SMALLEST).scored_steps
    with h5py.File(path, "w") as h5:
        for number in range(1, len(step.tests) + 1):
            write_test_target(h5, step.step_id, number, 0.0)
    return path


# ---- the front door's own options -------------------------------------------------------------


def test_help_is_plain_text(tmp_path: Path) -> None:
    done = _run(tmp_path, "--help")
    assert done.returncode == 0
    assert "The scievals front door" in done.stdout and "``" not in done.stdout
    task = _run(tmp_path, "eval", "scicode", "--help")
    assert task.returncode == 0
    assert "parameters of scievals/scicode: --split, " in task.stdout


def test_an_unknown_option_shows_the_subcommands_usage(tmp_path: Path) -> None:
    done = _run(tmp_path, "grade", "scicode", "c.jsonl", "--bogus")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: scievals grade scicode ")
    assert done.stderr.splitlines()[-1].endswith("error: unrecognized arguments: --bogus")


def test_unknown_task_parameters_are_refused_with_the_nearest_name(tmp_path: Path) -> None:
    """Each unknown name is a line, before Inspect starts; -T and --key alike, Inspect's options
    among the names offered."""
    args = ["--splitt", "dev", "-T", "stepcount=x", "-T", "h5", "--max-token", "5", "--no-score"]
    done = _run(tmp_path, "eval", "scicode", *args)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "scievals eval: scievals/scicode has no parameter --splitt; did you mean --split?",
        "scievals eval: scievals/scicode has no parameter stepcount; did you mean step_count?",
        "scievals eval: -T h5 needs a value: -T h5=VALUE",
        "scievals eval: scievals/scicode has no parameter --max-token; did you mean --max-tokens?",
    ]
    scibench = _run(tmp_path, "eval", "scibench", "--sorcer", "both")
    assert scibench.returncode == 1
    assert scibench.stderr == (
        "scievals eval: scievals/scibench has no parameter --sorcer; did you mean --scorer?\n"
    )
    task = _run(tmp_path, "eval", "scicodee", "--split", "dev")
    assert task.returncode == 1
    assert task.stderr.startswith("scievals eval: no task scievals/scicodee; did you mean scicode?")
    assert not (tmp_path / "logs").exists()


# ---- values: one line naming the parameter, the value and the choices -------------------------


@pytest.mark.parametrize(
    ("args", "lines"),
    [
        (
            ["scicode", "--split", "bogus", "--timeout", "-1", "-T", "dataset=verifed"]
            + ["--step-count", "all", "--runtimes", "2023"],
            [
                "dataset must be one of original, verified, not 'verifed'",
                "split must be one of test, dev, all, not 'bogus'",
                "timeout must be greater than 0, not -1",
                "step_count must be one of official, inspect_evals, upstream, verified, not 'all'",
                "runtimes: unknown scoring runtime 2023: choose from 2024, 2025",
            ],
        ),
        (
            ["scibench", "--setting", "zero-shot"],
            [
                "setting must be one of zero_nosys, zero, zero_cot, few, few_cot, python, "
                "wolfram, opencompass_zs, opencompass_zs_cot, opencompass_fs, "
                "opencompass_fs_cot, not 'zero-shot'"
            ],
        ),
    ],
    ids=["scicode", "scibench"],
)
def test_bad_values_are_a_line_each(tmp_path: Path, args: list[str], lines: list[str]) -> None:
    done = _run(tmp_path, "eval", *args, "--model", "mockllm/model")
    assert done.returncode == 2, done.stderr
    assert _errors(done) == [f"scievals: error: {line}" for line in lines]
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    ("task", "arg", "message"),
    [
        ("scievals/scicode", "split=bogus", "split must be one of test, dev, all, not 'bogus'"),
        ("scievals/scibench", "shots=abc", "shots must be 0 or more (a whole number), not 'abc'"),
        ("scievals/scicode_verified", "timeout=0", "timeout must be greater than 0, not 0"),
    ],
)
def test_bad_values_under_plain_inspect_eval(
    tmp_path: Path, task: str, arg: str, message: str
) -> None:
    """Inspect prints a task's refusal as its message alone (a prerequisite error)."""
    done = _run(tmp_path, "eval", task, "-T", arg, "--model", "mockllm/model", command="inspect")
    assert done.returncode == 1
    assert message in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


# ---- targets: scoring without them stops before the eval ------------------------------------


@pytest.mark.usefixtures("no_test_targets")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--split", "test"], NO_H5),
        (
            ["--split", "dev", "--targets", "official", "--h5", "absent.h5"],
            "--h5 absent.h5: no such file",
        ),
        (["--dataset", "verified", "--source", str(VERIFIED_COPY)], NO_VERIFIED_H5),
    ],
    ids=["test", "dev-official-h5-absent", "verified"],
)
def test_scoring_without_targets_stops_before_the_eval(
    tmp_path: Path, args: list[str], message: str
) -> None:
    if "verified" in args and not VERIFIED_COPY.exists():
        pytest.skip(f"no SciCode-Verified copy at {VERIFIED_COPY}")
    done = _run(tmp_path, "eval", "scicode", *args, "--model", "mockllm/model")
    assert done.returncode == 2
    assert _errors(done) == [f"scievals: error: {message}"]
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "logs").exists()  # no eval started: no model call was made


@pytest.mark.slow
@pytest.mark.usefixtures("no_test_targets")
def test_without_targets_inspect_prints_one_message_and_no_score_runs(tmp_path: Path) -> None:
    """Plain ``inspect eval`` refuses as well; ``--no-score`` needs no targets, and ``inspect
    score`` of its log, still without them, is that one message too."""
    common = ["--model", "mockllm/model", "--sample-id", SMALLEST]
    done = _run(tmp_path, "eval", "scievals/scicode", *common, command="inspect")
    assert done.returncode == 1
    assert " ".join(done.stdout.split()) == NO_H5
    generated = _run(tmp_path, "eval", "scicode", *common, "--no-score", "--log-dir", "gen")
    assert generated.returncode == 0, generated.stderr
    assert "scoring will fail" not in generated.stderr  # --no-score: nothing to warn about
    (log,) = (tmp_path / "gen").glob("*.eval")
    scored = _run(tmp_path, "score", str(log), "--overwrite", command="inspect")
    assert scored.returncode == 1
    assert " ".join(scored.stdout.split()) == NO_H5
    assert "Traceback" not in scored.stdout + scored.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("no_test_targets")
def test_named_targets_still_serve(tmp_path: Path, fake_targets: Path) -> None:
    """``SCIEVALS_SCICODE_H5`` and ``--h5`` (``-T h5=``) are found at build and read when
    scoring: the run finishes, scored."""
    common = ["eval", "scicode", "--model", "mockllm/model", "--sample-id", SMALLEST]
    for args, env in (([], {ENV_H5: str(fake_targets)}), (["-T", f"h5={fake_targets}"], {})):
        done = _run(tmp_path, *common, *args, "--log-dir", "logs", env=env)
        assert done.returncode == 0, done.stderr
        assert _errors(done) == []
    logs = [read_eval_log(log, header_only=True) for log in (tmp_path / "logs").glob("*.eval")]
    assert [(log.status, bool(log.results and log.results.scores)) for log in logs] == [
        ("success", True),
        ("success", True),
    ]


@pytest.mark.slow
def test_a_task_that_does_not_finish_exits_non_zero(tmp_path: Path) -> None:
    """A targets file that is not one stops the task at its first sample: exit 1 and a line
    saying so, with the log's path."""
    broken = tmp_path / "broken.h5"
    broken.write_text("not an h5 file")
    done = _run(
        tmp_path, "eval", "scicode", "--model", "mockllm/model", "--sample-id", SMALLEST,
        "--log-dir", "logs", env={ENV_H5: str(broken)},
    )  # fmt: skip
    assert done.returncode == 1
    (line,) = _errors(done)[-1:]
    (log,) = (tmp_path / "logs").glob("*.eval")
    assert line.startswith("scievals: error: scievals/scicode did not finish (error): OSError(")
    assert line.endswith(f"; log: {log}")


@pytest.mark.slow
def test_the_dev_split_needs_nothing(tmp_path: Path) -> None:
    if not dev_targets_path().exists():
        pytest.skip("the regenerated dev targets are not built here (scripts/setup.sh builds them)")
    done = _run(tmp_path, "eval", "scicode", "--split", "dev", "--model", "mockllm/model",
                "--sample-id", "1", "--log-dir", "logs")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _errors(done) == []
