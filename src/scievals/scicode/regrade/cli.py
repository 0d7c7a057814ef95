"""``scievals regrade SOURCE``: another harness's completions graded under the official rule and
compared with the scores it recorded."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from functools import partial
from importlib.metadata import version
from pathlib import Path

OUT_FILE = "regrade.json"


def _out_file(out: str | None, overwrite: bool) -> Path | None:
    """Where the JSON goes, checked before any grading (one line when it cannot go there)."""
    from scievals.inputs import InputError

    if out is None:
        return None
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out} is not a folder: name a folder for {OUT_FILE}")
    if not folder.parent.is_dir():
        raise InputError(f"--out {out}: folder {folder.parent} does not exist")
    target = folder / OUT_FILE
    if target.exists() and not overwrite:
        raise InputError(f"{target} exists: pass --overwrite to replace it")
    return target


def _run(ns: argparse.Namespace) -> int:
    from scievals.grade_out import Interrupts
    from scievals.scicode.regrade.compare import table, to_json
    from scievals.scicode.regrade.official_folder import read_source
    from scievals.scicode.regrade.run import choose_split, grading_config, regrade_source

    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = _out_file(ns.out, ns.overwrite)
    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    config = grading_config(choose_split(source, ns.split), ns.h5, ns.timeout, ns.sandbox)
    if ns.sandbox == "scievals":
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
            "scievals": version("scievals"),
            "date": datetime.now(UTC).date().isoformat(),
            "notes": list(source.notes),
        }
        target.parent.mkdir(exist_ok=True)
        part = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        part.write_text(to_json(comparisons, about), encoding="utf-8")
        os.replace(part, target)
        say(f"wrote {target}")
    return 0


def add_regrade(groups: dict) -> None:
    """Add ``regrade`` to the root command."""
    parser = groups["root"].add_parser(
        "regrade",
        help="grade what another harness already ran, and compare with the scores it recorded",
        description="Reads the official SciCode harness's generated code (eval_results/, its "
        "generated_code/, or one model's folder), grades every step file under the official "
        "rule in the sandbox, and compares each model's score and step verdicts with the "
        "harness's own verdict files (eval_results/<model>_<background>.json and .txt).",
    )
    parser.add_argument("source", help="eval_results/ or generated_code/[<model>/] folder")
    parser.add_argument("--out", default=None, help=f"write {OUT_FILE} into this folder")
    parser.add_argument(
        "--overwrite", action="store_true", help=f"replace an existing {OUT_FILE} in --out"
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
    parser.add_argument("--sandbox", default="scievals", help="sandbox provider (default scievals)")
    parser.set_defaults(func=_run)
