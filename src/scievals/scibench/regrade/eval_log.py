"""A re-graded OpenCompass run written as a scievals log: ``scievals report`` reads it and
``inspect view`` shows it.

The log is the one ``scievals/scibench`` would write for the run: the task built with the
parameters that reproduce it (``setting`` its prompt's, the data version its predictions fit,
the books graded, ``scorer=all``: the three scorers the re-grade grades by), the task's protocol
record and samples, one per problem graded with the source's reply as the model's output, each
scored by the task's own scorers, and the metrics Inspect computes of them. Two things tell it
from a live run: its model is ``regrade/<source model>``, and its metadata's ``regrade`` names
the source, what OpenCompass recorded and each problem judged differently. Where it goes, how it
is written and when one is kept: ``scievals.regrade_logs``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessageAssistant, ModelName, ModelOutput
from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState

from scievals.regrade_logs import NotResumed, recorded_scorers, regrade_log, regraded_model
from scievals.regrade_out import log_entry
from scievals.scibench.config import SciBenchConfig
from scievals.scibench.dataset import BOOKS
from scievals.scibench.regrade.compare import difference_rows, source_scores
from scievals.scibench.regrade.grading import Graded, Item, Verdicts
from scievals.scibench.regrade.layout import VARIANTS
from scievals.scibench.scorer import scorers
from scievals.scibench.task import scibench

TASK = "scievals/scibench"
SCORER = "all"
"""The task's ``scorer``: faithful, robust and opencompass, the re-grade's three."""
Key = tuple[str, int]
"""A problem: (book, index)."""


def graded_by() -> list[Scorer]:
    """The scorers every re-graded run's log records."""
    return scorers(SciBenchConfig(scorer=SCORER))


def run_task(
    replies: Mapping[Key, str], prompt_type: str, version: str, data_dir: str | None
) -> Task:
    """The task a live run of these problems under OpenCompass's ``prompt_type`` would be."""
    graded = {book for book, _ in replies}
    return scibench(
        version=version,
        books=[b for b in BOOKS if b in graded],
        setting=VARIANTS[prompt_type],
        scorer=SCORER,
        data_dir=data_dir,
    )


def logged_verdicts(
    task: Task, replies: Mapping[Key, str]
) -> Callable[[EvalLog], dict[Key, Verdicts]]:
    """What a resumed re-grade reads of a run's log (``RegradeLogs.logged``): each problem's
    verdicts, as the lines ``grade_lines`` writes (the parsed answer as the text its Score
    keeps, as the comparison writes it), once the log is of ``task``'s protocol and ``replies``."""
    protocol = (task.metadata or {})["protocol"]

    def read(log: EvalLog) -> dict[Key, Verdicts]:
        if (log.eval.metadata or {}).get("protocol") != protocol:
            raise NotResumed("graded under other options (its protocol is not this re-grade's)")
        kept: dict[Key, str] = {}
        verdicts: dict[Key, Verdicts] = {}
        for sample in log.samples or []:
            key = (sample.metadata["book"], sample.metadata["index"])
            kept[key] = sample.output.completion
            verdicts[key] = {name: _line(key, s) for name, s in (sample.scores or {}).items()}
        if kept != dict(replies):
            raise NotResumed("its answers are not the source's now")
        return verdicts

    return read


def _line(key: Key, score: Score) -> dict[str, Any]:
    """A scorer's Score as the line ``scievals grade scibench --scorer`` writes."""
    meta = score.metadata or {}
    return {
        "book": key[0],
        "index": key[1],
        "correct": bool(score.value),
        "parsed": score.answer,
        "rule": meta["rule"],
        "extracted": meta["extracted"],
    }


def run_log(
    task: Task,
    graded: Graded,
    comparison: Mapping[str, Any],
    source: Mapping[str, Any],
    started: str,
) -> EvalLog:
    """The log of one re-graded run: ``graded``'s replies as ``task``'s samples, scored by its
    scorers; ``comparison`` is the run's (``compare``), whose source scores it records."""
    run = graded.run
    model = regraded_model(run.model)
    names = [s.name for s in recorded_scorers(task.scorer)]
    samples = asyncio.run(_samples(task, graded.items, names, model))
    metadata = dict(task.metadata or {})
    metadata["regrade"] = log_entry(
        source,
        run.label,
        run.model,
        comparison["source"],
        source_scores(comparison),
        difference_rows(comparison),
    )
    return regrade_log(
        task=TASK,
        task_args={
            "version": graded.version,
            "books": ",".join(metadata["books"]),
            "setting": VARIANTS[run.prompt_type],
            "scorer": SCORER,
        },
        dataset=task.dataset.name or "scibench",
        model=model,
        samples=samples,
        scorers=task.scorer,
        reducer=(task.epochs_reducer or [])[0],
        metadata=metadata,
        source=source.get("source"),
        started=started,
    )


async def _samples(
    task: Task, items: Sequence[Item], names: Sequence[str], model: str
) -> list[EvalSample]:
    """Each graded problem's sample as the task's solver and scorers would leave it."""
    by_id = {str(s.id): s for s in task.dataset}
    return [
        await _sample(by_id[i.record.sample_id], i.response, task.scorer, names, model)
        for i in items
    ]


async def _sample(
    base: Sample, reply: str, scorers: Sequence[Scorer], names: Sequence[str], model: str
) -> EvalSample:
    """One problem's sample: its prompt, the source's reply, and each scorer's Score of it."""
    assert isinstance(base.input, list) and base.id is not None
    messages = [*base.input, ChatMessageAssistant(content=reply, model=model)]
    output = ModelOutput.from_content(model, reply)
    target = Target(base.target)
    state = TaskState(
        ModelName(model),
        base.id,
        1,
        base.input,
        messages,
        target,
        output=output,
        metadata=base.metadata,
    )
    scores: dict[str, Score] = {}
    for name, scorer in zip(names, scorers, strict=True):
        score = await scorer(state, target)
        assert score is not None  # the SciBench scorers always score
        scores[name] = score
    return EvalSample(
        id=base.id,
        epoch=1,
        input=base.input,
        target=base.target,
        messages=messages,
        output=output,
        scores=scores,
        metadata=base.metadata or {},
    )
