"""``scievals run``: the main job. A real model on a representative slice of both benchmarks.

It shows the whole tool at work on a machine with no API key: the default local model answers
a few SciCode dev problems (scored in the sandbox against regenerated targets) and part of one
SciBench book; the reference answers (gold code, gold answers) run on the same slice with the
same settings, so the table shows the scale (what a perfect model scores) and that the grader
works; then the results are printed to fit a terminal and a report is written. ``--full`` runs
the whole SciCode dev set and all of SciBench ``main`` in the ``zero`` setting.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from inspect_ai import Task
    from inspect_ai.log import EvalLog

# A slice chosen to finish in minutes on 2 cores: short SciCode dev problems (1, 4 and 19: four
# steps), and the first problems of one SciBench book in the paper's zero-shot setting. Small
# models decoding greedily can repeat themselves until the token limit, so the slice bounds
# replies (SciCode 1024 tokens, as the spec's measurements; SciBench 512); --full lifts that.
SCICODE_SLICE = ["1", "4", "19"]
SCIBENCH_BOOK = "quan"
SCIBENCH_SLICE = 6
SLICE_MAX_TOKENS = {"scicode": 1024, "scibench": 512}
REFERENCE = "scievals/reference"


def _say(message: str) -> None:
    print(f"scievals: {message}", file=sys.stderr, flush=True)


def run_main_job(
    model: str, full: bool, log_dir: Path, out: Path, max_tokens: int | None
) -> tuple[list[Path], bool]:
    """Run the slice (or everything), print the tables, write the report; the report's files
    and whether nothing went wrong: every run finished, and SciBench ran unless no copy of its
    data was named and none could be fetched (said, and not a failure: the machine has none)."""
    from inspect_ai import eval as inspect_eval

    from scievals.artifacts import ArtifactError
    from scievals.inputs import InputError
    from scievals.offline import seed_tiktoken
    from scievals.report import terminal_summary, write_report
    from scievals.scibench import scibench
    from scievals.scicode import scicode

    seed_tiktoken()
    started = time.monotonic()

    def tokens(benchmark: str) -> int | None:
        return max_tokens or (None if full else SLICE_MAX_TOKENS[benchmark])

    def both(task_of: Callable[[], Task], benchmark: str, **kwargs: object) -> list[EvalLog]:
        """The model, then the reference answers on the same slice and settings."""
        settings = dict(temperature=0.0, max_tokens=tokens(benchmark), display="plain")
        settings |= dict(log_dir=str(log_dir), max_connections=1, **kwargs)
        logs = inspect_eval(task_of(), model=model, **settings)
        if model != REFERENCE:
            _say(f"{benchmark}: the reference answers on the same slice (the scale)")
            logs += inspect_eval(task_of(), model=REFERENCE, **settings)
        return logs

    _say("SciCode dev" + ("" if full else f", problems {', '.join(SCICODE_SLICE)}"))
    logs = both(lambda: scicode(split="dev"), "scicode", sample_id=None if full else SCICODE_SLICE)
    _say("SciBench main, zero" + ("" if full else f", {SCIBENCH_BOOK} (first {SCIBENCH_SLICE})"))
    broken = []
    try:  # missing data stops SciBench alone: SciCode's results are still reported
        logs += both(
            lambda: scibench(setting="zero", books=None if full else SCIBENCH_BOOK),
            "scibench",
            limit=None if full else SCIBENCH_SLICE,
        )
    except ArtifactError as exc:  # no copy named and none reachable: nothing asked was wrong
        _say(f"scibench not run: {exc}")
    except (InputError, FileNotFoundError) as exc:  # the copy named is not usable
        broken.append("scibench")
        _say(f"scibench did not run: {exc}")
    failed = [log for log in logs if log.status != "success"]
    for log in failed:
        _say(f"{log.eval.task} did not finish: {log.error.message if log.error else log.status}")
    written = write_report([log.location for log in logs if log.status == "success"], out, "html")
    print("\n" + terminal_summary(written.sections, str(written.main)), end="")
    model_time, wall = model_seconds([log for log in logs if log.eval.model != REFERENCE])
    if wall:
        print(
            f"\nHarness overhead: {wall - model_time:.1f} s of {wall:.1f} s wall time not spent "
            f"in model calls ({100 * (wall - model_time) / wall:.1f}%, from the logs' model events)"
        )
    minutes = (time.monotonic() - started) / 60
    print(
        f"\nDone in {minutes:.1f} min. Logs: {log_dir} (open them with: inspect view --log-dir {log_dir})"
    )
    return written.files, not (broken or failed)


def model_seconds(logs: list[EvalLog]) -> tuple[float, float]:
    """Seconds spent in model calls and wall seconds of the evals (one connection: the calls
    are sequential, so the rest is the harness's own time: prompts, grading, logging)."""
    from inspect_ai.event import ModelEvent

    model = wall = 0.0
    for log in logs:
        if log.stats.started_at and log.stats.completed_at:
            started, ended = (
                datetime.fromisoformat(t) for t in (log.stats.started_at, log.stats.completed_at)
            )
            wall += (ended - started).total_seconds()
        for sample in log.samples or []:
            model += sum(e.working_time or 0.0 for e in sample.events if isinstance(e, ModelEvent))
    return model, wall


def _cmd_run(ns: argparse.Namespace) -> int:
    _, complete = run_main_job(ns.model, ns.full, Path(ns.log_dir), Path(ns.out), ns.max_tokens)
    return 0 if complete else 1


def register(groups: dict) -> None:
    run = groups["root"].add_parser(
        "run",
        help="the main job: a real local model on a slice of SciCode and SciBench, with a report",
    )
    run.add_argument("--model", default="scievals/local", help="any Inspect model")
    run.add_argument("--full", action="store_true", help="whole SciCode dev set and SciBench main")
    run.add_argument("--log-dir", default="logs/main-job")
    run.add_argument("--out", default="scievals-report")
    run.add_argument("--max-tokens", type=int, default=None)
    run.set_defaults(func=_cmd_run)
