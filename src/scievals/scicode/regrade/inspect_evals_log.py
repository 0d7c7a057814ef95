"""An inspect_evals ``scicode`` log read back as completions: one assistant reply per step.

inspect_evals asks every step of a problem in one chat (spec scicode.md §2): a system message,
the problem id as the first user message, then per step (the pre-supplied 13.6, 62.1 and 76.3
included) a user message and the model's reply. Its scorer extracts the code of the k-th
assistant reply as step k's and records, per problem, ``{step: 1.0|0.0}`` for every step (291
test / 341 with the dev set). Task version 3-A (inspect_evals 0.24.0 to 0.28.0) extracts as
scievals' ``inspect`` rule but for a stray label line; 2-A (0.23.0 and earlier) deleted the
fence markers only.

A log is untrusted input: the file is bounded before Inspect reads it
(``inputs.unreadable_log``), a file that is no inspect_evals SciCode log is refused with one
line, and a sample whose shape is not that task's (another task's sample, an unknown problem,
replies that do not match its steps, a malformed score) fails alone with one line. Paths the log
names are never opened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from scievals.inputs import InputError, unreadable_log
from scievals.regrade_verify import read_bounded
from scievals.scicode.data.dataset import Problem
from scievals.scicode.extract import extract_code
from scievals.scicode.regrade.scievals_log import INSPECT_EVALS_TASK, TASKS, SampleError

TASK = INSPECT_EVALS_TASK
SCORER = "verify"
EXTRACTION_3A = 3
"""The first task version whose extraction is the fenced-block rule (``extract_code``)."""
CMP_IMPORT = "scicode.compare.cmp"
_JSON_LOG = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


@dataclass(frozen=True)
class SourceSample:
    """One sample (problem and epoch) as the source ran it."""

    problem: Problem
    epoch: int
    replies: dict[str, str]
    """Step -> the raw assistant reply to it (every step, pre-supplied ones included)."""
    scores: dict[str, bool] | None
    """Step -> the source's verdict, as its score records it (None: not scored)."""
    cmp_tests: frozenset[str]
    """Steps whose tests, as the source held them, import ``scicode.compare.cmp``."""


@dataclass(frozen=True)
class SourceLog:
    path: Path
    model: str
    version: str
    """The task version the log records (``3-A``), or what is known of it."""
    rule: int
    """Which extraction the source ran: 3 (3-A's blocks) or 2 (fence markers deleted)."""
    timeout: int | None
    """The source's seconds per step program (its task argument)."""
    epochs: int
    samples: tuple[SourceSample, ...]
    notes: tuple[str, ...]
    """A line for each sample not read, and for what the log does not record."""


def is_inspect_log(path: Path) -> bool:
    """Whether ``path`` claims to be an Inspect log: a ``.eval`` file, or a ``.json`` file that
    begins as Inspect writes one (its content, not a guess from the name alone)."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        with path.open("rb") as file:
            return bool(_JSON_LOG.match(file.read(4096)))
    except OSError:
        return False


def source_extract(reply: str, function_header: str, rule: int) -> str:
    """The code the source's scorer ran for a reply: 3-A's block rule (scievals' ``inspect``,
    the same but for a stray label line) or 2-A's fence-marker deletion."""
    if rule >= EXTRACTION_3A:
        return extract_code(reply, function_header)
    return reply.replace("```python", "").replace("```", "").strip()


def read_inspect_evals_log(path: Path, problems: Mapping[str, Problem]) -> SourceLog:
    """The log at ``path`` with its samples' replies and verdicts; ``problems`` are SciCode's
    (all 80). An ``InputError`` (one line) when the file is not an inspect_evals SciCode log."""
    why = unreadable_log(path)
    if why is not None:
        raise InputError(f"{path}: {why}")
    header = read_bounded(path, header_only=True)
    task = header.eval.task
    if task in TASKS:
        raise InputError(
            f"{path} is a scievals log: `scievals regrade --verify {path}` re-grades it and "
            "checks what it records"
        )
    if task != TASK:
        raise InputError(f"{path} is a log of task {task!r}, not of {TASK}")
    log = read_bounded(path)
    if not log.samples:
        raise InputError(f"{path} holds no samples to re-grade (written without them?)")
    version, rule = _version(log)
    notes = []
    if rule > EXTRACTION_3A:
        notes.append(f"task version {version}: its extraction is taken to be 3-A's")
    scored = any(s.scores for s in log.samples)
    if not scored:
        notes.append("the log holds no scores (generated with --no-score?): nothing to compare")
    samples = []
    seen: set[tuple[str, int]] = set()
    for sample in log.samples:
        try:
            if (str(sample.id), sample.epoch) in seen:
                raise SampleError("given twice")
            seen.add((str(sample.id), sample.epoch))
            samples.append(_sample(sample, problems, scored, rule))
        except SampleError as exc:
            notes.append(f"sample {sample.id!s:.40} epoch {sample.epoch}: {exc}: not re-graded")
    timeout = (log.eval.task_args or {}).get("timeout", 300)
    return SourceLog(
        path,
        log.eval.model,
        version,
        rule,
        timeout if isinstance(timeout, int) else None,
        log.eval.config.epochs or 1,
        tuple(samples),
        tuple(notes),
    )


def _version(log: EvalLog) -> tuple[str, int]:
    """The recorded task version and the extraction rule it implies."""
    full = (log.eval.metadata or {}).get("full_task_version")
    number = log.eval.task_version
    if isinstance(full, str) and re.fullmatch(r"\d+-[A-Z]", full):
        return full, int(full.split("-")[0])
    if isinstance(number, int) and number > 0:
        return str(number), number
    return "unversioned (2-A or earlier)", 2


def _sample(
    sample: EvalSample, problems: Mapping[str, Problem], scored: bool, rule: int
) -> SourceSample:
    metadata = sample.metadata if isinstance(sample.metadata, dict) else {}
    problem_id, sub_steps = metadata.get("problem_id"), metadata.get("sub_steps")
    if not isinstance(problem_id, str) or not isinstance(sub_steps, list):
        raise SampleError("not a SciCode sample (its metadata has no problem_id and sub_steps)")
    if problem_id not in problems:
        raise SampleError(f"no SciCode problem {problem_id!r}")
    if str(sample.id) != problem_id:
        raise SampleError(f"its id is not its problem_id {problem_id!r}")
    if sample.error is not None:
        raise SampleError("an error ended it in the source's run")
    problem = problems[problem_id]
    steps = [s.step_id for s in problem.steps]
    numbers = [s.get("step_number") if isinstance(s, dict) else None for s in sub_steps]
    if numbers != steps:
        raise SampleError(f"its steps are not problem {problem_id}'s ({', '.join(steps)})")
    replies = [m.text for m in sample.messages if m.role == "assistant"]
    if len(replies) != len(steps):
        raise SampleError(f"{len(replies)} replies to its {len(steps)} steps")
    cmp_tests = frozenset(
        sid
        for sid, raw in zip(steps, sub_steps, strict=True)
        if isinstance(tests := raw.get("test_cases"), list)
        and any(isinstance(t, str) and CMP_IMPORT in t for t in tests)
    )
    return SourceSample(
        problem,
        sample.epoch,
        dict(zip(steps, replies, strict=True)),
        _scores(sample, steps) if scored else None,
        cmp_tests,
    )


def _scores(sample: EvalSample, steps: list[str]) -> dict[str, bool]:
    """The source's verdict of each step: its score's value ``{step: 1.0|0.0}``."""
    score = (sample.scores or {}).get(SCORER)
    value: Any = score.value if score is not None else None
    if not isinstance(value, dict):
        raise SampleError(f"no {SCORER} score of its steps")
    if sorted(value) != sorted(steps) or any(v not in (0, 1) for v in value.values()):
        raise SampleError(f"its score is not 1.0 or 0.0 for each of its steps: {value!r:.80}")
    return {sid: value[sid] == 1 for sid in steps}
