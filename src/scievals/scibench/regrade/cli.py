"""``scievals regrade SOURCE`` for OpenCompass's SciBench output: every reply graded by the
``opencompass``, ``faithful`` and ``robust`` scorers, and compared with what OpenCompass
recorded (``regrade_opencompass`` is what the command calls when ``is_opencompass_output(SOURCE)``);
with ``--out`` or ``--log-dir``, a scievals log of each run (``eval_log``)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scievals.regrade_out import counted

if TYPE_CHECKING:
    from scievals.regrade_logs import RegradeLogs
    from scievals.scibench.regrade.grading import Library
    from scievals.scibench.regrade.layout import Run


def regrade_opencompass(ns: argparse.Namespace) -> int:
    """Grade SOURCE (``ns.source``); the table on stdout, ``--out DIR`` gets ``regrade.json``
    and, unless ``--log-dir`` names another folder, ``DIR/logs`` a log of each run.

    Reads ``ns.out``, ``ns.overwrite``, ``ns.log_dir``, ``ns.resume`` and, where the parser has
    them, ``ns.version`` (``auto``, ``main``, ``old``) and ``ns.data_dir`` (else
    ``SCIEVALS_SCIBENCH_DIR``)."""
    from scievals.inputs import InputError
    from scievals.paths import write_whole
    from scievals.regrade_logs import log_folder, open_logs
    from scievals.regrade_out import OUT_FILE, out_file, stamp
    from scievals.scibench.regrade.compare import table, to_json
    from scievals.scibench.regrade.eval_log import TASK, graded_by
    from scievals.scibench.regrade.grading import Library
    from scievals.scibench.regrade.layout import read_source

    given = [f"--{f}" for f in ("split", "h5", "timeout", "sandbox") if getattr(ns, f, None)]
    if given:
        raise InputError(
            f"{ns.source} is OpenCompass SciBench output: {' and '.join(given)} "
            f"{'is' if len(given) == 1 else 'are'} for SciCode sources"
        )
    say = partial(print, "scievals regrade:", file=sys.stderr)
    folder = log_folder(ns)
    target = out_file(ns.out, ns.overwrite or ns.resume, OUT_FILE)
    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    about = {"source": str(source.path), "harness": "opencompass", "layout": source.layout}
    logs = open_logs(folder, ns, TASK, about, graded_by(), [r.label for r in source.runs])
    data_dir = getattr(ns, "data_dir", None) or os.environ.get("SCIEVALS_SCIBENCH_DIR")
    say(
        f"{counted(len(source.runs), 'run')} of OpenCompass SciBench output in {source.path} "
        f"({source.layout})"
    )
    regrade = _Regrade(Library(data_dir), getattr(ns, "version", None) or "auto", logs, say)
    comparisons = [regrade(index, r) for index, r in enumerate(source.runs)]
    print(table(comparisons))
    if target is not None:
        summary = {**about, "data_versions": sorted(regrade.versions), **stamp()}
        write_whole(target, to_json(comparisons, {**summary, "notes": list(source.notes)}))
        say(f"wrote {target}")
    if logs is not None and (written := logs.summary()) is not None:
        say(written)
    return 0


@dataclass
class _Regrade:
    """Grades one run at a time (what its files hold is dropped once compared), or reads it back
    from its log (``--resume``), and writes its log."""

    library: Library
    version: str
    logs: RegradeLogs | None
    say: Callable[[str], None]
    versions: set[str] = field(default_factory=set)
    """The data versions graded on, as the protocol names them."""

    def __call__(self, index: int, run: Run) -> dict[str, Any]:
        from scievals.regrade_logs import now
        from scievals.scibench.regrade.compare import compare
        from scievals.scibench.regrade.eval_log import logged_verdicts, run_log, run_task
        from scievals.scibench.regrade.grading import choose, choose_version, grade
        from scievals.scibench.regrade.layout import load, release

        started, logs = now(), self.logs
        load(run)
        for note in run.notes:
            self.say(f"{run.label}: {note}")
        books, mapping = choose_version(run, self.version, self.library)
        if books.data.describe() not in self.versions:
            self.versions.add(books.data.describe())
            self.say(f"{run.label}: SciBench data {books.data.describe()}")
        chosen = choose(run, books, mapping, self.say)
        replies = chosen.replies()
        task = logged = None
        if logs is not None and not replies:
            self.say(f"{run.label}: no reply graded: no log (a task of no problem is none)")
        elif logs is not None:
            version = books.data.version
            task = run_task(replies, run.prompt_type, version, self.library.data_dir)
            logged = logs.logged(index, run.label, logged_verdicts(task, replies))
        graded = grade(chosen, books, logged)
        comparison = compare(graded)
        if logs is not None and task is not None:
            written = partial(run_log, task, graded, comparison, logs.source, started)
            logs.keep(index, comparison, written if logged is None else None)
        if logged is not None:
            self.say(
                f"{run.label}: {counted(len(replies), 'problem')} logged before: not graded again"
            )
        release(run)
        return comparison
