"""``scievals regrade SOURCE`` for OpenCompass's SciBench output: every reply graded by the
``opencompass``, ``faithful`` and ``robust`` scorers, and compared with what OpenCompass
recorded (``regrade_opencompass`` is what the command calls when ``is_opencompass_output(SOURCE)``)."""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

from scievals.regrade_out import counted


def regrade_opencompass(ns: argparse.Namespace) -> int:
    """Grade SOURCE (``ns.source``); the table on stdout, ``--out DIR`` gets ``regrade.json``.

    Reads ``ns.out``, ``ns.overwrite`` and, where the parser has them, ``ns.version``
    (``auto``, ``main``, ``old``) and ``ns.data_dir`` (else ``SCIEVALS_SCIBENCH_DIR``)."""
    from scievals.inputs import InputError
    from scievals.paths import write_whole
    from scievals.regrade_out import OUT_FILE, out_file, stamp
    from scievals.scibench.regrade.compare import compare, table, to_json
    from scievals.scibench.regrade.grading import Library, choose_version, grade_run
    from scievals.scibench.regrade.layout import load, read_source, release

    given = [f"--{f}" for f in ("split", "h5", "timeout", "sandbox") if getattr(ns, f, None)]
    if given:
        raise InputError(
            f"{ns.source} is OpenCompass SciBench output: {' and '.join(given)} "
            f"{'is' if len(given) == 1 else 'are'} for SciCode sources"
        )
    say = partial(print, "scievals regrade:", file=sys.stderr)
    target = out_file(ns.out, ns.overwrite, OUT_FILE)
    source = read_source(Path(ns.source))
    for note in source.notes:
        say(note)
    data_dir = getattr(ns, "data_dir", None) or os.environ.get("SCIEVALS_SCIBENCH_DIR")
    library = Library(data_dir)
    say(
        f"{counted(len(source.runs), 'run')} of OpenCompass SciBench output in {source.path} "
        f"({source.layout})"
    )
    comparisons: list[dict[str, Any]] = []
    versions: set[str] = set()
    for r in source.runs:  # one at a time: what a run's files hold is dropped once compared
        load(r)
        for note in r.notes:
            say(f"{r.label}: {note}")
        books, mapping = choose_version(r, getattr(ns, "version", None) or "auto", library)
        if books.data.describe() not in versions:
            versions.add(books.data.describe())
            say(f"{r.label}: SciBench data {books.data.describe()}")
        comparisons.append(compare(grade_run(r, books, mapping, say)))
        release(r)
    print(table(comparisons))
    if target is not None:
        about = {
            "source": str(source.path),
            "harness": "opencompass",
            "layout": source.layout,
            "data_versions": sorted(versions),
            **stamp(),
            "notes": list(source.notes),
        }
        write_whole(target, to_json(comparisons, about))
        say(f"wrote {target}")
    return 0
