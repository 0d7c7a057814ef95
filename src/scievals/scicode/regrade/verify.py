"""``scievals regrade --verify LOG``: a scievals SciCode log re-graded sample by sample, and set
against what it claims.

Each sample is graded again by the scorer the log names (``scicode_scorer`` of the recorded
config), the code that made its recorded verdicts: it grades each protocol as the run did (gold
earlier steps, one answer to a whole problem, the steps an agent's limit ended), which
``grade()``, given completions alone, does not. Its answers are the raw completions extracted
again (``scievals_log``). What is compared, one line per difference: each step's verdict, as the
score's value and as its metadata record it, and the log's metrics against those of the
re-graded scores (``differences``); the log's protocol against this install's
(``protocol_check``); the samples the eval ran against those the log holds.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ModelName
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import TaskState

from scievals import regrade_verify
from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.regrade_out import counted
from scievals.regrade_verify import label, run_samples
from scievals.scicode.data.dataset import Problem
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.regrade.differences import metric_lines, step_lines
from scievals.scicode.regrade.protocol_check import check_protocol
from scievals.scicode.regrade.scievals_log import (
    SCORER,
    Answers,
    SampleError,
    SharedLog,
    sample_answers,
)
from scievals.scicode.scorer import scicode_scorer
from scievals.scicode.solver import STORE_KEY

CONCURRENT_SAMPLES = 8
"""Samples graded at once (their steps share the sandbox's execution slots, longest first)."""


@dataclass
class Verification(regrade_verify.Verification):
    """What ``--verify`` found, and each sample's steps as re-graded."""

    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Sample label -> its steps' verdicts as re-graded (``StepVerdict.as_dict()``)."""

    def graded(self) -> str:
        steps = sum(len(v) for v in self.verdicts.values())
        return f"{counted(len(self.verdicts), 'sample')}, {counted(steps, 'step')} re-graded"

    def details(self) -> dict[str, Any]:
        return {"verdicts": self.verdicts}


async def verify(shared: SharedLog) -> Verification:
    """Every difference between what ``shared`` records and what this install gives for it."""
    log, config = shared.log, shared.config
    missing = TargetSource(config.split, config.targets, config.h5, config.dataset).missing()
    if missing:
        raise ArtifactError(missing)
    try:
        model = ModelName(log.eval.model)
    except ValueError:
        raise InputError(f"{shared.path}: {log.eval.model!r} is no Inspect model name") from None
    result = Verification(shared.path, notes=list(shared.notes))
    protocol, machine = check_protocol(shared)
    result.differences += protocol
    result.notes += machine
    problems = {p.problem_id: p for p in config.problems()}
    epochs = log.eval.config.epochs or 1
    ids = log.eval.dataset.sample_ids
    ran = [str(i) for i in ids] if ids is not None else list(problems)
    if set(ran) != set(problems):
        steps = sum(len(problems[i].scored_steps) for i in ran if i in problems)
        result.notes.append(
            f"the eval ran {len(ran)} of the {len(problems)} problems of split {config.split} "
            f"({steps} steps): its metrics are over those"
        )
    answers, unverified = _answers(shared, problems, ran, epochs, result)
    scores = await _regrade(answers, config.record(), model)
    by_id: dict[str, list[tuple[int, Score]]] = defaultdict(list)
    for answer, regraded in zip(answers, scores, strict=True):
        name = label(answer.sample, epochs)
        result.differences += [f"{name}: {line}" for line in answer.differences]
        if isinstance(regraded, str):
            result.differences.append(f"{name}: {regraded}")
            unverified += 1
            continue
        result.verdicts[name] = list((regraded.metadata or {}).get("steps", []))
        recorded = (answer.sample.scores or {}).get(SCORER)
        result.differences += step_lines(name, recorded, regraded)
        by_id[str(answer.sample.id)].append((answer.sample.epoch, regraded))
    if unverified:
        result.differences.append(
            f"metrics: not recomputed: {unverified} of the run's samples were not re-graded (above)"
        )
    else:
        result.differences += metric_lines(shared.log, by_id)
    return result


def _answers(
    shared: SharedLog,
    problems: Mapping[str, Problem],
    ran: list[str],
    epochs: int,
    result: Verification,
) -> tuple[list[Answers], int]:
    """The samples to re-grade, in the order the eval ran them, and how many of the run's could
    not be; a line for each sample left out, and for each one the eval ran that the log lacks."""
    answers: list[Answers] = []
    unverified = 0
    for sample in run_samples(shared.log, ran, result):
        try:
            answers.append(sample_answers(sample, problems, shared.config))
        except SampleError as exc:
            result.differences.append(f"{label(sample, epochs)}: {exc}: not re-graded")
            unverified += 1
    return answers, unverified


async def _regrade(
    answers: list[Answers], record: dict[str, Any], model: ModelName
) -> list[Score | str]:
    """Each sample's score from the log's scorer, or the line saying why it has none."""
    score = scicode_scorer(record)
    slots = asyncio.Semaphore(CONCURRENT_SAMPLES)

    async def one(answer: Answers) -> Score | str:
        sample = answer.sample
        store = {
            **(sample.store or {}),
            STORE_KEY: {"completions": answer.completions, "codes": answer.codes},
        }
        target = sample.target if isinstance(sample.target, str | list) else ""
        state = TaskState(
            model=model,
            sample_id=sample.id,
            epoch=sample.epoch,
            input=sample.input,
            messages=[],
            target=Target(target),
            output=sample.output,
            metadata=sample.metadata,
            store=store,
        )
        async with slots:
            try:
                regraded = await score(state, Target(target))
            except (InputError, ArtifactError, FileNotFoundError):
                raise  # this machine's setup (sandbox, targets): one line for the whole log
            except Exception as exc:  # the sample's own content; the others go on
                first = (str(exc).splitlines() or [""])[0][:200]
                return f"could not be re-graded: {type(exc).__name__}: {first}"
        return regraded

    return list(await asyncio.gather(*[one(a) for a in answers]))
