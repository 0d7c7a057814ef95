"""A re-graded run written as a scievals log: ``scievals report`` reads it, ``inspect view``
shows it, and ``scievals regrade --verify`` checks it.

The log is the one the task would write for the run under the official-rule config: task
``scievals/scicode``, the task's own protocol record (``task.task_metadata``) and scorer
(``scicode_scorer`` of the config's record), one sample per problem of the split with the
source's answers as the assistant's replies and in the store as the solver keeps them, each
Score made by the scorer's rule (``scorer.summarize``), and the metrics Inspect computes of them.
Two things tell it from a live run: its model is ``regrade/<source model>``, and its metadata's
``regrade`` names the source and the score the source recorded.

A step the source holds no answer for fails unrun, as the official harness fails a step without
a file (the comparison's "no file"): its problem is counted, as the official rule counts it.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from inspect_ai._eval.task.results import (  # inspect-evals-lint: ignore[IECQ001] -- no public API computes a log's results from its scores
    eval_results,
)
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalSpec,
    EvalStats,
    read_eval_log,
    write_eval_log,
)
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ModelOutput
from inspect_ai.scorer import SampleScore
from inspect_ai.util import registry_info

from scievals.inputs import InputError
from scievals.regrade_out import log_entry
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.metrics import METRICS, scicode_epochs
from scievals.scicode.regrade.compare import difference_rows, source_scores
from scievals.scicode.regrade.scievals_log import SCORER
from scievals.scicode.scorer import scicode_scorer, summarize
from scievals.scicode.solver import STORE_KEY, extract
from scievals.scicode.task import problem_samples, task_metadata
from scievals.scicode.verdict import StepVerdict

TASK = "scievals/scicode"
MODEL_PREFIX = "regrade"
"""A re-graded run's model is ``regrade/<source model>``: never a live run's name."""
AGAIN = "pass --overwrite to grade it again"
UNANSWERED = (
    "no answer in the source: failed, as the official harness fails a step it has no code for"
)


def regraded_model(model: str) -> str:
    return f"{MODEL_PREFIX}/{model}"


@dataclass
class RegradeLogs:
    """Where a re-grade writes a log per run (``--log-dir``), each whole once its run is graded."""

    folder: Path
    config: SciCodeConfig
    source: dict[str, Any]
    """What the source is (path, layout, task version), for each log's ``regrade`` entry."""
    overwrite: bool = False
    resume: bool = False
    """A run whose log is written already (by an interrupted re-grade) is not graded again."""
    written: list[Path] = field(default_factory=list)
    resumed: list[Path] = field(default_factory=list)

    def path(self, index: int, run: str) -> Path:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", run).strip("-.")[:80] or "run"
        return self.folder / f"regrade-{index + 1:03d}-{slug}.eval"

    def claim(self, runs: Sequence[str]) -> None:
        """Before any grading: every run's log can be written (one line when not)."""
        if self.folder.exists() and not self.folder.is_dir():
            raise InputError(f"--log-dir {self.folder} is not a folder")
        taken = [(p, run) for i, run in enumerate(runs) if (p := self.path(i, run)).exists()]
        if taken and not (self.overwrite or self.resume):
            more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise InputError(
                f"{taken[0][0]} exists{more}: pass --resume to keep the runs logged, or "
                "--overwrite to replace them"
            )
        if self.resume:
            for path, run in taken:
                why = self._foreign(path, run)
                if why is not None:
                    raise InputError(f"{path}: {why}: not resumed ({AGAIN})")

    def _foreign(self, path: Path, run: str) -> str | None:
        """Why the log at ``path`` is not this re-grade's log of ``run``, or None."""
        try:
            header = read_eval_log(str(path), header_only=True)
        except Exception as exc:  # a damaged file fails Inspect's reader in any of its ways
            return f"not a readable log ({(str(exc).splitlines() or [type(exc).__name__])[0]})"
        regrade = (header.eval.metadata or {}).get("regrade")
        scorers = [s.options for s in header.eval.scorers or [] if s.name == SCORER]
        if header.eval.task != TASK or not isinstance(regrade, dict):
            return "not a re-grade's log"
        if regrade.get("run") != run or any(regrade.get(k) != v for k, v in self.source.items()):
            return "the log of another source or run"
        if scorers != [{"config": self.config.record()}]:
            return "graded under other options"
        return None

    def logged(
        self, index: int, run: str, completions: Mapping[str, str]
    ) -> dict[str, StepVerdict] | None:
        """With ``resume``, the verdicts of the run's log written before (``claim`` checked
        it), for the steps answered; None when the run has no log yet."""
        path = self.path(index, run)
        if not (self.resume and path.exists()):
            return None
        kept: dict[str, str] = {}
        steps: dict[str, StepVerdict] = {}
        try:
            for sample in read_eval_log(str(path)).samples or []:
                kept.update((sample.store or {}).get(STORE_KEY, {}).get("completions", {}))
                score = (sample.scores or {}).get(SCORER)
                for verdict in (score.metadata or {}).get("steps", []) if score else []:
                    steps[verdict["step"]] = StepVerdict(**verdict)
        except Exception as exc:  # edited or damaged since ``claim``: any error of its content
            first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
            raise InputError(
                f"{path}: its samples cannot be read back ({first}): {AGAIN}"
            ) from None
        if kept != dict(completions):
            raise InputError(f"{path}: its answers are not the source's now: not resumed ({AGAIN})")
        self.resumed.append(path)
        return {sid: v for sid, v in steps.items() if sid in completions}

    def keep(
        self,
        index: int,
        comparison: dict[str, Any],
        completions: Mapping[str, str],
        verdicts: Mapping[str, StepVerdict],
        started: str,
        logged: bool = False,
    ) -> Path:
        """The run's log, written whole (never a half-written ``.eval`` for a report to read)
        unless ``logged`` before (a resumed re-grade); the comparison names it (``log``), so
        that ``regrade.json`` says which log is which run's."""
        target = self.path(index, str(comparison["run"]))
        if not logged:
            log = run_log(self.config, self.source, comparison, completions, verdicts, started)
            self.folder.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f".{target.name}.{os.getpid()}.part")
            write_eval_log(log, str(part), format="eval")
            os.replace(part, target)
            self.written.append(target)
        comparison["log"] = str(target)
        return target


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_log(
    config: SciCodeConfig,
    source: Mapping[str, Any],
    comparison: Mapping[str, Any],
    completions: Mapping[str, str],
    verdicts: Mapping[str, StepVerdict],
    started: str,
) -> EvalLog:
    """The log of one re-graded run: ``completions`` (step -> the source's answer) graded as
    ``verdicts``; ``comparison`` is the run's (``compare``), whose source score it records."""
    model = regraded_model(str(comparison["model"]))
    problems = config.problems()
    samples = [_sample(p, completions, verdicts, config, model) for p in problems]
    scorer = scicode_scorer(config.record())
    results = _results(samples, scorer)
    targets = TargetSource(config.split, config.targets, config.h5, config.dataset).note
    metadata = task_metadata(config, problems, targets)
    metadata["regrade"] = log_entry(
        source,
        str(comparison["run"]),
        str(comparison["model"]),
        comparison.get("source"),
        source_scores(comparison),
        difference_rows(comparison),
    )
    spec = EvalSpec(
        created=started,
        task=TASK,
        task_id=uuid.uuid4().hex[:22],
        run_id=uuid.uuid4().hex[:22],
        task_registry_name=TASK,
        task_args={"split": config.split, "extraction": config.extraction},
        dataset=EvalDataset(
            name="scicode", samples=len(samples), sample_ids=[s.id for s in samples]
        ),
        model=model,
        config=EvalConfig(epochs=1, epochs_reducer=["scicode_epochs"]),
        packages={"inspect_ai": version("inspect_ai"), "scievals": version("scievals")},
        scorers=[  # as Inspect records a task's scorer (its classes are not exported)
            {
                "name": SCORER,
                "options": {"config": config.record()},
                "metrics": [{"name": registry_info(m).name, "options": {}} for m in METRICS],
            }
        ],
        metadata=metadata,
    )
    plan = EvalPlan(
        name="regrade",
        steps=[EvalPlanStep(solver="scievals/regrade", params={"source": source.get("source")})],
    )
    stats = EvalStats(started_at=started, completed_at=now())
    return EvalLog(
        status="success", eval=spec, plan=plan, results=results, stats=stats, samples=samples
    )


def _sample(
    problem: Problem,
    completions: Mapping[str, str],
    verdicts: Mapping[str, StepVerdict],
    config: SciCodeConfig,
    model: str,
) -> EvalSample:
    """The problem's sample as the task's solver and scorer would leave it for these answers."""
    answered: dict[str, str] = {}
    codes: dict[str, str] = {}
    messages: list[ChatMessage] = []
    for step in problem.steps:
        sid = step.step_id
        if step.presupplied_code is not None:
            codes[sid] = step.presupplied_code
        elif sid in completions:
            answered[sid] = completions[sid]
            codes[sid] = extract(answered[sid], step.function_header, config.extraction)
            messages += [
                ChatMessageUser(content=f"step {sid} (re-graded: the source's reply)"),
                ChatMessageAssistant(content=answered[sid], model=model),
            ]
    steps = [
        verdicts.get(s.step_id) or StepVerdict(s.step_id, False, "missing_function", UNANSWERED)
        for s in problem.scored_steps
    ]
    (base,) = problem_samples((problem,))
    last = list(answered.values())[-1:]
    return EvalSample(
        id=problem.problem_id,
        epoch=1,
        input=base.input,
        target="",
        messages=messages,
        output=ModelOutput.from_content(model, last[0]) if last else ModelOutput(model=model),
        scores={SCORER: summarize(steps)},
        metadata=base.metadata,
        store={STORE_KEY: {"completions": answered, "codes": codes}},
    )


def _results(samples: Sequence[EvalSample], scorer: Any) -> EvalResults:
    """The results Inspect computes of the samples' scores, reduced as the task reduces them."""
    scores = [
        {SCORER: SampleScore(score=s.scores[SCORER], sample_id=s.id, sample_metadata=s.metadata)}
        for s in samples
        if s.scores
    ]
    results, _ = eval_results(
        samples=len(samples),
        scores=scores,
        reducers=[scicode_epochs()],
        scorers=[scorer],
        metrics=None,
        completed_samples=len(samples),
    )
    return results
