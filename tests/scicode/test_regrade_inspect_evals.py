"""``scievals regrade LOG`` on inspect_evals ``scicode`` logs.

The slow tests make their logs with the ``inspect-evals`` package itself (0.26.0 and 0.28.0, each
from PyPI into an environment of its own, cached): its ``scicode`` task, run by
``inspect_evals_driver.py`` with a scripted model on four dev problems, generated with
``--no-score`` (scoring needs its Docker image and the 1 GB ``test_data.h5``). The scores the
source records are then written into the log with Inspect's ``write_eval_log``: what that
package's scorer records for these replies in its image (every step its extraction makes pass,
but 70.6, whose tests it holds with their ``scicode.compare.cmp`` import). The fast tests read
logs built here by Inspect, and bad ones.

inspect-evals 0.28.0 requires ``inspect-evals-utils==0.2.0``, its utilities split off into a
package of their own. When the registry serves it, the real one is installed; when it does not
(the one these tests reach does not), the environment gets 0.28.0 without its dependencies, its
other declared requirements (this Inspect pinned), and ``inspect_evals_utils_stand_in/``: our own
stand-in for that package, giving what the ``scicode`` path needs (its cache folder, loading a
local JSONL file through Inspect's ``json_dataset``) and, for every other name inspect_evals
imports, an object that raises ``NotImplementedError`` when called. The log is still written by
0.28.0's own task, solver and prompts and by Inspect's log writer; only the split-off utility
package is stood in (scoring, which would use its code-block helpers, is not run here either).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from email.parser import Parser
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import Score
from inspect_ai.solver import Generate, TaskState, solver
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from scievals.cli import main
from scievals.paths import cache_dir
from scievals.scicode.data.dataset import find_step, load_problems, official_file
from scievals.scicode.regrade.compare import table
from scievals.scicode.regrade.inspect_evals_log import is_inspect_log, read_inspect_evals_log
from scievals.scicode.regrade.inspect_evals_regrade import comparison
from scievals.scicode.regrade.run import grading_config

from .conftest import gold, read_grade_output, write_jsonl

DRIVER = Path(__file__).with_name("inspect_evals_driver.py")
VERSIONS = ("0.26.0", "0.28.0")
PROBLEMS = ("1", "3", "19", "70")
HOSTILE = "\n__import__('os')._exit(0)\n"
REPLIES = {
    "1.1": gold("1.1"),
    "3.1": gold("3.1").replace("\n```\n", HOSTILE + "```\n"),
    "19.1": "A first draft:\n\n```python\ndef tensor(*args):\n    return None\n```\n\n"
    "And the fix:\n\n" + gold("19.1"),
    "19.2": gold("19.2"),
    **{f"70.{k}": gold(f"70.{k}") for k in range(1, 9)},
}
"""3.1 exits 0 before its tests run; 19.1 gives a draft, then the fix (inspect_evals 3-A takes
the fix, the official rule the draft, which 19.2 calls)."""
SOURCE_FAILS = {"70.6"}
"""What inspect_evals 3-A records as failed for these replies: 70.6's tests import
``scicode.compare.cmp`` (its first run of the dev set keeps those lines)."""


# ---- the real package --------------------------------------------------------------------------

_UNINSTALLABLE: dict[str, str] = {}
"""Versions whose install failed in this session, with pip's line: tried once."""
READY = "scievals-ready"
STAND_IN = Path(__file__).with_name("inspect_evals_utils_stand_in")
UTILS = "inspect-evals-utils"
PYCACHE = shutil.ignore_patterns("__pycache__")


def _python(inspect_evals: str) -> tuple[Path, bool]:
    """The python of an environment with ``inspect-evals==<version>`` (and this Inspect), built
    once in the cache, and whether its ``inspect-evals-utils`` is the tests' stand-in (only when
    the registry cannot serve the pinned one); a skip when neither can be installed."""
    home = cache_dir("inspect-evals")
    real = home / f"venv-{inspect_evals}"
    if (real / READY).exists():
        return real / "bin" / "python", False
    if inspect_evals in _UNINSTALLABLE:
        pytest.skip(_UNINSTALLABLE[inspect_evals])
    unserved = _unserved(home, f"inspect-evals=={inspect_evals}")
    if unserved is not None:
        pytest.skip(f"inspect-evals {inspect_evals} not reachable on PyPI: {unserved}")
    (wheel,) = (home / "wheels").glob(f"inspect_evals-{inspect_evals}-*.whl")
    inspect_ai = f"inspect_ai=={version('inspect_ai')}"
    requires = _requires(wheel)
    utils = [r for r in requires if canonicalize_name(r.name) == UTILS]
    if not utils or _unserved(home, str(utils[0])) is None:
        installs = [[f"inspect-evals=={inspect_evals}", inspect_ai]]
        return _built(real, inspect_evals, installs), False
    stood_in = home / f"venv-{inspect_evals}-stand-in-{_digest(STAND_IN)}"
    if not (stood_in / READY).exists():
        others = [
            inspect_ai if canonicalize_name(r.name) == "inspect-ai" else str(r)
            for r in requires
            if canonicalize_name(r.name) != UTILS
        ]
        with tempfile.TemporaryDirectory() as tmp:  # its build leaves the tests' tree clean
            source = shutil.copytree(STAND_IN, Path(tmp) / STAND_IN.name, ignore=PYCACHE)
            _built(stood_in, inspect_evals, [["--no-deps", str(wheel)], others, [str(source)]])
        for stale in home.glob(f"venv-{inspect_evals}-stand-in-*"):
            if stale != stood_in and stale.suffix != ".part":
                shutil.rmtree(stale, ignore_errors=True)
    return stood_in / "bin" / "python", True


def _unserved(home: Path, requirement: str) -> str | None:
    """pip's last words when the registry does not serve ``requirement``; else None, its wheel
    (no dependencies) then in the cache."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", requirement]
        + ["-d", str(home / "wheels"), "-q"],
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else done.stderr[-300:]


def _requires(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` but those of its extras."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(name).decode())
    requires = [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]
    return [r for r in requires if r.marker is None or r.marker.evaluate({"extra": ""})]


def _digest(folder: Path) -> str:
    """A short digest of a folder's files, so that a changed stand-in builds a new environment."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _built(venv: Path, inspect_evals: str, installs: list[list[str]]) -> Path:
    """``venv`` made with each of ``installs`` pip-installed in turn; a skip when the registry
    lacks a requirement."""
    building = venv.with_name(f"{venv.name}.{os.getpid()}.part")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(building)], check=True)
    for args in installs:
        install = subprocess.run(
            [str(building / "bin" / "python"), "-m", "pip", "install", "-q", *args],
            capture_output=True,
            text=True,
        )
        if install.returncode != 0:
            shutil.rmtree(building)
            missing = [
                line for line in install.stderr.splitlines() if "No matching distribution" in line
            ]
            if missing:
                why = f"inspect-evals {inspect_evals} cannot be installed from PyPI: {missing[0]}"
                _UNINSTALLABLE[inspect_evals] = why
                pytest.skip(why)
            raise AssertionError(install.stderr[-2000:])
    (building / READY).write_text(inspect_evals)
    shutil.rmtree(venv, ignore_errors=True)
    os.replace(building, venv)
    return venv / "bin" / "python"


def _package_log(inspect_evals: str, tmp: Path) -> tuple[Path, bool]:
    """The package's own log of REPLIES on PROBLEMS (unscored), in a fresh inspect_evals cache
    holding the official problem files, and whether ``inspect-evals-utils`` was stood in."""
    data = tmp / "cache" / "scicode" / "data"
    data.mkdir(parents=True)
    for name in ("problems_all.jsonl", "problems_dev.jsonl"):
        (data / name).write_bytes(official_file(name))
    replies = tmp / "replies.json"
    replies.write_text(json.dumps(REPLIES), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["INSPECT_EVALS_CACHE_DIR"] = str(tmp / "cache")
    python, stood_in = _python(inspect_evals)
    done = subprocess.run(
        [str(python), str(DRIVER), str(replies), str(tmp / "logs")] + [",".join(PROBLEMS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(done.stdout.strip().splitlines()[-1]), stood_in


def _with_scores(log: EvalLog, fails: set[str]) -> EvalLog:
    """``log`` with the scores inspect_evals' scorer writes: ``{step: 1.0|0.0}`` per problem."""
    for sample in log.samples or []:
        steps = [s["step_number"] for s in sample.metadata["sub_steps"]]
        value = {s: 0.0 if s in fails else 1.0 for s in steps}
        sample.scores = {"verify": Score(value=value)}
    return log


@pytest.fixture(scope="module", params=VERSIONS)
def regraded(request, tmp_path_factory, dev_targets_file) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp(f"inspect-evals-{request.param}")
    made, stood_in = _package_log(request.param, tmp)
    log = read_eval_log(str(made))
    assert log.eval.metadata["full_task_version"] == "3-A"
    assert log.eval.packages["inspect_evals"] == request.param
    scored = tmp / "scored.eval"
    write_eval_log(_with_scores(log, SOURCE_FAILS), scored)
    out = tmp / "out"
    started = time.perf_counter()
    assert main(["regrade", str(scored), "--out", str(out)]) == 0
    seconds = time.perf_counter() - started
    (run,) = json.loads((out / "regrade.json").read_text())["runs"]
    label = request.param + (" (inspect-evals-utils stood in)" if stood_in else "")
    return {"version": label, "log": scored, "run": run, "seconds": seconds, "tmp": tmp}


def _verdict(line: dict[str, Any]) -> tuple[Any, ...]:
    """A verdict line but for its timings."""
    return line["step"], line["passed"], line["reason"], line["reason_kind"], line["runtime"]


@pytest.mark.slow
def test_regrade_equals_scievals_grade(regraded, capsys):
    tmp = regraded["tmp"]
    completions = write_jsonl(tmp / "completions.jsonl", REPLIES)
    verdicts = tmp / "verdicts.jsonl"
    args = ["grade", "scicode", str(completions), "--extraction", "original"]
    assert main([*args, "--out", str(verdicts)]) == 0
    graded, _ = read_grade_output(verdicts)
    ours = {v["step"]: _verdict(v) for v in regraded["run"]["verdicts"]}
    assert ours == {s: _verdict(v) for s, v in graded.items()}
    assert {s for s, v in ours.items() if not v[1]} == {"3.1", "19.1", "19.2"}
    capsys.readouterr()


@pytest.mark.slow
def test_the_comparison_names_what_differs(regraded, capsys):
    run = regraded["run"]
    rows = {r["step"]: (r["source"], r["scievals"], r["cause"]) for r in run["differing_steps"]}
    assert rows == {
        "3.1": (True, False, None),
        "19.1": (True, False, "extraction"),
        "19.2": (True, False, "extraction"),
        "70.6": (False, True, "missing import"),
    }
    detail = {r["step"]: r["detail"] for r in run["differing_steps"]}
    assert "exited early" in detail["3.1"]
    assert detail["19.2"].endswith("give other code for 19.1")
    problems = {
        r["problem"]: (r["source"], r["scievals"], r["cause"]) for r in run["differing_problems"]
    }
    assert problems == {
        "3": (True, False, None),
        "19": (True, False, "extraction"),
        "70": (False, True, "missing import"),
    }
    assert run["source"]["steps_passed"] == 11 and run["source"]["steps_total"] == 12
    assert run["scievals"]["steps_passed"] == 9 and run["scievals"]["steps_total"] == 12
    assert run["difference"]["steps"] == -2
    with capsys.disabled():
        print(
            f"\ninspect-evals {regraded['version']}:\n{table([run])}\n"
            f"(regrade: {regraded['seconds']:.1f} s)"
        )


@pytest.mark.slow
def test_a_2a_log_is_compared_under_its_own_extraction(regraded, tmp_path):
    """The same replies in a 2-A log: its scorer deleted the fence markers only, so the prose
    before every fence was run as code and every step failed: the extraction is named (but for
    70.6, whose tests could not import in the source's sandbox anyway)."""
    log = read_eval_log(str(regraded["log"]))
    log.eval.task_version = 2
    log.eval.metadata = {**log.eval.metadata, "full_task_version": "2-A"}
    path = tmp_path / "2a.eval"
    write_eval_log(_with_scores(log, set(REPLIES)), path)
    source = read_inspect_evals_log(path, _all())
    config = grading_config("dev", None, None, "scievals")
    (epoch,) = {s.epoch for s in source.samples}
    run = comparison(source, epoch, source.samples, regraded["run"]["verdicts"], config)
    rows = {r["step"]: r["cause"] for r in run["differing_steps"]}
    passing = {v["step"] for v in regraded["run"]["verdicts"] if v["passed"]}
    assert rows == {**dict.fromkeys(passing, "extraction"), "70.6": "missing import"}
    assert run["run"] == "scripted/model (2-A)"


# ---- logs built here: the reader and its refusals ----------------------------------------------


def _all() -> dict[str, Any]:
    return {p.problem_id: p for p in load_problems("all")}


def _raw(problem_id: str) -> dict[str, Any]:
    """A problem's record as inspect_evals' sample metadata holds it."""
    name = (
        "problems_dev.jsonl"
        if find_step(f"{problem_id}.1")[0].split == "dev"
        else "problems_all.jsonl"
    )
    for line in official_file(name).decode().splitlines():
        record = json.loads(line)
        if str(record["problem_id"]) == problem_id:
            return record
    raise KeyError(problem_id)


@solver
def _replay(replies: dict[str, str]):
    """Each step's user message and its scripted reply, as inspect_evals' solver leaves them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for step in state.metadata.get("sub_steps", []):
            state.messages.append(ChatMessageUser(content=step["step_description_prompt"]))
            reply = replies.get(step["step_number"])
            if reply is not None:
                state.messages.append(ChatMessageAssistant(content=reply))
        return state

    return solve


def _built_log(
    tmp_path: Path, replies: dict[str, str], extra: list[Sample] = (), epochs: int = 1
) -> Path:
    """A log in inspect_evals' shape, written by Inspect: one sample per problem of
    ``replies`` (but those ``extra`` gives), the scores its scorer records (every step
    passed)."""
    problems = sorted({s.split(".")[0] for s in replies} - {str(x.id) for x in extra}, key=int)
    samples = [Sample(input=p, id=p, metadata=_raw(p)) for p in problems] + list(extra)
    task = Task(dataset=samples, solver=_replay(replies))
    [log] = inspect_eval(
        task,
        model="mockllm/model",
        epochs=epochs,
        display="none",
        log_dir=str(tmp_path / "built"),
    )
    log.eval.task = "inspect_evals/scicode"
    log.eval.task_version = 3
    log.eval.metadata = {"full_task_version": "3-A"}
    for sample in log.samples or []:
        steps = [s["step_number"] for s in sample.metadata.get("sub_steps", [])]
        sample.scores = {"verify": Score(value=dict.fromkeys(steps, 1.0))}
    path = tmp_path / "built.eval"
    write_eval_log(log, path)
    return path


def test_replies_and_scores_are_read(tmp_path):
    path = _built_log(tmp_path, {"1.1": gold("1.1"), "19.1": "a", "19.2": "b"})
    source = read_inspect_evals_log(path, _all())
    assert (source.version, source.rule, source.timeout, source.notes) == ("3-A", 3, 300, ())
    assert [s.problem.problem_id for s in source.samples] == ["1", "19"]
    assert source.samples[1].replies == {"19.1": "a", "19.2": "b"}
    assert source.samples[1].scores == {"19.1": True, "19.2": True}


def test_a_json_log_and_an_unscored_one(tmp_path):
    """A ``.json`` log is told by its content; a log without scores is read, with a line."""
    log = read_eval_log(str(_built_log(tmp_path, {"1.1": gold("1.1")})))
    as_json = tmp_path / "log.json"
    write_eval_log(log, as_json)
    assert is_inspect_log(as_json)
    assert read_inspect_evals_log(as_json, _all()).samples[0].scores == {"1.1": True}
    for sample in log.samples or []:
        sample.scores = None
    write_eval_log(log, as_json)
    source = read_inspect_evals_log(as_json, _all())
    assert source.samples[0].scores is None
    assert source.notes == (
        "the log holds no scores (generated with --no-score?): nothing to compare",
    )
    other = tmp_path / "predictions.json"
    other.write_text('[{"origin_prompt": "?", "prediction": "A"}]')
    assert not is_inspect_log(other)


def test_each_epoch_is_a_run(tmp_path):
    path = _built_log(tmp_path, {"1.1": gold("1.1")}, epochs=2)
    source = read_inspect_evals_log(path, _all())
    assert source.epochs == 2
    assert sorted(s.epoch for s in source.samples) == [1, 2]
    second = [s for s in source.samples if s.epoch == 2]
    verdicts = [{"step": "1.1", "passed": False, "reason": "test 1: x", "reason_kind": "error"}]
    run = comparison(source, 2, second, verdicts, grading_config("dev", None, None, "scievals"))
    assert run["run"] == "mockllm/model (3-A) epoch 2"
    assert [r["step"] for r in run["differing_steps"]] == ["1.1"]


def test_bad_samples_fail_alone(tmp_path, capsys):
    """Another task's sample, an unknown problem, a sample with a reply missing, one whose id
    is not its problem's: a line each; the good samples are read (tests that are not a list
    are no import to name)."""
    other = Sample(input="q", id="gpqa-1", metadata={"question": "?", "choices": ["a"]})
    unknown = Sample(input="999", id="999", metadata={**_raw("1"), "problem_id": "999"})
    renamed = Sample(input="3", id="3b", metadata=_raw("3"))
    odd_tests = {**_raw("4"), "sub_steps": [{**_raw("4")["sub_steps"][0], "test_cases": 5}]}
    odd = Sample(input="4", id="4", metadata=odd_tests)
    replies = {"1.1": gold("1.1"), "19.1": "a", "4.1": "b"}
    path = _built_log(tmp_path, replies, [other, unknown, renamed, odd])
    source = read_inspect_evals_log(path, _all())
    assert sorted(s.problem.problem_id for s in source.samples) == ["1", "4"]
    assert sorted(source.notes) == [
        "sample 19 epoch 1: 1 replies to its 2 steps: not re-graded",
        "sample 3b epoch 1: its id is not its problem_id '3': not re-graded",
        "sample 999 epoch 1: no SciCode problem '999': not re-graded",
        "sample gpqa-1 epoch 1: not a SciCode sample (its metadata has no problem_id and "
        "sub_steps): not re-graded",
    ]


def test_a_malformed_score_fails_its_sample(tmp_path):
    path = _built_log(tmp_path, {"1.1": gold("1.1"), "3.1": gold("3.1")})
    log = read_eval_log(str(path))
    log.samples[0].scores = {"verify": Score(value={"1.1": 0.5})}
    write_eval_log(log, path)
    source = read_inspect_evals_log(path, _all())
    assert [s.problem.problem_id for s in source.samples] == ["3"]
    assert source.notes == (
        "sample 1 epoch 1: its score is not 1.0 or 0.0 for each of its steps: {'1.1': 0.5}: "
        "not re-graded",
    )


def _refused(path: Path, capsys, *args: str) -> str:
    code = main(["regrade", str(path), *args])
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_files_that_are_not_what_they_claim(tmp_path, capsys):
    built = _built_log(tmp_path, {"1.1": gold("1.1")})
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(built.read_bytes()[: built.stat().st_size // 2])
    huge = tmp_path / "huge.eval"
    with huge.open("wb") as file:
        file.truncate(2**31)
    text = tmp_path / "notes.eval"
    text.write_text("not a log\n")
    fake = tmp_path / "fake.json"
    fake.write_text('{"version": 2, "status": "success", "eval": 1}')
    assert _refused(truncated, capsys) == (
        f"scievals: error: {truncated}: not an Inspect log (a damaged or truncated .eval archive)"
    )
    assert _refused(huge, capsys) == (
        f"scievals: error: {huge}: 2,147,483,648 bytes, over the 1,073,741,824-byte bound of a "
        "log read"
    )
    assert "not an Inspect log" in _refused(text, capsys)
    assert _refused(fake, capsys).startswith(
        f"scievals: error: {fake} is not a readable Inspect log"
    )


def test_a_log_of_another_kind(tmp_path, capsys):
    built = _built_log(tmp_path, {"1.1": gold("1.1")})
    log = read_eval_log(str(built))
    log.eval.task = "inspect_evals/gpqa_diamond"
    other = tmp_path / "other.eval"
    write_eval_log(log, other)
    log.eval.task = "scievals/scicode"
    ours = tmp_path / "ours.eval"
    write_eval_log(log, ours)
    assert _refused(other, capsys) == (
        f"scievals: error: {other} is a log of task 'inspect_evals/gpqa_diamond', not of "
        "inspect_evals/scicode"
    )
    assert _refused(ours, capsys) == (
        f"scievals: error: {ours} is a scievals log: `scievals regrade --verify {ours}` "
        "re-grades it and checks what it records"
    )
    log.eval.task = "inspect_evals/scicode"
    log.samples = []
    empty = tmp_path / "empty.eval"
    write_eval_log(log, empty)
    assert _refused(empty, capsys) == (
        f"scievals: error: {empty} holds no samples to re-grade (written without them?)"
    )
    assert _refused(built, capsys, "--verify") == (
        f"scievals: error: {built} is an inspect_evals log: --verify checks scievals logs; drop "
        "--verify to re-grade it under the official rule"
    )


def test_causes_of_presupplied_steps_and_the_runtime(tmp_path):
    """Test problems (no targets here: the verdicts are given): 76.3 is pre-supplied, scored by
    the source; 76.4 ran after the model's own 76.3 there; problem 2 imports simps."""
    replies = {f"76.{k}": gold_like(f"76.{k}") for k in range(1, 5)} | {"2.1": gold_like("2.1")}
    path = _built_log(tmp_path, replies)
    log = read_eval_log(str(path))
    for sample in log.samples or []:
        if sample.id == "76":
            sample.scores["verify"].value["76.3"] = 0.0
        else:
            sample.scores["verify"].value["2.1"] = 0.0
    write_eval_log(log, path)
    source = read_inspect_evals_log(path, _all())
    verdicts = [
        {
            "step": s,
            "passed": s != "76.4",
            "reason": "test 1: assertion failed",
            "reason_kind": "assertion",
        }
        for s in ("2.1", "76.1", "76.2", "76.4")
    ]
    config = grading_config("test", None, None, "scievals")
    run = comparison(source, 1, source.samples, verdicts, config)
    rows = {r["step"]: (r["source"], r["scievals"], r["cause"]) for r in run["differing_steps"]}
    assert rows == {
        "2.1": (False, True, "unpinned runtime"),
        "76.3": (False, None, "pre-supplied"),
        "76.4": (True, False, "pre-supplied code"),
    }
    assert run["presupplied"] == [{"step": "76.3", "source": False}]
    (problem,) = run["differing_problems"]
    assert (problem["problem"], problem["cause"]) == ("2", "unpinned runtime")
    assert (run["source"]["steps_total"], run["scievals"]["steps_total"]) == (5, 4)
    printed = table([run]).splitlines()
    assert any(
        re.fullmatch(
            r"  76\.3 +fail +not graded +pre-supplied +pre-supplied step scored by the source; .*",
            line,
        )
        for line in printed
    )


def gold_like(step_id: str) -> str:
    """A reply defining the step's function (test steps have no gold code)."""
    header = find_step(step_id)[1].function_header
    return f"```python\n{header}\n    return None\n```\n"
