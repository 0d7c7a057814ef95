"""``scievals regrade SOURCE``: another harness's completions graded under the official rule and
compared with the scores it recorded."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from scievals.regrade_logs import RegradeLogs
    from scievals.scicode.config import SciCodeConfig
    from scievals.scicode.regrade.run import RunJob

from scievals.paths import write_whole
from scievals.regrade_out import OUT_FILE, VERIFY_FILE, out_file, stamp


def regrade_scicode(ns: argparse.Namespace) -> int:
    """``scievals regrade`` of a SciCode source: the official harness's folder, an inspect_evals
    log, or with ``--verify`` a scievals log."""
    from scievals.inputs import InputError

    given = [f for f, v in (("--version", ns.version != "auto"), ("--data-dir", ns.data_dir)) if v]
    if given:
        raise InputError(
            f"{ns.source} is not OpenCompass SciBench output: {' and '.join(given)} "
            f"{'is' if len(given) == 1 else 'are'} for SciBench sources"
        )
    if ns.verify:
        if ns.log_dir or ns.resume:
            raise InputError(
                "--verify writes no log: --log-dir and --resume are for re-grades of other "
                "harnesses"
            )
        return _verify(ns)
    from scievals.regrade_logs import log_folder, open_logs
    from scievals.scicode.regrade.eval_log import TASK
    from scievals.scicode.regrade.inspect_evals_log import is_inspect_log
    from scievals.scicode.scorer import scicode_scorer

    folder = log_folder(ns)
    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite or ns.resume, OUT_FILE)
    read = _inspect_evals_log if is_inspect_log(Path(ns.source)) else _official_folder
    source = read(ns, say)
    scorers = [scicode_scorer(source.config.record())]
    logs = open_logs(folder, ns, TASK, source.about, scorers, source.runs)
    return _compared(say, target, source, logs)


@dataclass(frozen=True)
class _Read:
    """A SciCode source, read and checked before any grading: the official rule's config for
    it, what the result file says of it, its runs' labels, and what grades it."""

    config: SciCodeConfig
    about: dict[str, Any]
    notes: Sequence[str]
    runs: list[str]
    jobs: Callable[[], Iterable[RunJob]]


def _official_folder(ns: argparse.Namespace, say: Callable[[str], None]) -> _Read:
    """The official harness's generated-code folder (and its verdict files)."""
    from scievals.scicode.regrade.official_folder import read_source
    from scievals.scicode.regrade.run import choose_split, grading_config, source_jobs

    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    config = grading_config(
        choose_split(source, ns.split), ns.h5, ns.timeout, ns.sandbox or "scievals"
    )
    say(f"{len(source.runs)} runs in {source.path} ({source.layout}), split {config.split}")
    return _Read(
        config,
        {"source": str(source.path), "layout": source.layout},
        source.notes,
        [run.label for run in source.runs],
        lambda: source_jobs(source, config, say),
    )


def _compared(
    say: Callable[[str], None], target: Path | None, source: _Read, logs: RegradeLogs | None
) -> int:
    """Grades ``source``, prints the comparison and writes it to ``target``."""
    from scievals.grade_out import Interrupts
    from scievals.scicode.regrade.compare import table, to_json
    from scievals.scicode.regrade.run import regrade_runs

    config = source.config

    if config.sandbox == "scievals":
        from scievals.sandbox import prestart

        prestart()
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            comparisons = stop.run(regrade_runs(source.jobs(), config, say, logs))
        finally:
            stop.said()
    print(table(comparisons))
    if target is not None:
        about = {
            **source.about,
            "split": config.split,
            "grading": config.record(),
            **stamp(),
            "notes": list(source.notes),
        }
        write_whole(target, to_json(comparisons, about))
        say(f"wrote {target}")
    if logs is not None and (written := logs.summary()) is not None:
        say(written)
    return 0


def _inspect_evals_log(ns: argparse.Namespace, say: Callable[[str], None]) -> _Read:
    """An inspect_evals SciCode log: its replies, and the scores it records."""
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.regrade.inspect_evals_log import read_inspect_evals_log
    from scievals.scicode.regrade.inspect_evals_regrade import (
        log_jobs,
        log_split,
        run_epochs,
        run_label,
    )
    from scievals.scicode.regrade.run import grading_config

    problems = {p.problem_id: p for p in load_problems("all")}
    source = read_inspect_evals_log(Path(ns.source), problems)
    for note in source.notes:
        say(note)
    config = grading_config(
        log_split(source, ns.split), ns.h5, ns.timeout, ns.sandbox or "scievals"
    )
    say(
        f"{len(source.samples)} samples of inspect_evals/scicode {source.version} in "
        f"{source.path}, graded under the official rule, split {config.split}"
    )
    about = {
        "source": str(source.path),
        "layout": "inspect_evals log",
        "task_version": source.version,
    }
    return _Read(
        config,
        about,
        source.notes,
        [run_label(source, e) for e in run_epochs(source)],
        lambda: log_jobs(source, config, say),
    )


def _verify(ns: argparse.Namespace) -> int:
    """``--verify LOG``: the log re-graded; every difference a line on stdout, exit status 1 if
    any."""
    from scievals.grade_out import Interrupts
    from scievals.inputs import InputError
    from scievals.regrade_out import counted
    from scievals.regrade_verify import conclude
    from scievals.scicode.regrade.scievals_log import read_log
    from scievals.scicode.regrade.verify import verify

    given = [
        flag
        for flag, value in (("--split", ns.split), ("--timeout", ns.timeout))
        if value is not None
    ]
    if given:
        raise InputError(
            f"--verify grades under the log's own protocol: drop {' and '.join(given)}"
        )
    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite, VERIFY_FILE)
    shared = read_log(Path(ns.source), ns.h5, ns.sandbox)
    config = shared.config
    say(
        f"verifying {shared.path}: {shared.task}, split {config.split}, "
        f"{counted(len(shared.log.samples or []), 'sample')}, extraction {config.extraction}"
    )
    if config.sandbox == "scievals":
        from scievals.sandbox import prestart

        prestart(config.runtime_names[0])
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            result = stop.run(verify(shared))
        finally:
            stop.said()
    about = {
        "log": str(shared.path),
        "task": shared.task,
        "recorded_config": shared.recorded,
        "grading": config.record(),
    }
    return conclude(say, result, target, about)
