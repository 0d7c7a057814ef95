"""An inspect_evals SciCode log's replies graded under the official rule, and compared.

Each reply is a completion for ``scicode.grade`` (the one grader), extracted by the official
rule (``original``: first ```python block, import lines deleted), with the official step count:
the pre-supplied steps 13.6, 62.1 and 76.3, which inspect_evals asks and scores (291 / 341
steps), get their official code and are never scored (288 / 338). An epoch of the log is a run
of its own. The comparison is ``compare``'s, the causes those a log can show:

- ``pre-supplied``: a pre-supplied step the source scored;
- ``missing import``: the source held the step's tests with their ``scicode.compare.cmp``
  import lines (inspect_evals' dataset removes them only after reading them), which its sandbox
  cannot import;
- ``unpinned runtime``: the problem's dependencies import what the source's unpinned image lacks
  (``scipy.integrate.simps``, removed in SciPy 1.14; ``mpl_toolkits``: no matplotlib);
- ``extraction``: the source's extraction (its task version's) and the official rule's give
  other code for this step or an earlier one of its problem;
- ``pre-supplied code``: the source ran the model's own code for a pre-supplied step before it;
- ``timeout`` and ``targets``, as for the official folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from scievals.regrade_logs import RegradeLogs
from scievals.scicode.config import SciCodeConfig
from scievals.scicode.data.dataset import Problem, Split
from scievals.scicode.extract import original_extract
from scievals.scicode.grade import infer_split, summary
from scievals.scicode.grading.schedule import StepCache
from scievals.scicode.regrade.compare import (
    difference,
    differing_steps,
    official_scores,
    problem_row,
    recorded_scores,
    rule_cause,
)
from scievals.scicode.regrade.inspect_evals_log import SourceLog, SourceSample, source_extract
from scievals.scicode.regrade.official_folder import Recorded
from scievals.scicode.regrade.run import RunJob, regrade_run
from scievals.scicode.verdict import problem_solved

UNPINNED = {
    "simps": "scipy.integrate.simps, removed in SciPy 1.14",
    "mpl_toolkits": "mpl_toolkits, part of matplotlib, which its image does not install",
}
"""What a problem's dependencies import that inspect_evals' unpinned image lacks (spec §5)."""


def log_split(source: SourceLog, split: Split | None) -> Split:
    """The split asked for, or the smallest that holds the log's problems."""
    if split is not None:
        return split
    return infer_split({s for sample in source.samples for s in sample.replies})


async def regrade_log(
    source: SourceLog,
    config: SciCodeConfig,
    say: Callable[[str], None] | None = None,
    *,
    logs: RegradeLogs | None = None,
    cache: StepCache | None = None,
) -> list[dict[str, Any]]:
    """The comparison of each epoch of ``source``, graded under ``config``; ``logs`` gets each
    epoch's log. The epochs share ``cache``: a step program one of them graded is not run
    again."""
    cache = cache if cache is not None else StepCache()
    place = {p.problem_id: i for i, p in enumerate(config.problems())}
    outside = sorted({s.problem.problem_id for s in source.samples} - set(place), key=int)
    if outside and say is not None:
        say(f"problems {', '.join(outside)} are not of split {config.split}: not graded")
    comparisons = []
    for index, epoch in enumerate(run_epochs(source)):
        samples = sorted(
            (s for s in source.samples if s.epoch == epoch and s.problem.problem_id in place),
            key=lambda s: place[s.problem.problem_id],
        )
        completions = {
            step.step_id: sample.replies[step.step_id]
            for sample in samples
            for step in sample.problem.scored_steps
        }
        compared = partial(_compared, source, epoch, samples, config)
        job = RunJob(index, run_label(source, epoch), completions, compared)
        comparisons.append(await regrade_run(job, config, cache, logs, say))
    return comparisons


def _compared(
    source: SourceLog,
    epoch: int,
    samples: Sequence[SourceSample],
    config: SciCodeConfig,
    verdicts: Sequence[dict[str, Any]],
    _totals: dict[str, Any],
) -> dict[str, Any]:
    return comparison(source, epoch, samples, verdicts, config)


def run_epochs(source: SourceLog) -> list[int]:
    """The log's epochs, in order: each is a run of its own."""
    return sorted({s.epoch for s in source.samples})


def run_label(source: SourceLog, epoch: int) -> str:
    """How the comparison, and the run's log, name an epoch's run."""
    return f"{source.model} ({source.version})" + (f" epoch {epoch}" if source.epochs > 1 else "")


def comparison(
    source: SourceLog,
    epoch: int,
    samples: Sequence[SourceSample],
    verdicts: Sequence[dict[str, Any]],
    config: SciCodeConfig,
) -> dict[str, Any]:
    """One epoch's comparison (plain JSON), over the problems the log holds."""
    problems = tuple(s.problem for s in samples)
    by_step = {v["step"]: v for v in verdicts}
    ours = official_scores(problems, by_step, summary(problems, by_step))
    recorded = _recorded(source, samples)
    theirs = recorded_scores(recorded, ours["steps_total"])
    order = [s.step_id for p in problems for s in p.steps]
    cause = partial(_cause, source, {s: x for x in samples for s in x.replies}, config)
    step_rows = differing_steps(recorded, order, by_step, cause)
    return {
        "run": run_label(source, epoch),
        "model": source.model,
        "task_version": source.version,
        "epoch": epoch,
        "split": config.split,
        "samples": len(samples),
        "graded_steps": len(verdicts),
        "presupplied": [
            {"step": s.step_id, "source": x.scores.get(s.step_id) if x.scores else None}
            for x in samples
            for s in x.problem.steps
            if not s.scored
        ],
        "source": theirs,
        "scievals": ours,
        "difference": difference(theirs, ours),
        "differing_steps": step_rows,
        "differing_problems": _differing_problems(samples, recorded, by_step, step_rows or []),
        "notes": list(source.notes),
        "verdicts": list(verdicts),
    }


def _recorded(source: SourceLog, samples: Sequence[SourceSample]) -> Recorded | None:
    """What the log's scores say, on its own count (pre-supplied steps included)."""
    scores = [(s.problem.problem_id, s.scores) for s in samples if s.scores is not None]
    if not scores:
        return None
    verdicts = {sid: ok for _, steps in scores for sid, ok in steps.items()}
    solved = frozenset(pid for pid, steps in scores if all(steps.values()))
    passed = frozenset(sid for sid, ok in verdicts.items() if ok)
    return Recorded(
        files=(source.path.name,),
        passed=passed,
        steps=(len(passed), len(verdicts)),
        problems=(len(solved), len(scores)),
        solved=solved,
        failed=frozenset(verdicts) - passed,
    )


def _cause(
    source: SourceLog,
    sample_of: Mapping[str, SourceSample],
    config: SciCodeConfig,
    sid: str,
    theirs: bool,
    verdict: dict[str, Any] | None,
) -> tuple[str | None, str]:
    """(kind, sentence) for a step the source and the official rule judge differently."""
    sample = sample_of[sid]
    problem = sample.problem
    index = [s.step_id for s in problem.steps].index(sid)
    step = problem.steps[index]
    if not step.scored:
        return (
            "pre-supplied",
            "pre-supplied step scored by the source; the official rule supplies its official "
            "code and never scores it",
        )
    if not theirs and sid in sample.cmp_tests:
        return (
            "missing import",
            "its tests, as the source held them, import scicode.compare.cmp, which its sandbox "
            "does not have (inspect_evals' dataset removes those lines after reading them)",
        )
    lacking = [why for name, why in UNPINNED.items() if name in problem.dependencies]
    if not theirs and lacking:
        return (
            "unpinned runtime",
            f"its dependencies import {'; '.join(lacking)}: the source's unpinned image cannot "
            "import them",
        )
    differ = [
        s.step_id
        for s in problem.steps[: index + 1]
        if s.scored
        and source_extract(sample.replies[s.step_id], s.function_header, source.rule).strip()
        != original_extract(sample.replies[s.step_id]).strip()
    ]
    if differ:
        return (
            "extraction",
            f"the source's extraction ({source.version}) and the official rule's give other "
            f"code for {', '.join(differ)}",
        )
    supplied = [s.step_id for s in problem.steps[:index] if not s.scored]
    if supplied:
        return (
            "pre-supplied code",
            f"the source ran the model's own code for pre-supplied {', '.join(supplied)} before "
            "this step; the official rule runs the official code",
        )
    if theirs and verdict is not None and verdict.get("reason_kind") == "timeout":
        limit = config.step_timeout
        return (
            "timeout",
            f"timed out in scievals ({limit} s per step program); "
            + (
                f"the source allowed {source.timeout} s"
                if source.timeout != limit
                else "the source's limit too: the machines' speed differs"
            ),
        )
    return rule_cause(sid, verdict, theirs, config.split)


def _differing_problems(
    samples: Sequence[SourceSample],
    recorded: Recorded | None,
    by_step: Mapping[str, dict[str, Any]],
    step_rows: Sequence[dict[str, Any]],
) -> list[dict[str, Any]] | None:
    """Problems the source counted solved and the official rule does not, or the reverse; the
    cause is their differing steps' when they share one."""
    if recorded is None or recorded.solved is None:
        return None
    rows = []
    for sample in samples:
        problem: Problem = sample.problem
        ours = problem_solved(
            {
                s.step_id: by_step.get(s.step_id, {}).get("passed", False)
                for s in problem.scored_steps
            }
        )
        theirs = problem.problem_id in recorded.solved
        if theirs == ours:
            continue
        steps = {s.step_id for s in problem.steps}
        differ = [r for r in step_rows if r["step"] in steps]
        kinds = {r["cause"] for r in differ}
        named = ", ".join(r["step"] + (f" ({r['cause']})" if r["cause"] else "") for r in differ)
        kind = kinds.pop() if len(kinds) == 1 else None
        rows.append(
            problem_row(problem.problem_id, theirs, ours, kind, f"its steps differ: {named}")
        )
    return rows
