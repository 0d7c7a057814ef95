"""What ``scievals regrade --verify LOG`` does alike for every benchmark's scievals log: the log
read with bounds, the lines that name a sample, a field or a metric that differs, and the verdict
printed and written.

Shared by the SciCode and SciBench verifications, which import nothing of each other, and by the
command, which reads a log's header to tell which benchmark verifies it. Logs are untrusted input
(a leaderboard submission, a paper's artifact): a file is refused with one line, before Inspect
reads it, when it is not a regular ``.eval`` or ``.json`` file or is larger (a ``.eval``
archive's members uncompressed) than ``inputs.MAX_LOG_BYTES``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer
from inspect_ai.util import registry_info

from scievals.inputs import InputError, unreadable_log
from scievals.paths import write_whole
from scievals.regrade_out import counted, stamp


def read_bounded(path: Path, header_only: bool = False) -> EvalLog:
    """The log at ``path`` (checked by ``unreadable_log`` first); one line when Inspect cannot."""
    try:
        return read_eval_log(str(path), header_only=header_only)
    except Exception as exc:  # a hostile file may fail Inspect's reader in any of its ways
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"{path} is not a readable Inspect log: {first}") from None


def read_header(path: Path) -> EvalLog:
    """The header of the log at ``path`` (no samples); an ``InputError`` (one line) for a file
    that is not read."""
    why = unreadable_log(path)
    if why is not None:
        raise InputError(f"{path}: {why}")
    return read_bounded(path, header_only=True)


def label(sample: EvalSample, epochs: int) -> str:
    """How a line names a sample: its id, and its epoch when the run had several."""
    return f"sample {sample.id}" + (f" epoch {sample.epoch}" if epochs > 1 else "")


def run_samples(log: EvalLog, ran: Sequence[str], result: Verification) -> Iterator[EvalSample]:
    """The log's samples of the eval's run (``ran``: its dataset's ids, each of its epochs) to
    re-grade, in the order it ran them. As it goes, a line for each sample given twice or not of
    the run and a note for each an error ended (Inspect scored it not); once all are given, a
    line for each sample the run had that the log lacks."""
    epochs = log.eval.config.epochs or 1
    order = {sid: index for index, sid in enumerate(ran)}
    seen: set[tuple[str, int]] = set()
    for sample in sorted(
        log.samples or [], key=lambda s: (order.get(str(s.id), len(order)), str(s.id), s.epoch)
    ):
        name = label(sample, max(epochs, sample.epoch))  # an epoch past the run's is named
        key = (str(sample.id), sample.epoch)
        if key in seen:
            result.differences.append(
                f"{name}: a second sample of this id and epoch: not re-graded"
            )
            continue
        seen.add(key)
        if str(sample.id) not in order or not 1 <= sample.epoch <= epochs:
            result.differences.append(
                f"{name}: not one of the samples the eval ran (its dataset's ids and epochs): not "
                "re-graded"
            )
        elif sample.error is not None:
            result.notes.append(f"{name}: an error ended it in the run, unscored: not re-graded")
        else:
            yield sample
    for sid in ran:
        for epoch in range(1, epochs + 1):
            if (sid, epoch) not in seen:
                at = f" epoch {epoch}" if epochs > 1 else ""
                result.differences.append(
                    f"sample {sid}{at}: missing from the log (the eval ran it)"
                )


def differ(
    name: str,
    theirs: Any,
    ours: Any,
    sides: tuple[str, str] = ("the log records", "this install"),
) -> list[str]:
    """One line per field that differs, nested dicts field by field."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        keys = [*ours, *(k for k in theirs if k not in ours)]
        return [
            line for k in keys for line in differ(f"{name}.{k}", theirs.get(k), ours.get(k), sides)
        ]
    if theirs == ours:
        return []
    return [f"{name}: {sides[0]} {shown(theirs)}, {sides[1]} {shown(ours)}"]


def shown(value: Any) -> str:
    """A value of a log as a line shows it: its repr, cut at 160 characters."""
    text = repr(value)
    return text if len(text) <= 160 else text[:159] + "…"


def metric_values(
    metrics: Sequence[Metric],
    reducer: ScoreReducer,
    by_id: Mapping[str, list[tuple[int, Score]]],
    metadata: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, float]:
    """The metrics of re-graded scores as the eval computes them: each sample's epochs (epoch,
    score) reduced by the task's reducer, the sample's ``metadata`` beside it (grouped metrics
    read it), every value named as the log names it."""
    samples = [
        SampleScore(
            score=reducer([s for _, s in sorted(epochs, key=lambda e: e[0])]),
            sample_id=sid,
            sample_metadata=(metadata or {}).get(sid),
        )
        for sid, epochs in by_id.items()
    ]
    values: dict[str, float] = {}
    for metric in metrics:
        value = metric(samples)
        if isinstance(value, dict):
            values.update({str(k): float(v) for k, v in value.items()})
        else:
            values[registry_info(metric).name.split("/")[-1]] = float(value)  # type: ignore[arg-type]
    return values


def metric_differences(
    log: EvalLog, scorer: str, reducer: str, ours: Mapping[str, float], prefix: str = "metric"
) -> list[str]:
    """One line for each metric of ``scorer`` the log reports otherwise than ``ours``."""
    lines = []
    for score in log.results.scores if log.results else []:
        if score.scorer.split("/")[-1] != scorer:
            continue
        if score.reducer not in (None, reducer):
            lines.append(
                f"metrics of reducer {score.reducer}: not recomputed (the task reduces epochs "
                f"with {reducer})"
            )
            continue
        theirs = {name: m.value for name, m in score.metrics.items()}
        for name in [*ours, *(n for n in theirs if n not in ours)]:
            if not _same(theirs.get(name), ours.get(name)):
                lines.append(
                    f"{prefix} {name}: the log reports {_number(theirs.get(name))}, re-graded "
                    f"{_number(ours.get(name))}"
                )
    return lines


def _same(theirs: Any, ours: float | None) -> bool:
    if not isinstance(theirs, int | float) or isinstance(theirs, bool) or ours is None:
        return theirs is None and ours is None
    return math.isclose(theirs, ours, rel_tol=1e-9, abs_tol=1e-9)


def _number(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{value:g}" if isinstance(value, int | float) else repr(value)[:40]


@dataclass
class Verification:
    """What ``--verify`` found: every difference and note as a line. Each benchmark says what it
    re-graded (``graded``) and what else ``verify.json`` holds (``details``)."""

    path: Path
    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.differences

    def graded(self) -> str:
        """What was re-graded, counted (``3 samples, 4 steps re-graded``)."""
        raise NotImplementedError

    def details(self) -> dict[str, Any]:
        """What ``verify.json`` holds after the differences and notes."""
        return {}

    def summary(self) -> str:
        if self.clean:
            return (
                f"{self.path} verifies clean: {self.graded()}; every verdict, metric and protocol "
                "field is what the log records"
            )
        return f"{self.path}: {counted(len(self.differences), 'difference')} ({self.graded()})"


def conclude(
    say: Callable[[str], None],
    result: Verification,
    target: Path | None,
    about: Mapping[str, Any],
) -> int:
    """Notes on stderr, each difference and the summary on stdout, ``verify.json`` (``about``
    first) into ``target``; the exit status: 1 when anything differs."""
    for note in result.notes:
        say(f"note: {note}")
    for line in result.differences:
        print(line)
    print(result.summary())
    if target is not None:
        written = {
            **about,
            **stamp(),
            "clean": result.clean,
            "differences": result.differences,
            "notes": result.notes,
            **result.details(),
        }
        write_whole(target, json.dumps(written, indent=1) + "\n")
        say(f"wrote {target}")
    return 0 if result.clean else 1
