"""Real Inspect logs of tiny tasks that follow the score contract of the scievals tasks.

A scripted solver stands in for the model: it answers each (sample, epoch) from a script, so every
outcome below is known in advance and the tests can check each number in the report by hand.
The model recorded in the log is a named ``mockllm`` model that is never called.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import (
    SampleScore,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, TaskState, solver

from scievals.protocol import protocol

Script = dict[tuple[str, int], Any]  # (sample id, epoch) -> what the "model" achieves


@solver
def scripted(script: Script):  # noqa: ANN201 - Inspect solver factory
    """Answer with the scripted outcome of this sample and epoch, as JSON."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reply = json.dumps(script[(str(state.sample_id), state.epoch)])
        state.output = ModelOutput.from_content(str(state.model), reply)
        state.messages.append(state.output.message)
        return state

    return solve


@metric
def percentage_main_problems_solved():  # noqa: ANN201
    def compute(scores: list[SampleScore]) -> float:
        solved = [all(v == 1.0 for v in s.score.value.values()) for s in scores]
        return 100 * sum(solved) / len(solved)

    return compute


@scorer(metrics=[percentage_main_problems_solved()])
def scicode_records():  # noqa: ANN201
    """SciCode contract: value {step: 1.0|0.0}, metadata steps with reason_kind for failures."""

    async def score(state: TaskState, target: Target) -> Score:
        steps = json.loads(state.output.completion)  # {step: null (passed) | reason_kind}
        return Score(
            value={step: 1.0 if kind is None else 0.0 for step, kind in steps.items()},
            metadata={
                "steps": [
                    {
                        "step": step,
                        "passed": kind is None,
                        "reason_kind": kind,
                        "reason": "scripted",
                    }
                    for step, kind in steps.items()
                ]
            },
        )

    return score


def _scibench_scorer(name: str):  # noqa: ANN202
    async def score(state: TaskState, target: Target) -> Score:
        value, extracted = json.loads(state.output.completion)[name]
        return Score(
            value=value,
            answer="1.0" if extracted else None,
            metadata={"rule": "boxed", "extracted": extracted},
        )

    return score


@scorer(metrics=[accuracy()])
def faithful():  # noqa: ANN201
    return _scibench_scorer("faithful")


@scorer(metrics=[accuracy()])
def robust():  # noqa: ANN201
    return _scibench_scorer("robust")


def run_task(task: Task, model: str, log_dir: Path, epochs: int = 1) -> Path:
    [log] = eval(
        task,
        model=f"mockllm/{model}",
        display="none",
        log_dir=str(log_dir),
        epochs=epochs,
        temperature=0.0,
    )
    assert log.status == "success", log.error
    return Path(log.location)


# ---- SciCode: four problems; step -> None (passed) or the reason kind of its failure ----------
SCICODE_PROTOCOL = dict(
    data_version="scicode-69a8cfc",
    split="test",
    steps_counted=288,
    background=False,
    prompt="single_turn",
    scorer="sandboxed records; extraction=original",
    timeout=1800,
    runtime={"numpy": "2.4.6", "scipy": "1.17.1"},
    sandbox="local",
)
SCICODE_ALPHA = {
    "1": {"1.1": None, "1.2": None},
    "2": {"2.1": None, "2.2": "assertion", "2.3": "syntax_error"},
    "10": {"10.1": None},
    "77": {"77.1": "timeout", "77.2": "missing_function"},
}
SCICODE_BETA = {
    "1": {"1.1": None, "1.2": "exception"},
    "2": {"2.1": None, "2.2": None, "2.3": None},
    "10": {"10.1": None},
    "77": {"77.1": None, "77.2": "exception"},
}
# alpha again, with background and two epochs: epoch 2 also fails step 1.2.
SCICODE_ALPHA_EPOCH2 = {**SCICODE_ALPHA, "1": {"1.1": None, "1.2": "exception"}}


def scicode_task(script: Script, **overrides: Any) -> Task:
    samples = [
        Sample(id=pid, input=f"problem {pid}", metadata={"problem_id": pid})
        for pid in SCICODE_ALPHA
    ]
    return Task(
        dataset=samples,
        solver=scripted(script),
        scorer=scicode_records(),
        metadata={"protocol": protocol("scicode", **{**SCICODE_PROTOCOL, **overrides})},
    )


# ---- SciBench: six problems; scorer -> (value, extracted) ---------------------------------------
BOOKS = {
    "atkins-1": ("atkins", "chemistry"),
    "atkins-2": ("atkins", "chemistry"),
    "atkins-3": ("atkins", "chemistry"),
    "fund-1": ("fund", "physics"),
    "fund-2": ("fund", "physics"),
    "stat-1": ("stat", "math"),
}
SCIBENCH_PROTOCOL = dict(
    data_version="old",
    split="textbook",
    steps_counted=583,
    prompt="zero",
    scorer="both",
    timeout=None,
    runtime={},
    sandbox=None,
)
SCIBENCH_ALPHA = {  # faithful 4/6, robust 5/6; fund-1 has no extracted answer
    "atkins-1": {"faithful": (1, True), "robust": (1, True)},
    "atkins-2": {"faithful": (1, True), "robust": (1, True)},
    "atkins-3": {"faithful": (0, True), "robust": (1, True)},
    "fund-1": {"faithful": (0, False), "robust": (0, False)},
    "fund-2": {"faithful": (1, True), "robust": (1, True)},
    "stat-1": {"faithful": (1, True), "robust": (1, True)},
}
SCIBENCH_BETA = {  # faithful = robust = 3/6, written as C/I
    pid: {"faithful": (v, True), "robust": (v, True)}
    for pid, v in {
        "atkins-1": "C",
        "atkins-2": "I",
        "atkins-3": "I",
        "fund-1": "C",
        "fund-2": "C",
        "stat-1": "I",
    }.items()
}


def scibench_task(script: Script, **overrides: Any) -> Task:
    samples = [
        Sample(
            id=pid,
            input=f"problem {pid}",
            metadata={"book": book, "subject": subject, "index": int(pid.split("-")[1])},
        )
        for pid, (book, subject) in BOOKS.items()
    ]
    return Task(
        dataset=samples,
        solver=scripted(script),
        scorer=[faithful(), robust()],
        metadata={"protocol": protocol("scibench", **{**SCIBENCH_PROTOCOL, **overrides})},
    )


def _epoch(outcomes: dict[str, Any], epoch: int = 1) -> Script:
    return {(pid, epoch): value for pid, value in outcomes.items()}


@dataclass
class Logs:
    root: Path
    scicode_alpha: Path
    scicode_alpha_bg: Path
    scicode_beta: Path
    scibench_alpha: Path
    scibench_beta: Path
    other: Path


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    """Five scievals runs and one log of another task, all in one folder (built once)."""
    root = tmp_path_factory.mktemp("logs")
    two_epochs = {**_epoch(SCICODE_ALPHA, 1), **_epoch(SCICODE_ALPHA_EPOCH2, 2)}
    other = Task(dataset=[Sample(id="x", input="x")], solver=scripted({("x", 1): "hi"}))
    return Logs(
        root=root,
        scicode_alpha=run_task(scicode_task(_epoch(SCICODE_ALPHA)), "alpha", root),
        scicode_alpha_bg=run_task(
            scicode_task(two_epochs, background=True, sandbox="<local & unsafe>"),
            "alpha",
            root,
            epochs=2,
        ),
        scicode_beta=run_task(scicode_task(_epoch(SCICODE_BETA)), "beta", root),
        scibench_alpha=run_task(scibench_task(_epoch(SCIBENCH_ALPHA)), "alpha", root),
        scibench_beta=run_task(scibench_task(_epoch(SCIBENCH_BETA)), "beta", root),
        other=run_task(other, "alpha", root / "elsewhere"),
    )
