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
Where the log goes, how it is written and when one is kept: ``scievals.regrade_logs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ModelOutput

from scievals.regrade_logs import NotResumed, regrade_log, regraded_model
from scievals.regrade_out import log_entry
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem
from scievals.scicode.data.targets_source import TargetSource
from scievals.scicode.metrics import scicode_epochs
from scievals.scicode.regrade.compare import difference_rows, source_scores
from scievals.scicode.regrade.scievals_log import SCORER
from scievals.scicode.scorer import scicode_scorer, summarize
from scievals.scicode.solver import STORE_KEY, extract
from scievals.scicode.task import problem_samples, task_metadata
from scievals.scicode.verdict import StepVerdict

TASK = "scievals/scicode"
UNANSWERED = (
    "no answer in the source: failed, as the official harness fails a step it has no code for"
)


def logged_verdicts(
    completions: Mapping[str, str],
) -> Callable[[EvalLog], dict[str, StepVerdict]]:
    """What a resumed re-grade reads of a run's log (``RegradeLogs.logged``): the verdicts of
    the steps answered, once the log's answers are found to be ``completions``."""

    def read(log: EvalLog) -> dict[str, StepVerdict]:
        kept: dict[str, str] = {}
        steps: dict[str, StepVerdict] = {}
        for sample in log.samples or []:
            kept.update((sample.store or {}).get(STORE_KEY, {}).get("completions", {}))
            score = (sample.scores or {}).get(SCORER)
            for verdict in (score.metadata or {}).get("steps", []) if score else []:
                steps[verdict["step"]] = StepVerdict(**verdict)
        if kept != dict(completions):
            raise NotResumed("its answers are not the source's now")
        return {sid: v for sid, v in steps.items() if sid in completions}

    return read


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
    return regrade_log(
        task=TASK,
        task_args={"split": config.split, "extraction": config.extraction},
        dataset="scicode",
        model=model,
        samples=samples,
        scorers=[scicode_scorer(config.record())],
        reducer=scicode_epochs(),
        metadata=metadata,
        source=source.get("source"),
        started=started,
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
