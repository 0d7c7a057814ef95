"""The scievals log a re-grade writes of each re-graded run (``--log-dir``), for both benchmarks:
where it goes, when an existing one is kept (``--resume``) or refused, how it is written (whole:
never a half-written ``.eval`` for a report to read), and the parts of it that are Inspect's
(the task's scorers as Inspect records them, the results it computes of their scores).

Each benchmark's re-grade builds its runs' samples (``scicode.regrade.eval_log``,
``scibench.regrade.eval_log``); what they share is here, as they import nothing of each other.
"""

from __future__ import annotations

import argparse
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

from inspect_ai._eval.task.log import (  # inspect-evals-lint: ignore[IECQ001] -- no public API records a task's scorers as a live eval does
    resolve_eval_scorers,
)
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
from inspect_ai.scorer import SampleScore, Scorer, ScoreReducer
from inspect_ai.scorer._reducer.registry import (  # inspect-evals-lint: ignore[IECQ001] -- the reducer's name as a live eval logs it
    reducer_log_names,
)
from inspect_ai.scorer._scorer import (  # inspect-evals-lint: ignore[IECQ001] -- see resolve_eval_scorers
    as_scorer_spec,
)

from scievals.inputs import InputError
from scievals.regrade_out import counted

LOGS = "logs"
"""The folder of ``--out`` that gets each run's log when ``--log-dir`` is not given."""
MODEL_PREFIX = "regrade"
"""A re-graded run's model is ``regrade/<source model>``: never a live run's name."""
AGAIN = "pass --overwrite to grade it again"
T = TypeVar("T")


class NotResumed(Exception):
    """A run's log that is not kept: the message says why (the answers in it are not the
    source's now, or they were graded under other options)."""


def regraded_model(model: str) -> str:
    return f"{MODEL_PREFIX}/{model}"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class RegradeLogs:
    """Where a re-grade writes a log per run (``--log-dir``), each whole once its run is graded."""

    folder: Path
    task: str
    """The task the logs are of (``scievals/scicode``, ``scievals/scibench``)."""
    source: dict[str, Any]
    """What the source is (path, layout, ...), for each log's ``regrade`` entry."""
    scorers: list[Scorer]
    """The scorers the logs record: a log of the same run with other options is refused."""
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
            return f"not a readable log ({_first_line(exc)})"
        regrade = (header.eval.metadata or {}).get("regrade")
        if header.eval.task != self.task or not isinstance(regrade, dict):
            return "not a re-grade's log"
        if regrade.get("run") != run or any(regrade.get(k) != v for k, v in self.source.items()):
            return "the log of another source or run"
        graded = [(s.name, s.options) for s in header.eval.scorers or []]
        if graded != [(s.name, s.options) for s in recorded_scorers(self.scorers)]:
            return "graded under other options"
        return None

    def logged(self, index: int, run: str, read: Callable[[EvalLog], T]) -> T | None:
        """With ``resume``, what ``read`` takes of the run's log written before (``claim``
        checked whose it is); None when the run has no log yet. ``read`` raises ``NotResumed``
        where the log is not of the answers or options of this re-grade."""
        path = self.path(index, run)
        if not (self.resume and path.exists()):
            return None
        try:
            kept = read(read_eval_log(str(path)))
        except NotResumed as exc:
            raise InputError(f"{path}: {exc}: not resumed ({AGAIN})") from None
        except Exception as exc:  # edited or damaged since ``claim``: any error of its content
            raise InputError(
                f"{path}: its samples cannot be read back ({_first_line(exc)[:200]}): {AGAIN}"
            ) from None
        self.resumed.append(path)
        return kept

    def keep(
        self, index: int, comparison: dict[str, Any], log: Callable[[], EvalLog] | None
    ) -> Path:
        """The run's log, written whole unless it was logged before (``log`` None: a resumed
        run); the comparison names it (``log``), so that ``regrade.json`` says which log is
        which run's."""
        target = self.path(index, str(comparison["run"]))
        if log is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f".{target.name}.{os.getpid()}.part")
            write_eval_log(log(), str(part), format="eval")
            os.replace(part, target)
            self.written.append(target)
        comparison["log"] = str(target)
        return target

    def summary(self) -> str | None:
        """The line that says what was written (None: nothing), and how to look at it."""
        if not (self.written or self.resumed):
            return None
        kept = f", kept {len(self.resumed)} written before" if self.resumed else ""
        return (
            f"wrote {counted(len(self.written), 'log')}{kept} in {self.folder} (`scievals "
            f"report {self.folder}`, `inspect view --log-dir {self.folder}`)"
        )


def log_folder(ns: argparse.Namespace) -> Path | None:
    """Where each run's log goes: ``--log-dir``, else ``--out``'s ``logs/``, else nowhere; the
    options checked before any file is read."""
    if ns.resume and ns.overwrite:
        raise InputError("--resume keeps the runs logged, --overwrite replaces them: choose one")
    folder = ns.log_dir or (Path(ns.out) / LOGS if ns.out else None)
    if folder is None and ns.resume:
        raise InputError("--resume reads the runs' logs: name them with --log-dir or --out")
    return None if folder is None else Path(folder)


def open_logs(
    folder: Path | None,
    ns: argparse.Namespace,
    task: str,
    source: dict[str, Any],
    scorers: list[Scorer],
    runs: Sequence[str],
) -> RegradeLogs | None:
    """The logs of ``runs`` in ``folder`` (``log_folder``), claimed before any grading."""
    if folder is None:
        return None
    logs = RegradeLogs(folder, task, source, scorers, ns.overwrite, ns.resume)
    logs.claim(runs)
    return logs


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def recorded_scorers(scorers: Sequence[Scorer]) -> list[Any]:
    """The scorers as Inspect records a task's scorers in its log."""
    return resolve_eval_scorers([as_scorer_spec(s) for s in scorers]) or []


def regrade_log(
    *,
    task: str,
    task_args: Mapping[str, Any],
    dataset: str,
    model: str,
    samples: list[EvalSample],
    scorers: list[Scorer],
    reducer: ScoreReducer,
    metadata: dict[str, Any],
    source: str | None,
    started: str,
) -> EvalLog:
    """The log of a re-graded run, as its task would have written it: ``model`` (the
    ``regraded_model``), ``samples`` (the source's replies, scored by the task's ``scorers``), the results Inspect computes of them (reduced
    by ``reducer``), and ``metadata`` (the task's, and the ``regrade`` entry)."""
    spec = EvalSpec(
        created=started,
        task=task,
        task_id=uuid.uuid4().hex[:22],
        run_id=uuid.uuid4().hex[:22],
        task_registry_name=task,
        task_args=dict(task_args),
        dataset=EvalDataset(name=dataset, samples=len(samples), sample_ids=[s.id for s in samples]),
        model=model,
        config=EvalConfig(epochs=1, epochs_reducer=reducer_log_names([reducer])),
        packages={"inspect_ai": version("inspect_ai"), "scievals": version("scievals")},
        scorers=recorded_scorers(scorers),
        metadata=metadata,
    )
    plan = EvalPlan(
        name="regrade", steps=[EvalPlanStep(solver="scievals/regrade", params={"source": source})]
    )
    stats = EvalStats(started_at=started, completed_at=now())
    results = _results(samples, scorers, reducer)
    return EvalLog(
        status="success", eval=spec, plan=plan, results=results, stats=stats, samples=samples
    )


def _results(
    samples: Sequence[EvalSample], scorers: list[Scorer], reducer: ScoreReducer
) -> EvalResults:
    """The results Inspect computes of the samples' scores, reduced as the task reduces them."""
    scores = [
        {
            name: SampleScore(score=score, sample_id=s.id, sample_metadata=s.metadata)
            for name, score in s.scores.items()
        }
        for s in samples
        if s.scores
    ]
    results, _ = eval_results(
        samples=len(samples),
        scores=scores,
        reducers=[reducer],
        scorers=scorers,
        metrics=None,
        completed_samples=len(samples),
    )
    return results
