"""Each run of a source graded through ``scicode.grade`` (the one grader) and compared.

The official folder holds code its generator already extracted (first ```python block, import
lines deleted). ``grade`` extracts again, so the rule chosen is the one that leaves that code as
it is: ``original`` (code with no fence is kept whole, and its import-line deletion finds nothing
left to delete), where ``inspect`` would strip the code's surrounding blank space and delete any
``` in it. The rest is the official rule as ``scievals grade`` applies it: the official step
count (pre-supplied steps get the official code and are never scored), the step timeout, the
targets (official h5 for test steps, regenerated for dev steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from scievals.regrade_logs import RegradeLogs, now
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem, Split, Step, load_problems
from scievals.scicode.grade import grade, infer_split, summary, verdict_line
from scievals.scicode.grading.schedule import StepCache
from scievals.scicode.regrade.compare import Graded, compare
from scievals.scicode.regrade.eval_log import logged_verdicts, run_log
from scievals.scicode.regrade.official_folder import (
    Answer,
    Run,
    Source,
    read_step_file,
    relative,
    step_answers,
)
from scievals.scicode.regrade.partial_run import PartialRun
from scievals.scicode.verdict import StepVerdict

EXTRACTION = "original"


def choose_split(source: Source, split: Split | None) -> Split:
    """The split asked for, or the one the step files' known ids belong to."""
    if split is not None:
        return split
    known = {s.step_id for p in load_problems("all") for s in p.steps}
    return infer_split({sid for run in source.runs for sid in run.paths if sid in known})


def grading_config(
    split: Split, h5: str | None, timeout: int | None, sandbox: str
) -> SciCodeConfig:
    """The official rule for this split (its options checked before any file is read)."""
    return SciCodeConfig.from_params(
        split=split, h5=h5, timeout=timeout, extraction=EXTRACTION, sandbox=sandbox
    )


def source_jobs(
    source: Source, config: SciCodeConfig, say: Callable[[str], None] | None = None
) -> Iterator[RunJob]:
    """Every run of ``source`` as a job to grade under ``config`` (``compare.compare`` makes its
    comparison); ``say`` gets a line for each file skipped. A run's files are read when its
    turn comes, so a large folder streams."""
    problems = config.problems()
    catalogue = {s.step_id for p in load_problems("all") for s in p.steps}
    in_split = {s.step_id: s for p in problems for s in p.steps}
    for index, run in enumerate(source.runs):
        texts, skipped = _read_run(run, source, catalogue, in_split, config.split)
        if say is not None:
            for note in run.notes:
                say(f"{run.label}: {note}")
        answers: dict[str, Answer] = {}
        for problem in problems:
            answers.update(step_answers(problem, _of(problem, texts)))
        compared = partial(_compared, run, answers, skipped, problems, config, source.root)
        completions = {sid: answer.code for sid, answer in answers.items()}
        yield RunJob(index, run.label, completions, compared)


def _compared(
    run: Run,
    answers: dict[str, Answer],
    skipped: dict[str, str],
    problems: tuple[Problem, ...],
    config: SciCodeConfig,
    root: Path,
    verdicts: list[dict[str, Any]],
    totals: dict[str, Any],
) -> dict[str, Any]:
    graded = Graded(run, config.split, problems, answers, skipped, verdicts, totals)
    return compare(graded, config.step_timeout, root)


@dataclass(frozen=True)
class RunJob:
    """One run of a source to grade: its place and name in the re-grade, its completions (step
    -> code), and how its comparison is made of its verdicts and summary."""

    index: int
    label: str
    completions: dict[str, str]
    compared: Callable[[list[dict[str, Any]], dict[str, Any]], dict[str, Any]]


async def regrade_runs(
    jobs: Iterable[RunJob],
    config: SciCodeConfig,
    say: Callable[[str], None] | None = None,
    logs: RegradeLogs | None = None,
) -> list[dict[str, Any]]:
    """The comparison of each job, graded under ``config`` (or read back from its log,
    resuming); ``logs`` gets each run's log. The runs share one cache: a step program graded
    for one model is not run again for another."""
    cache = StepCache()
    return [await _regrade_run(job, config, cache, logs, say) for job in jobs]


async def _regrade_run(
    job: RunJob,
    config: SciCodeConfig,
    cache: StepCache,
    logs: RegradeLogs | None,
    say: Callable[[str], None] | None,
) -> dict[str, Any]:
    started = now()
    logged = partial_run = None
    if logs is not None:
        logged = logs.logged(job.index, job.label, logged_verdicts(job.completions))
        log_path = logs.path(job.index, job.label)
        partial_run = PartialRun(log_path, job.label, job.completions, config)
    if logged is not None:
        verdicts, totals, kept = graded_before(logged, config)
    else:
        verdicts, totals, kept = await grade_run(
            job.completions, config, cache, partial_run, logs is not None and logs.resume, say
        )
    comparison = job.compared(verdicts, totals)
    if logs is not None:
        written = partial(run_log, config, logs.source, comparison, job.completions, kept, started)
        logs.keep(job.index, comparison, written if logged is None else None)
        if partial_run is not None:
            partial_run.close(done=True)
    if say is not None:
        done = "logged before: not graded again" if logged is not None else "graded"
        say(f"{job.label}: {len(verdicts)} steps {done}")
    return comparison


RunGrades = tuple[list[dict[str, Any]], dict[str, Any], dict[str, StepVerdict]]
"""A run's verdicts (as ``grade`` gives them), its summary and its whole verdicts."""


def graded_before(verdicts: Mapping[str, StepVerdict], config: SciCodeConfig) -> RunGrades:
    """A run's verdicts read back from its log (a resumed re-grade), as ``grade`` gives them."""
    problems = config.problems()
    by_step = {sid: verdict_line(v) for sid, v in verdicts.items()}
    ordered = [by_step[s.step_id] for p in problems for s in p.scored_steps if s.step_id in by_step]
    return ordered, summary(problems, by_step), dict(verdicts)


async def grade_run(
    completions: dict[str, str],
    config: SciCodeConfig,
    cache: StepCache,
    partial_run: PartialRun | None = None,
    resume: bool = False,
    say: Callable[[str], None] | None = None,
) -> RunGrades:
    """A run graded through ``cache``; each whole verdict goes to ``partial_run`` as it is
    decided, and with ``resume`` the verdicts an interrupted re-grade of the same run kept
    there are not graded again."""
    kept = partial_run.read() if partial_run is not None and resume else {}
    kept = {sid: v for sid, v in kept.items() if sid in completions}
    if kept and say is not None:
        say(f"resuming: {len(kept)} verdicts kept from an interrupted re-grade")
    if not completions:
        return [], summary(config.problems(), {}), kept
    decided = {sid: verdict_line(v) for sid, v in kept.items()}

    def graded(whole: StepVerdict) -> None:
        kept[whole.step] = whole
        if partial_run is not None:
            partial_run.add(whole)

    if partial_run is not None:
        partial_run.start(kept)
    try:
        verdicts, totals = await grade(
            completions, config, decided=decided, cache=cache, on_whole=graded
        )
    finally:
        if partial_run is not None:
            partial_run.close(done=False)
    return verdicts, totals, kept


def _read_run(
    run: Run, source: Source, catalogue: set[str], in_split: dict[str, Step], split: Split
) -> tuple[dict[str, str], dict[str, str]]:
    """The text of each step file to grade, and why each other step file is not graded (a
    line for each in ``run.notes``)."""
    texts: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for sid, path in run.paths.items():
        if sid not in catalogue:
            why = f"no step {sid} in SciCode"
        elif sid not in in_split:
            why = f"{sid} is not a step of split {split}"
        elif not in_split[sid].scored:
            why = f"{sid} is pre-supplied: never scored under the official rule"
        else:
            text, why = read_step_file(path, source.root)
            if text is not None:
                texts[sid] = text
                continue
        skipped[sid] = why or "not read"
        run.notes.append(f"{relative(path, source.root)}: {skipped[sid]}: skipped")
    return texts, skipped


def _of(problem: Problem, texts: dict[str, str]) -> dict[str, str]:
    return {s.step_id: texts[s.step_id] for s in problem.steps if s.step_id in texts}
