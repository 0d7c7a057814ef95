"""Inspect logs of scievals tasks -> runs: which model, under which protocol, with which scores.

Everything comes from Inspect's log API: the protocol dict the task wrote into
``log.eval.metadata``, the model, temperature and epochs Inspect recorded, and the per-epoch sample
scores (not the reduced ones, so that epochs can be told apart).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalLog,
    effective_generate_config,
    read_eval_log,
)
from inspect_ai.scorer import Score

from scievals.inputs import MAX_LOG_BYTES, InputError, unreadable_log
from scievals.protocol import PROTOCOL_KEYS
from scievals.report.regrade_entry import Regrade, regrade_of

BENCHMARK_ORDER = ("scicode", "scibench")
SHARD_KEYS = ("steps_counted", "sandbox", "memory_limit")
"""Protocol entries that may differ between shards of one experiment."""


@dataclass(frozen=True)
class SampleResult:
    """One sample in one epoch, with its scores by scorer name."""

    id: str
    epoch: int
    metadata: dict[str, Any]
    scores: dict[str, Score]


@dataclass
class Run:
    """One log of a scievals task; ``name`` (r1, r2, ...) is given once all runs are known."""

    path: str
    task: str
    model: str
    protocol: dict[str, Any]
    temperature: float | None
    epochs: int
    created: str
    status: str
    samples: list[SampleResult]
    errors: int  # samples that ended in an error and carry no score
    max_tokens: int | None = None
    task_args: dict[str, Any] = field(default_factory=dict)
    parts: tuple[str, ...] = ()  # the logs a combined run was made from; () for one log
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    """Model -> its token counts (``input``, ``output``, ``reasoning``, ``cache``), all logs."""
    usage_notes: list[str] = field(default_factory=list)  # counts a log holds that are not used
    seconds: float | None = None  # wall time of the eval (summed over a combined run's logs)
    started: str = ""
    completed: str = ""
    versions: dict[str, str] = field(default_factory=dict)  # packages the log records
    name: str = ""
    notes: list[str] = field(default_factory=list)
    regrade: Regrade | None = None
    """Where a re-graded run's answers came from and what the source said (None: a live run)."""

    @property
    def benchmark(self) -> str:
        return str(self.protocol.get("benchmark") or "unknown")

    def key(self) -> str:
        """What makes two runs one experiment: model, protocol, generation settings and epochs.

        The number of steps counted is left out: it follows the problems a run selected, and runs
        over disjoint problems of one experiment are shards of it (see ``load_runs``). So is the
        sandbox: shards graded on different machines (ours on one, containers on another) are
        one experiment, whose verdicts must agree (``_reconcile`` checks where they overlap).
        """
        protocol = {k: v for k, v in self.protocol.items() if k not in SHARD_KEYS}
        record = [self.benchmark, self.model, protocol]
        record += [self.temperature, self.max_tokens, self.epochs]
        return json.dumps(record, sort_keys=True, default=str)

    def sample_ids(self) -> frozenset[str]:
        return frozenset(s.id for s in self.samples)


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort "2" before "10" and "atkins-3" before "atkins-12"."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


# Inspect's rule for the logs in a folder (inspect_ai.log.list_eval_logs): every .eval file, and
# .json files named from a timestamp. Applied here without opening any file: Inspect's listing
# reads the header of oddly named files, which blocks forever on a FIFO in a shared folder.
_JSON_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


def _log_paths(paths: Iterable[str | Path], notes: list[str]) -> list[str]:
    """The log files named or found under ``paths``; folders that cannot be listed are noted."""

    def unlisted(error: OSError) -> None:
        notes.append(_skip(error.filename, f"cannot be listed ({error.strerror})"))

    found: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for root, _, files in os.walk(path, onerror=unlisted):
                found += [
                    os.path.join(root, name)
                    for name in files
                    if name.endswith(".eval") or _JSON_LOG_NAME.match(name)
                ]
        elif path.exists() or path.is_symlink():
            found.append(str(path))
        else:
            raise FileNotFoundError(f"no such log file or directory: {p}")
    return sorted(set(found))


def _skip(path: str | Path, why: str) -> str:
    """The one line that says a log was left out, and why (shortened to one line)."""
    why = (why.strip().splitlines() or [""])[0]
    return f"skipped {path}: {why if len(why) <= 200 else why[:199] + '…'}"


def _unreadable(path: str) -> str | None:
    """Why ``path`` cannot be read as a log without reading it, or None when it may be one."""
    return unreadable_log(Path(path), MAX_LOG_BYTES)


def _setting(log: EvalLog, name: str) -> Any:
    """A generation setting as it ran: the plan's (the task's and the eval's, merged) wins over
    the model's own config, as in Inspect's generate."""
    planned = getattr(log.plan.config, name)
    return planned if planned is not None else getattr(effective_generate_config(log), name)


def _ran_in(log: EvalLog, protocol: dict[str, Any]) -> dict[str, Any]:
    """The sandbox that really ran the samples, where an eval-level ``--sandbox`` replaced the
    one the task asked for (the task's protocol was written before Inspect applied it)."""
    from scievals.sandbox import providers_of

    spec = log.eval.sandbox
    recorded = str(protocol.get("sandbox") or "")
    if spec is None or not recorded or spec.type in providers_of(recorded.split(" ")[0]):
        return {}
    config = spec.config if isinstance(spec.config, str) else None
    actual = f"{spec.type}:{config}" if config else spec.type
    return {"sandbox": f"{actual} (eval-level --sandbox; the task asked for {recorded})"}


MAX_TOKENS = 10**15
"""More tokens than any run spends (a billion dollars at a dollar per million): a count above it,
or below 0, is not a count, and would make a cost that is no number (10**400 tokens overflow a
float; negative ones give a negative cost)."""
_COUNTS = {
    "input": ("input_tokens",),
    "output": ("output_tokens",),
    "reasoning": ("reasoning_tokens",),
    "cache": ("input_tokens_cache_read", "input_tokens_cache_write"),
}


def _usage(log: EvalLog) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Tokens per model as Inspect counted them (cache reads and writes together), and a note
    for each model whose counts are not counts (left out: its runs' cost is unknown)."""
    usage: dict[str, dict[str, int]] = {}
    notes: list[str] = []
    for model, u in (log.stats.model_usage or {}).items():
        counts: dict[str, int] = {}
        for key, names in _COUNTS.items():
            values = [getattr(u, name, None) for name in names]
            bad = next((v for v in values if not _is_count(v)), None)
            if bad is not None:
                where = Path(str(log.location)).name
                notes.append(
                    f"{where}: the token counts of {_shown(model)} are left out ({names[0]} is "
                    f"{_shown(bad)}: not a count from 0 to 10**{len(str(MAX_TOKENS)) - 1})"
                )
                break
            counts[key] = sum(v or 0 for v in values)
        else:
            usage[str(model)] = counts
    return usage, notes


def _is_count(value: Any) -> bool:
    """A token count, or none recorded (None)."""
    if value is None:
        return True
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS


def _shown(value: Any) -> str:
    """A value from a log, short enough for a note (10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}… ({len(text)} characters)"


def _seconds(start: str, end: str) -> float | None:
    """Seconds between two of Inspect's ISO times; None when either is missing or unreadable."""
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except (TypeError, ValueError):
        return None


def run_from_log(log: EvalLog) -> Run:
    """A Run from a log read with its samples; an InputError if the log has no protocol.

    Scorer names lose any package prefix ("scievals/faithful" -> "faithful").
    """
    protocol = (log.eval.metadata or {}).get("protocol")
    if not isinstance(protocol, dict):
        raise InputError(f"{log.location}: no protocol in the log metadata (not a scievals task)")
    samples = [
        SampleResult(
            str(s.id),
            s.epoch,
            dict(s.metadata or {}),
            {name.split("/")[-1]: score for name, score in s.scores.items()},
        )
        for s in log.samples or []
        if s.scores
    ]
    errors = sum(1 for s in log.samples or [] if not s.scores)
    usage, usage_notes = _usage(log)
    return Run(
        path=str(log.location),
        task=log.eval.task,
        model=log.eval.model,
        protocol={key: protocol.get(key) for key in PROTOCOL_KEYS} | _ran_in(log, protocol),
        temperature=_setting(log, "temperature"),
        epochs=log.eval.config.epochs or 1,
        created=log.eval.created,
        status=log.status,
        samples=samples,
        errors=errors,
        max_tokens=_setting(log, "max_tokens"),
        task_args=dict(log.eval.task_args or {}),
        usage=usage,
        usage_notes=usage_notes,
        seconds=_seconds(log.stats.started_at, log.stats.completed_at),
        started=log.stats.started_at or "",
        completed=log.stats.completed_at or "",
        versions={str(k): str(v) for k, v in (log.eval.packages or {}).items()},
        regrade=regrade_of(log.eval.metadata),
    )


def _run_order(run: Run) -> tuple[Any, ...]:
    rank = BENCHMARK_ORDER.index(run.benchmark) if run.benchmark in BENCHMARK_ORDER else 99
    return (rank, run.benchmark, run.model, run.created, run.key(), run.path)


def load_runs(
    paths: Sequence[str | Path], check: Callable[[Run], object] | None = None
) -> tuple[list[Run], list[str]]:
    """Read every scievals log under ``paths``; returns the runs and notes on what was left out.

    Logs are untrusted input: one that cannot be read, is too large, is not a scievals log, or
    whose run ``check`` rejects (the report's tables cannot be built from it) is skipped with a
    note naming it, and the others are still read. Logs of one experiment (same model, protocol,
    generation settings and epochs) are reconciled: of logs over the same problems (a retry, a
    rerun) the newest successful one is kept and the others are noted; logs over disjoint
    problems (a run split by books or sample ids, across machines or sessions) are combined into
    one run. Runs are named r1, r2, ... in order of benchmark (SciCode first), model and creation
    time.
    """
    notes: list[str] = []
    by_key: dict[str, list[Run]] = {}
    for path in _log_paths(paths, notes):
        if (run := _read_run(path, notes, check)) is not None:
            by_key.setdefault(run.key(), []).append(run)
    runs: list[Run] = []
    for group in by_key.values():
        runs += _reconcile(group, notes)
    runs.sort(key=_run_order)
    for i, run in enumerate(runs, 1):
        run.name = f"r{i}"
    return runs, notes


def _read_run(path: str, notes: list[str], check: Callable[[Run], object] | None) -> Run | None:
    """The run of one log, or None with a note naming the log and what is wrong with it."""
    if (why := _unreadable(path)) is not None:
        notes.append(_skip(path, why))
        return None
    # Only an .eval header is read alone: a .json header is read by a streaming parser whose
    # memory grows with the square of the nesting depth (200 kB of "[" exhaust any machine),
    # where a full read uses a parser with a depth limit.
    header_only = Path(path).suffix == ".eval"
    try:
        header = read_eval_log(path, header_only=header_only)
    except Exception as exc:  # an untrusted file: Inspect's parsers raise many kinds of error
        notes.append(_skip(path, f"not a readable Inspect log ({_skip_reason(exc)})"))
        return None
    protocol = (header.eval.metadata or {}).get("protocol")
    if not isinstance(protocol, dict):
        notes.append(_skip(path, "not a scievals log (no protocol in its metadata)"))
        return None
    if not isinstance(protocol.get("benchmark"), str) or not protocol["benchmark"].strip():
        notes.append(_skip(path, "its protocol names no benchmark"))
        return None
    try:
        run = run_from_log(read_eval_log(path) if header_only else header)
        if check is not None:
            check(run)
    except Exception as exc:  # samples or scores a report cannot make sense of
        notes.append(_skip(path, f"its samples do not make sense ({_skip_reason(exc)})"))
        return None
    return run


def _skip_reason(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _reconcile(group: list[Run], notes: list[str]) -> list[Run]:
    """One experiment's logs -> its runs: reruns superseded, disjoint shards combined.

    A rerun is a log over the same problems in the same sandbox. Logs of one experiment graded
    in different sandboxes (a mixed fleet) become one run: where they graded the same samples,
    their verdicts are compared (a note says how many agree and names any that do not) and the
    copy of the first log in path order is kept."""
    group.sort(key=lambda r: (r.status == "success", r.created), reverse=True)
    kept: list[Run] = []
    for run in group:
        twin = next(
            (
                k
                for k in kept
                if k.sample_ids() == run.sample_ids() and _sandbox(k) == _sandbox(run)
            ),
            None,
        )
        if twin is not None:
            notes.append(f"superseded {run.path} by {twin.path} (same model and protocol)")
        else:
            kept.append(run)
    parity = None
    if len({_sandbox(r) for r in kept}) > 1:
        kept, parity = _deduplicated(kept)
    disjoint = sum(len(r.sample_ids()) for r in kept) == len(
        frozenset().union(*map(Run.sample_ids, kept))
    )
    if len(kept) > 1 and disjoint:
        kept = [_combine(kept)]
    for run in kept:
        if parity is not None and len(kept) == 1:
            run.notes.append(parity)
        if run.status != "success":
            run.notes.append(f"log status: {run.status}")
        if run.errors:
            run.notes.append(f"{run.errors} sample(s) ended in an error and are not counted")
    return kept


def _sandbox(run: Run) -> str:
    return str(run.protocol.get("sandbox") or "")


def _verdict(sample: SampleResult) -> str:
    return json.dumps({k: v.value for k, v in sample.scores.items()}, sort_keys=True, default=str)


def _deduplicated(runs: list[Run]) -> tuple[list[Run], str]:
    """Runs of several sandboxes with each sample (and epoch) kept once, first in path order,
    and the parity note: how many samples two sandboxes both graded, and which disagree."""
    runs = sorted(runs, key=lambda r: r.path)
    first: dict[tuple[str, int], tuple[str, SampleResult]] = {}
    compared, differ = 0, []
    out = []
    for run in runs:
        mine = []
        for sample in run.samples:
            seen = first.get((sample.id, sample.epoch))
            if seen is None:
                first[(sample.id, sample.epoch)] = (_sandbox(run), sample)
                mine.append(sample)
            elif seen[0] != _sandbox(run):
                compared += 1
                if _verdict(seen[1]) != _verdict(sample):
                    differ.append(f"{sample.id} ({seen[0]} against {_sandbox(run)})")
        if mine:
            out.append(replace(run, samples=mine))
    if not compared:
        note = "verdict parity across sandboxes: no sample was graded in more than one"
    elif not differ:
        note = f"verdict parity across sandboxes: {compared} samples graded in two, all agree"
    else:
        note = (
            f"verdict parity across sandboxes: {compared} samples graded in two, "
            f"{len(differ)} DISAGREE: {', '.join(differ[:20])}"
        )
    return out, note


def _combine(shards: list[Run]) -> Run:
    """One run from shards over disjoint problems.

    Steps counted add up over shards that selected different problems (other task arguments or
    another count); shards of one selection split by Inspect's ``--sample-id`` or ``--limit``
    share the dataset, so its count is taken once.
    """
    shards = sorted(shards, key=lambda r: r.path)
    counts = {
        json.dumps(
            [
                {k: v for k, v in r.task_args.items() if k != "sandbox"},
                r.protocol.get("steps_counted"),
            ],
            sort_keys=True,
            default=str,
        ): r.protocol.get("steps_counted")
        for r in shards
    }.values()
    steps = sum(counts) if all(isinstance(c, int) for c in counts) else None
    failed = [r.status for r in shards if r.status != "success"]
    samples = [s for r in shards for s in r.samples]
    samples.sort(key=lambda s: (natural_key(s.id), s.epoch))
    first = shards[0]
    usage: dict[str, dict[str, int]] = {}
    for shard in shards:
        for model, counts in shard.usage.items():
            mine = usage.setdefault(model, dict.fromkeys(counts, 0))
            for key, value in counts.items():
                mine[key] = mine.get(key, 0) + value
    seconds = [r.seconds for r in shards]
    sandboxes: dict[str, int] = {}
    for shard in shards:
        sandboxes[_sandbox(shard)] = sandboxes.get(_sandbox(shard), 0) + len(shard.samples)
    sandbox = " + ".join(sorted(sandboxes)) if len(sandboxes) > 1 else first.protocol.get("sandbox")
    memory = {str(r.protocol.get("memory_limit")) for r in shards}
    where = [
        f"{name or 'no sandbox'}: {count} samples" for name, count in sorted(sandboxes.items())
    ]
    return Run(
        path=" + ".join(r.path for r in shards),
        task=first.task,
        model=first.model,
        protocol={
            **first.protocol,
            "steps_counted": steps,
            "sandbox": sandbox,
            "memory_limit": first.protocol.get("memory_limit")
            if len(memory) == 1
            else " + ".join(sorted(memory)),
        },
        temperature=first.temperature,
        epochs=first.epochs,
        created=max(r.created for r in shards),
        status=failed[0] if failed else "success",
        samples=samples,
        errors=sum(r.errors for r in shards),
        max_tokens=first.max_tokens,
        parts=tuple(r.path for r in shards),
        usage=usage,
        usage_notes=[note for r in shards for note in r.usage_notes],
        seconds=None if None in seconds else sum(s for s in seconds if s is not None),
        started=min(r.started for r in shards),
        completed=max(r.completed for r in shards),
        versions=first.versions,
        notes=[f"combined from {len(shards)} logs over disjoint problems"]
        + (
            [f"graded in {len(sandboxes)} sandboxes ({'; '.join(where)})"]
            if len(sandboxes) > 1
            else []
        ),
    )
