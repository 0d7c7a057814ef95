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
    from collections.abc import Callable, Coroutine, Sequence

    from scievals.scicode.config import SciCodeConfig
    from scievals.scicode.regrade.eval_log import RegradeLogs

from scievals.regrade_out import OUT_FILE, VERIFY_FILE, out_file, stamp, write_whole

LOGS = "logs"
"""The folder of ``--out`` that gets each run's log when ``--log-dir`` is not given."""


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
    if ns.resume and ns.overwrite:
        raise InputError("--resume keeps the runs logged, --overwrite replaces them: choose one")
    if ns.resume and not (ns.log_dir or ns.out):
        raise InputError("--resume reads the runs' logs: name them with --log-dir or --out")
    from scievals.scicode.regrade.inspect_evals_log import is_inspect_log

    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite or ns.resume, OUT_FILE)
    read = _inspect_evals_log if is_inspect_log(Path(ns.source)) else _official_folder
    source = read(ns, say)
    return _compared(say, target, source, _logs(ns, source.config, source.about, source.runs))


@dataclass(frozen=True)
class _Read:
    """A SciCode source, read and checked before any grading: the official rule's config for
    it, what the result file says of it, its runs' labels, and what grades it."""

    config: SciCodeConfig
    about: dict[str, Any]
    notes: Sequence[str]
    runs: list[str]
    regrade: Callable[[RegradeLogs | None], Coroutine[Any, Any, list[dict[str, Any]]]]


def _official_folder(ns: argparse.Namespace, say: Callable[[str], None]) -> _Read:
    """The official harness's generated-code folder (and its verdict files)."""
    from scievals.scicode.regrade.official_folder import read_source
    from scievals.scicode.regrade.run import choose_split, grading_config, regrade_source

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
        lambda logs: regrade_source(source, config, say, logs=logs),
    )


def _logs(
    ns: argparse.Namespace, config: SciCodeConfig, about: dict[str, Any], runs: Sequence[str]
) -> RegradeLogs | None:
    """Where each run's log goes: ``--log-dir``, else ``--out``'s ``logs/``, else nowhere;
    checked before any grading."""
    from scievals.scicode.regrade.eval_log import RegradeLogs

    folder = ns.log_dir or (Path(ns.out) / LOGS if ns.out else None)
    if folder is None:
        return None
    logs = RegradeLogs(Path(folder), config, about, ns.overwrite, ns.resume)
    logs.claim(runs)
    return logs


def _compared(
    say: Callable[[str], None], target: Path | None, source: _Read, logs: RegradeLogs | None
) -> int:
    """Grades ``source``, prints the comparison and writes it to ``target``."""
    from scievals.grade_out import Interrupts
    from scievals.scicode.regrade.compare import table, to_json

    config = source.config

    if config.sandbox == "scievals":
        from scievals.sandbox import prestart

        prestart()
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            comparisons = stop.run(source.regrade(logs))
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
    if logs is not None and (logs.written or logs.resumed):
        kept = f", kept {len(logs.resumed)} written before" if logs.resumed else ""
        say(
            f"wrote {len(logs.written)} logs{kept} in {logs.folder} (`scievals report "
            f"{logs.folder}`, `inspect view --log-dir {logs.folder}`)"
        )
    return 0


def _inspect_evals_log(ns: argparse.Namespace, say: Callable[[str], None]) -> _Read:
    """An inspect_evals SciCode log: its replies, and the scores it records."""
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.regrade.inspect_evals_log import read_inspect_evals_log
    from scievals.scicode.regrade.inspect_evals_regrade import (
        log_split,
        regrade_log,
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
        lambda logs: regrade_log(source, config, say, logs=logs),
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
