"""A scievals SciCode log read back for ``--verify``: bounded, its task and scorer checked, each
sample's answers rebuilt from its raw completions.

Logs are untrusted input (a leaderboard submission, a paper's artifact). The file is refused with
one line when it is too large or not a scored log of the SciCode task. A sample that is not one of
its split's problems, or whose metadata or store is malformed, fails alone with one line.

The answers graded are the raw completions, extracted again under the recorded extraction as the
solver extracted them: the stored codes are derived from them, so a code that is not what its
completion extracts to (a completion edited by hand, its code left alone) is a difference, and
the completion is what is graded. Paths the log names (its targets file, its problem folder, a
compose file) are of the machine that ran it and are never opened here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from scievals.inputs import InputError
from scievals.regrade_verify import read_bounded, read_header
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem
from scievals.scicode.solver import STORE_KEY, extract
from scievals.scicode.whole import last_step

TASKS = ("scievals/scicode", "scievals/scicode_verified")
INSPECT_EVALS_TASK = "inspect_evals/scicode"
SCORER = "scicode_scorer"
LOCAL = {"source": "package"}
"""Recorded fields that name the running machine's files, replaced here (the problem files are
the same by sha256 wherever they are read from)."""


class SampleError(ValueError):
    """One sample cannot be re-graded (the message says why): it fails alone."""


@dataclass(frozen=True)
class SharedLog:
    """A log to verify: where it is, its content, and the config its scorer recorded."""

    path: Path
    log: EvalLog
    recorded: dict[str, Any]
    """The scorer's config as the log records it."""
    config: SciCodeConfig
    """``recorded`` with this machine's targets file, problem files and sandbox."""
    notes: tuple[str, ...]

    @property
    def task(self) -> str:
        return self.log.eval.task


@dataclass(frozen=True)
class Answers:
    """One sample's answers to grade, and the lines of what its store gets wrong."""

    sample: EvalSample
    problem: Problem
    completions: dict[str, str]
    codes: dict[str, str]
    """Each step's code as the solver would have kept it: extracted from its completion, the
    official code for a pre-supplied step."""
    differences: list[str] = field(default_factory=list)


def read_log(path: Path, h5: str | None = None, sandbox: str | None = None) -> SharedLog:
    """The log at ``path``, its recorded config checked; an ``InputError`` (one line) for a file
    that is not a scored scievals SciCode log within the bounds. ``h5`` and ``sandbox`` are this
    machine's (None: the default targets file, and our sandbox)."""
    header = read_header(path)
    task = header.eval.task
    if task == INSPECT_EVALS_TASK:
        raise InputError(
            f"{path} is an inspect_evals log: --verify checks scievals logs; drop --verify to "
            "re-grade it under the official rule"
        )
    if task not in TASKS:
        raise InputError(
            f"{path} is a log of task {task!r}: --verify checks logs of {', '.join(TASKS)} and "
            "scievals/scibench"
        )
    recorded = _recorded_config(path, header)
    if header.results is None or not header.results.scores:
        raise InputError(
            f"{path} holds no scores to verify (generated with --no-score?): score it with "
            "`inspect score` first"
        )
    notes = []
    if recorded.get("source", "package") != "package":
        notes.append(
            f"the run read its problem files from {recorded['source']}; read here from the "
            "package (the same files, by sha256)"
        )
    ran_in = recorded.get("sandbox")
    here = sandbox or "scievals"
    if ran_in != here:
        notes.append(f"the run's programs ran in sandbox {ran_in}; re-graded in {here}")
    if recorded.get("h5") and recorded["h5"] != h5:
        notes.append(
            f"the run's targets file {recorded['h5']} is not opened here: targets from "
            + (h5 or "$SCIEVALS_SCICODE_H5 or the cache")
        )
    try:
        config = SciCodeConfig.from_record({**recorded, **LOCAL, "h5": h5, "sandbox": here})
    except InputError as exc:
        lines = str(exc).splitlines()
        raise InputError(
            "\n".join(f"{path}: its scorer's recorded config: {line}" for line in lines)
        ) from None
    return SharedLog(path, read_bounded(path), recorded, config, tuple(notes))


def _recorded_config(path: Path, header: EvalLog) -> dict[str, Any]:
    for scorer in header.eval.scorers or []:
        if scorer.name.split("/")[-1] == SCORER:
            config = (scorer.options or {}).get("config")
            if isinstance(config, dict):
                return config
            break
    raise InputError(f"{path} records no {SCORER} with its config: not a log scievals scored")


def sample_answers(
    sample: EvalSample, problems: Mapping[str, Problem], config: SciCodeConfig
) -> Answers:
    """``sample``'s answers to grade; a ``SampleError`` when it is no SciCode sample of this
    split or holds no answers."""
    metadata = sample.metadata if isinstance(sample.metadata, dict) else {}
    problem_id = metadata.get("problem_id")
    if not isinstance(problem_id, str):
        raise SampleError("not a SciCode sample: its metadata has no problem_id")
    if problem_id not in problems:
        raise SampleError(f"problem {problem_id!r} is not a problem of split {config.split}")
    if str(sample.id) != problem_id:
        raise SampleError(f"its id is not its problem_id {problem_id!r}")
    problem = problems[problem_id]
    completions, codes = _kept(sample, problem, config)
    answers = Answers(sample, problem, {}, {})
    scored = [s.step_id for s in problem.scored_steps]
    if metadata.get("steps") != scored:
        answers.differences.append(
            f"its metadata lists steps {metadata.get('steps')!r}, its problem scores {scored}"
        )
    asked = [last_step(problem)] if config.whole_problem else list(problem.steps)
    names = {s.step_id for s in asked} | {s.step_id for s in problem.steps if not s.scored}
    for extra in sorted((set(completions) | set(codes)) - names):
        answers.differences.append(f"an answer for {extra}, which it was not asked: not graded")
    for step in problem.steps:
        sid = step.step_id
        if step.presupplied_code is not None:
            answers.codes[sid] = step.presupplied_code
            if sid in codes and codes[sid] != step.presupplied_code:
                answers.differences.append(
                    f"step {sid}: its stored code is not the official code of this pre-supplied "
                    "step: graded with the official code"
                )
            continue
        if step not in asked:
            continue
        if sid not in completions:
            if sid in codes:
                answers.differences.append(
                    f"step {sid}: a stored code and no completion: graded as unanswered"
                )
            continue
        code = extract(completions[sid], step.function_header, config.extraction)
        answers.completions[sid], answers.codes[sid] = completions[sid], code
        if codes.get(sid) != code:
            answers.differences.append(
                f"step {sid}: its stored code is not what its completion extracts to "
                f"(extraction={config.extraction}): graded from the completion"
            )
    return answers


def _kept(
    sample: EvalSample, problem: Problem, config: SciCodeConfig
) -> tuple[dict[str, str], dict[str, str]]:
    """The completions and codes the solver kept (a ``--solver`` answering a whole problem
    keeps none: its output is its answer, as the scorer reads it)."""
    kept = (sample.store or {}).get(STORE_KEY)
    if kept is None and config.whole_problem and sample.output is not None:
        completion = sample.output.completion
        code = extract(completion, last_step(problem).function_header, config.extraction)
        return {last_step(problem).step_id: completion}, {last_step(problem).step_id: code}
    if not isinstance(kept, dict):
        raise SampleError(f"its store holds no SciCode answers (store[{STORE_KEY!r}])")
    parts = kept.get("completions"), kept.get("codes")
    for name, part in zip(("completions", "codes"), parts, strict=True):
        if not isinstance(part, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in part.items()
        ):
            raise SampleError(f"its store's {name} are not step -> text")
    return parts[0], parts[1]  # type: ignore[return-value]
