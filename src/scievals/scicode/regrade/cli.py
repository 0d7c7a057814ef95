"""``scievals regrade SOURCE``: another harness's completions graded under the official rule and
compared with the scores it recorded."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from scievals.regrade_out import out_file, stamp, write_whole

OUT_FILE = "regrade.json"
VERIFY_FILE = "verify.json"


def _run(ns: argparse.Namespace) -> int:
    if ns.verify:
        return _verify(ns)
    from scievals.grade_out import Interrupts
    from scievals.scicode.regrade.compare import table, to_json
    from scievals.scicode.regrade.official_folder import read_source
    from scievals.scicode.regrade.run import choose_split, grading_config, regrade_source

    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite, OUT_FILE)
    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    sandbox = ns.sandbox or "scievals"
    config = grading_config(choose_split(source, ns.split), ns.h5, ns.timeout, sandbox)
    if sandbox == "scievals":
        from scievals.sandbox import prestart

        prestart()
    say(f"{len(source.runs)} runs in {source.path} ({source.layout}), split {config.split}")
    with Interrupts(say, lambda: "interrupted: nothing written") as stop:
        try:
            comparisons = stop.run(regrade_source(source, config, say))
        finally:
            stop.said()
    print(table(comparisons))
    if target is not None:
        about = {
            "source": str(source.path),
            "layout": source.layout,
            "split": config.split,
            "grading": config.record(),
            **stamp(),
            "notes": list(source.notes),
        }
        write_whole(target, to_json(comparisons, about))
        say(f"wrote {target}")
    return 0


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
            **stamp(),
            "clean": result.clean,
            "differences": result.differences,
            "notes": result.notes,
            "verdicts": result.verdicts,
        }
        write_whole(target, json.dumps(about, indent=1) + "\n")
        say(f"wrote {target}")
    return 0 if result.clean else 1


def add_regrade(groups: dict) -> None:
    """Add ``regrade`` to the root command."""
    parser = groups["root"].add_parser(
        "regrade",
        help="grade what another harness already ran, and compare with the scores it recorded",
        description="Reads the official SciCode harness's generated code (eval_results/, its "
        "generated_code/, or one model's folder), grades every step file under the official "
        "rule in the sandbox, and compares each model's score and step verdicts with the "
        "harness's own verdict files (eval_results/<model>_<background>.json and .txt). With "
        "--verify, SOURCE is a scievals SciCode log: every sample is re-graded and compared "
        "verdict by verdict with what the log records, its metrics recomputed and its protocol "
        "checked against this install's; each difference is a line and the exit status is 1.",
    )
    parser.add_argument(
        "source", help="eval_results/ or generated_code/[<model>/] folder; with --verify, a log"
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
        help="default: inferred from the step files' ids",
    )
    parser.add_argument("--h5", default=None, help="the official test_data.h5 (test split)")
    parser.add_argument(
        "--timeout", type=int, default=None, help="seconds per step program (default 300)"
    )
    parser.add_argument(
        "--sandbox", default=None, help="sandbox provider (default scievals, also for --verify)"
    )
    parser.set_defaults(func=_run)
