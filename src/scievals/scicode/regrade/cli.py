"""``scievals regrade SOURCE``: another harness's completions graded under the official rule and
compared with the scores it recorded."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

    from scievals.scicode.config import SciCodeConfig

OUT_FILE = "regrade.json"
VERIFY_FILE = "verify.json"


def _out_file(out: str | None, overwrite: bool, name: str = OUT_FILE) -> Path | None:
    """Where the JSON goes, checked before any grading (one line when it cannot go there)."""
    from scievals.inputs import InputError

    if out is None:
        return None
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out} is not a folder: name a folder for {name}")
    if not folder.parent.is_dir():
        raise InputError(f"--out {out}: folder {folder.parent} does not exist")
    target = folder / name
    if target.exists() and not overwrite:
        raise InputError(f"{target} exists: pass --overwrite to replace it")
    return target


def _write(target: Path, text: str) -> None:
    """``text`` into ``target`` whole or not at all."""
    target.parent.mkdir(exist_ok=True)
    part = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    part.write_text(text, encoding="utf-8")
    os.replace(part, target)


def _run(ns: argparse.Namespace) -> int:
    if ns.verify:
        return _verify(ns)
    from scievals.scicode.regrade.inspect_evals_log import is_inspect_log

    if is_inspect_log(Path(ns.source)):
        return _regrade_log(ns)
    from scievals.scicode.regrade.official_folder import read_source
    from scievals.scicode.regrade.run import choose_split, grading_config, regrade_source

    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = _out_file(ns.out, ns.overwrite)
    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    config = grading_config(
        choose_split(source, ns.split), ns.h5, ns.timeout, ns.sandbox or "scievals"
    )
    say(f"{len(source.runs)} runs in {source.path} ({source.layout}), split {config.split}")
    about = {"source": str(source.path), "layout": source.layout}
    return _compared(
        say, target, config, lambda: regrade_source(source, config, say), about, source.notes
    )


def _compared(
    say: Callable[[str], None],
    target: Path | None,
    config: SciCodeConfig,
    regrade: Callable[[], Coroutine[Any, Any, list[dict[str, Any]]]],
    about: dict[str, Any],
    notes: Sequence[str],
) -> int:
    """Grades (``regrade()``), prints the comparison and writes it to ``target``."""
    from scievals.grade_out import Interrupts
    from scievals.scicode.regrade.compare import table, to_json

    if config.sandbox == "scievals":
        from scievals.sandbox import prestart

        prestart()
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            comparisons = stop.run(regrade())
        finally:
            stop.said()
    print(table(comparisons))
    if target is not None:
        about = {
            **about,
            "split": config.split,
            "grading": config.record(),
            **_stamp(),
            "notes": list(notes),
        }
        _write(target, to_json(comparisons, about))
        say(f"wrote {target}")
    return 0


def _regrade_log(ns: argparse.Namespace) -> int:
    """An inspect_evals SciCode log: its replies graded under the official rule, compared with
    the scores it records."""
    from scievals.scicode.data.dataset import load_problems
    from scievals.scicode.regrade.inspect_evals_log import read_inspect_evals_log
    from scievals.scicode.regrade.inspect_evals_regrade import log_split, regrade_log
    from scievals.scicode.regrade.run import grading_config

    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = _out_file(ns.out, ns.overwrite)
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
    return _compared(
        say, target, config, lambda: regrade_log(source, config, say), about, source.notes
    )


def _verify(ns: argparse.Namespace) -> int:
    """``--verify LOG``: the log re-graded; every difference a line on stdout, exit status 1 if
    any."""
    from scievals.grade_out import Interrupts
    from scievals.inputs import InputError
    from scievals.scicode.regrade.scievals_log import read_log
    from scievals.scicode.regrade.verify import counted, verify

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
    target = _out_file(ns.out, ns.overwrite, VERIFY_FILE)
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
    for note in result.notes:
        say(f"note: {note}")
    for line in result.differences:
        print(line)
    print(result.summary())
    if target is not None:
        about = {
            "log": str(shared.path),
            "task": shared.task,
            "recorded_config": shared.recorded,
            "grading": config.record(),
            **_stamp(),
            "clean": result.clean,
            "differences": result.differences,
            "notes": result.notes,
            "verdicts": result.verdicts,
        }
        _write(target, json.dumps(about, indent=1) + "\n")
        say(f"wrote {target}")
    return 0 if result.clean else 1


def _stamp() -> dict[str, str]:
    """Which scievals wrote a result file, and when (both result files carry it)."""
    return {"scievals": version("scievals"), "date": datetime.now(UTC).date().isoformat()}


def add_regrade(groups: dict) -> None:
    """Add ``regrade`` to the root command."""
    parser = groups["root"].add_parser(
        "regrade",
        help="grade what another harness already ran, and compare with the scores it recorded",
        description="Reads the official SciCode harness's generated code (eval_results/, its "
        "generated_code/, or one model's folder), grades every step file under the official "
        "rule in the sandbox, and compares each model's score and step verdicts with the "
        "harness's own verdict files (eval_results/<model>_<background>.json and .txt). An "
        "inspect_evals scicode log (.eval or .json) is read the same way: each step's reply "
        "graded, the source's per-step scores compared. With "
        "--verify, SOURCE is a scievals SciCode log: every sample is re-graded and compared "
        "verdict by verdict with what the log records, its metrics recomputed and its protocol "
        "checked against this install's; each difference is a line and the exit status is 1.",
    )
    parser.add_argument(
        "source",
        help="eval_results/ or generated_code/[<model>/] folder, or an inspect_evals scicode "
        "log; with --verify, a scievals log",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="SOURCE is a scievals .eval log: re-grade it and list every difference",
    )
    parser.add_argument(
        "--out",
        default=None,
        help=f"write {OUT_FILE} (with --verify: {VERIFY_FILE}) into this folder",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an existing file of that name in --out"
    )
    parser.add_argument(
        "--split",
        choices=["dev", "test", "all"],
        default=None,
        help="default: inferred from the steps SOURCE holds",
    )
    parser.add_argument("--h5", default=None, help="the official test_data.h5 (test split)")
    parser.add_argument(
        "--timeout", type=int, default=None, help="seconds per step program (default 300)"
    )
    parser.add_argument(
        "--sandbox", default=None, help="sandbox provider (default scievals, also for --verify)"
    )
    parser.set_defaults(func=_run)
