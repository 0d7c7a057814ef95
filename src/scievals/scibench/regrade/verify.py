"""``scievals regrade --verify LOG`` of a scievals SciBench log: every sample graded again and
set against what the log claims.

Each sample is graded again by the scorers the log records (``faithful``, ``robust``,
``opencompass``, with their recorded arguments) from its logged completion, against the gold of
this install's dataset of the run's parameters; no model is called. In the Python setting each
reply's program is run again in the scievals sandbox (``sample_check``). What is compared, one
line per difference: each sample's each score (value, answer, rule and the rest of its
metadata); what each sample records of its problem against the dataset; the samples the eval
ran against those the log holds (a missing one, one it did not run, one given twice); the log's
metrics against those of the re-graded scores, each sample's epochs reduced by the task's
reducer; the protocol against this install's (``protocol_check``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score
from inspect_ai.util import SandboxEnvironment

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError
from scievals.regrade_out import VERIFY_FILE, counted, out_file
from scievals.regrade_verify import (
    Verification,
    conclude,
    label,
    metric_differences,
    metric_values,
    run_samples,
)
from scievals.scibench.config import DEFAULT_SANDBOX
from scievals.scibench.metrics import scibench_epochs, scibench_metrics
from scievals.scibench.regrade.own_log import TASK, OwnLog, read_log
from scievals.scibench.regrade.protocol_check import check_protocol
from scievals.scibench.regrade.sample_check import Regraded, recorded_lines, regrade, score_line

CONCURRENT_SAMPLES = 8
"""Samples graded at once (a Python setting's programs share the sandbox's execution slots)."""
REDUCER = "scibench_epochs"
REFUSED = ("--split", "--h5", "--timeout", "--log-dir", "--resume")
"""Options of the other sources: a SciBench log is verified under its own protocol, writing no
log."""


@dataclass
class SciBenchVerification(Verification):
    """What ``--verify`` found, and each sample's scores as re-graded."""

    scorers: tuple[str, ...] = ()
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Sample label -> scorer -> its re-graded value, answer and rule."""
    rerun: int = 0
    not_rerun: int = 0

    def graded(self) -> str:
        done = f"{counted(len(self.scores), 'sample')} re-graded by {', '.join(self.scorers)}"
        if self.rerun:
            done += f", {counted(self.rerun, 'program')} run again"
        if self.not_rerun:
            done += f", {counted(self.not_rerun, 'program')} not run again"
        return done

    def details(self) -> dict[str, Any]:
        return {"scores": self.scores}


def verify_scibench(ns: argparse.Namespace) -> int:
    """``--verify LOG`` of a SciBench log: every difference a line on stdout, exit status 1 if
    any; ``--out DIR`` gets ``verify.json``. Data from ``--data-dir``, else
    ``SCIEVALS_SCIBENCH_DIR``, else the cache."""
    from scievals.grade_out import Interrupts

    flags = {f: getattr(ns, f[2:].replace("-", "_"), None) for f in REFUSED}
    given = [f for f, value in flags.items() if value] + (
        ["--version"] if getattr(ns, "version", "auto") != "auto" else []
    )
    if given:
        raise InputError(
            f"{ns.source} is a SciBench log: --verify grades under its own protocol: drop "
            + " and ".join(given)
        )
    if getattr(ns, "sandbox", None) not in (None, DEFAULT_SANDBOX):
        raise InputError(
            f"--verify runs a SciBench log's programs in the {DEFAULT_SANDBOX} sandbox: drop "
            f"--sandbox {ns.sandbox}"
        )
    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite, VERIFY_FILE)
    own = read_log(Path(ns.source), getattr(ns, "data_dir", None))
    config = own.config
    say(
        f"verifying {own.path}: {TASK}, data {config.version}, setting {config.setting}, "
        f"{counted(len(own.log.samples or []), 'sample')}, scorers {', '.join(own.scorers)}"
    )
    if config.setting == "python":
        from scievals.sandbox import prestart

        prestart()
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            result = stop.run(verify(own))
        finally:
            stop.said()
    about = {"log": str(own.path), "task": TASK, "parameters": own.params, "scorers": own.records}
    return conclude(say, result, target, about)


async def verify(own: OwnLog) -> SciBenchVerification:
    """Every difference between what ``own`` records and what this install gives for it."""
    result = SciBenchVerification(own.path, notes=list(own.notes), scorers=tuple(own.scorers))
    protocol, machine = check_protocol(own)
    result.differences += protocol
    result.notes += machine
    dataset = {str(s.id): s for s in own.task.dataset}
    samples, unverified = _samples(own, dataset, result), 0
    if own.config.setting == "python":
        from scievals.sandbox import session

        async with session() as box:
            regraded = await _regrade(own, samples, dataset, box)
    else:
        regraded = await _regrade(own, samples, dataset, None)
    epochs = own.log.eval.config.epochs or 1
    by_id: dict[str, dict[str, list[tuple[int, Score]]]] = defaultdict(lambda: defaultdict(list))
    for sample, done in zip(samples, regraded, strict=True):
        name = label(sample, epochs)
        if isinstance(done, str):
            result.differences.append(f"{name}: {done}")
            unverified += 1
            continue
        _compared(name, sample, done, result)
        for scorer, score in done.scores.items():
            by_id[scorer][str(sample.id)].append((sample.epoch, score))
    if unverified:
        result.differences.append(
            f"metrics: not recomputed: {unverified} of the run's samples were not re-graded (above)"
        )
        return result
    metadata = {sid: dict(s.metadata or {}) for sid, s in dataset.items()}
    for scorer in own.scorers:
        ours = metric_values(scibench_metrics(), scibench_epochs(), by_id[scorer], metadata)
        result.differences += metric_differences(
            own.log, scorer, REDUCER, ours, prefix=f"metric {scorer}"
        )
    return result


def _compared(name: str, sample: EvalSample, done: Regraded, result: SciBenchVerification) -> None:
    """The lines of one re-graded sample: what it records otherwise, score by score."""
    result.differences += [f"{name}: {line}" for line in done.differences]
    result.notes += [f"{name}: {note}" for note in done.notes]
    result.rerun += done.rerun is True
    result.not_rerun += done.rerun is False
    logged = sample.scores or {}
    for scorer, score in done.scores.items():
        line = score_line(scorer, logged.get(scorer), score)
        if line is not None:
            result.differences.append(f"{name} {line}")
    for scorer in logged:
        if scorer not in done.scores:
            result.differences.append(
                f"{name}: a score of {scorer}, a scorer the log does not name"
            )
    result.scores[name] = {
        scorer: {"value": s.value, "answer": s.answer, "rule": (s.metadata or {}).get("rule")}
        for scorer, s in done.scores.items()
    }


def _samples(
    own: OwnLog, dataset: dict[str, Any], result: SciBenchVerification
) -> list[EvalSample]:
    """The samples to re-grade, in the order the eval ran them; a line for each sample left
    out, and for each one the eval ran that the log lacks."""
    log = own.log
    ids = log.eval.dataset.sample_ids
    ran = [str(i) for i in ids] if ids is not None else list(dataset)
    if set(ran) != set(dataset):
        result.notes.append(
            f"the eval ran {len(ran)} of the {len(dataset)} samples of its dataset: its metrics "
            "are over those"
        )
    result.differences += [
        f"sample {sid}: the eval ran it; this install's dataset of the run's parameters has none"
        for sid in ran
        if sid not in dataset
    ]
    return list(run_samples(log, [sid for sid in ran if sid in dataset], result))


async def _regrade(
    own: OwnLog, samples: list[EvalSample], dataset: dict[str, Any], box: SandboxEnvironment | None
) -> list[Regraded | str]:
    """Each sample re-graded, or the line saying why it is not."""
    slots = asyncio.Semaphore(CONCURRENT_SAMPLES)

    async def one(sample: EvalSample) -> Regraded | str:
        ours = dataset[str(sample.id)]
        async with slots:
            try:
                done = await regrade(sample, ours, own.scorers, own.config, box)
            except (InputError, ArtifactError, FileNotFoundError):
                raise  # this machine's setup (sandbox, data): one line for the whole log
            except Exception as exc:  # the sample's own content; the others go on
                first = (str(exc).splitlines() or [""])[0][:200]
                return f"could not be re-graded: {type(exc).__name__}: {first}"
        done.differences[:0] = recorded_lines(sample, ours, own.config)
        return done

    return list(await asyncio.gather(*[one(s) for s in samples]))
