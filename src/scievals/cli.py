"""The scievals front door: eval, grade, data, sandbox, serve, report, analyze, run.

Each room registers its own subcommands (``register(groups)``) so that this file only wires them;
``eval`` is generic and forwards to Inspect, turning unknown ``--key value`` options into task args.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

ROOM_COMMANDS = (
    "scievals.scicode.cli",
    "scievals.scibench.cli",
    "scievals.sandbox.cli",
    "scievals.models.cli",
    "scievals.report.cli",
    "scievals.regrade",
    "scievals.quickstart",
)
OURS = "scievals/"
AT_LEAST: dict[str, float] = {
    **dict.fromkeys(
        ("--epochs", "--max-connections", "--max-samples", "--max-tasks", "--max-subprocesses"),
        1,
    ),
    **dict.fromkeys(("--max-sandboxes", "--max-tokens", "--num-choices", "--best-of"), 1),
    **dict.fromkeys(("--top-k", "--message-limit", "--turn-limit", "--time-limit"), 1),
    **dict.fromkeys(("--working-limit", "--attempt-timeout", "--limit"), 1),
    **dict.fromkeys(("--temperature", "--top-p", "--max-retries", "--cost-limit"), 0),
}
"""Inspect's settings that mean nothing below these values: a run with no epochs, samples or
tokens does nothing and says it succeeded, one with no connection or sample slot waits forever,
and a negative temperature or limit is refused by the provider or the run after the task starts.
"""
AT_MOST: dict[str, float] = {"--top-p": 1}


@cache
def _inspect_options() -> dict[str, int | None]:
    """Every option of ``inspect eval`` and how many values it takes: 0 (a flag), 1, or None (an
    optional value, as ``--fail-on-error [0.1]``). Read from Inspect's own command."""
    import click
    from inspect_ai._cli.eval import eval_command

    arity: dict[str, int | None] = {}
    for option in eval_command.params:
        if isinstance(option, click.Option):
            takes = 0 if option.is_flag else None if option._flag_needs_value else 1
            arity |= dict.fromkeys(option.opts, takes) | dict.fromkeys(option.secondary_opts, 0)
    return arity


@cache
def _our_tasks() -> dict[str, list[str]]:
    """Our tasks' registered names and their parameters, as Inspect registered them."""
    from inspect_ai._util.registry import registry_find
    from inspect_ai.util import registry_info

    import scievals._registry  # noqa: F401 - registers the tasks, as Inspect's entry point does

    infos = [registry_info(t) for t in registry_find(lambda info: info.type == "task")]
    return {i.name: i.metadata["params"] for i in infos if i.name.startswith(OURS)}


def _close(name: str, known: Sequence[str]) -> str:
    """The hint "; did you mean X?", X the known name nearest a misspelt one (if one is near)."""
    import difflib

    near = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {near[0]}?" if near else ""


def _eval_args(task: str, rest: Sequence[str]) -> list[str]:
    """Build the `inspect eval` argument list: Inspect's options pass, others become -T key=value.

    A ``--key`` that our task takes as a parameter is one (``--timeout`` and ``--sandbox`` too).
    For our tasks, a name that is neither a parameter nor an Inspect option is refused, a line per
    name with the nearest valid one; another package's task gets every other ``--key``.
    """
    name = task if "/" in task else OURS + task
    params = _task_params(name)
    options = _inspect_options()
    args, problems = ["eval", name], []

    as_options = ["--" + p.replace("_", "-") for p in params or ()]
    as_options += [option for option in options if option.startswith("--")]

    def check(key: str, spelled: str, known: Sequence[str]) -> None:
        if params is not None and key not in params:
            hint = _close(spelled, known)
            problems.append(f"scievals eval: {name} has no parameter {spelled}{hint}")

    i = 0
    rest = list(rest)
    while i < len(rest):
        token = rest[i]
        key, eq, inline = token.partition("=")
        following = rest[i + 1] if i + 1 < len(rest) else None
        param = key[2:].replace("-", "_") if key.startswith("--") and len(key) > 2 else None
        if key in options and param not in (params or ()):
            takes = options[key]
            if eq or takes == 0 or (takes is None and (following or "-").startswith("-")):
                args += [key, inline] if eq else [token]
            elif following is None:
                raise SystemExit(f"scievals eval: {key} needs a value")
            else:
                args += [key, following]
                i += 1
            if key == "-T":
                pair, has_value, _ = args[-1].partition("=")
                if not has_value:
                    problems.append(f"scievals eval: -T {pair} needs a value: -T {pair}=VALUE")
                check(pair.replace("-", "_"), pair, params or ())
        elif param:
            if eq:
                value = inline
            elif following is not None and not following.startswith("--"):
                value = following
                i += 1
            else:
                value = "true"
            check(param, key, as_options)
            args += ["-T", f"{param}={value}"]
        else:
            raise SystemExit(f"scievals eval: unexpected argument {token!r}")
        i += 1
    if problems:
        raise SystemExit("\n".join(problems))
    if "--model" not in args:
        args += ["--model", "scievals/local"]
    return args


@cache
def _inspect_types() -> dict[str, object]:
    """The click type of every ``inspect eval`` option that takes one value."""
    import click
    from inspect_ai._cli.eval import eval_command

    return {
        name: option.type
        for option in eval_command.params
        if isinstance(option, click.Option) and not option.is_flag
        for name in option.opts
    }


def _bad_setting(key: str, value: str) -> str | None:
    """Why ``key value`` cannot run (one line), or None: a value of the wrong type, or outside
    what the setting can mean (``AT_LEAST``, ``AT_MOST``)."""
    import click

    kind = _inspect_types().get(key)
    if isinstance(kind, click.ParamType) and not isinstance(kind, click.types.StringParamType):
        try:
            kind.convert(value, None, None)
        except click.BadParameter as exc:
            return f"{key} {value}: {exc.message}"
    if key not in AT_LEAST and key not in AT_MOST:
        return None
    try:
        number = float(value)
    except ValueError:
        return None  # a form Inspect reads itself (--limit 10-20)
    low, high = AT_LEAST.get(key, -math.inf), AT_MOST.get(key, math.inf)
    if not math.isfinite(number):
        return f"{key} {value}: must be a finite number"
    if low <= number <= high:
        return None
    spell = "{:g}".format
    if high < math.inf:
        return f"{key} {value}: must be between {spell(low)} and {spell(high)}"
    return f"{key} {value}: must be {spell(low)} or more"


@cache
def _model_providers() -> list[str]:
    """The model providers Inspect knows here: its own, ours, and other packages' plugins."""
    import inspect_ai.model  # noqa: F401 - registers Inspect's providers
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai._util.registry import registry_find, registry_unqualified_name

    import scievals._registry  # noqa: F401 - registers ours, as Inspect's entry point does

    ensure_entry_points()
    found = registry_find(lambda info: info.type == "modelapi")
    return sorted({registry_unqualified_name(api) for api in found})


def _bad_model(spec: str, providers: Sequence[str]) -> str | None:
    """Why ``--model spec`` (one model, or several separated by commas) names no model Inspect
    can make, with the nearest provider names; None when each names a known provider."""
    import difflib

    for model in spec.split(","):
        provider, slash, name = model.strip().partition("/")
        if not slash or not provider or not name:
            return f"--model {spec}: name each model PROVIDER/MODEL (openai/gpt-4o), not {model!r}"
        if provider not in providers:
            near = difflib.get_close_matches(provider, providers, n=3, cutoff=0.3)
            hint = f"nearest: {', '.join(near)}" if near else f"providers: {', '.join(providers)}"
            return f"--model {spec}: no model provider {provider!r} ({hint})"
    return None


def _refused(argv: Sequence[str]) -> list[str]:
    """A line for each model or generation setting in ``argv`` (``inspect eval``'s own options)
    that cannot run, before Inspect starts: its traceback and a run that does nothing are not
    what the user asked for."""
    options = _inspect_options()
    problems = []
    i = 2  # after "eval TASK"
    while i < len(argv):
        key = argv[i]
        if options.get(key) == 1 and i + 1 < len(argv):
            value = argv[i + 1]
            if key == "--model":
                problem = _bad_model(value, _model_providers())
            else:
                problem = _bad_setting(key, value)
            if problem:
                problems.append(problem)
            i += 1
        i += 1
    return problems


def _task_params(name: str) -> list[str] | None:
    """The parameters of our task ``name`` (spelled as Python names); None for another package's
    task, whose parameters Inspect checks itself."""
    if not name.startswith(OURS):
        return None
    tasks = _our_tasks()
    if name not in tasks:
        short = [t.removeprefix(OURS) for t in tasks]
        hint = _close(name.removeprefix(OURS), short)
        raise SystemExit(f"scievals eval: no task {name}{hint} (ours: {', '.join(short)})")
    return [p.replace("-", "_") for p in tasks[name]]


@cache
def _finished_tasks() -> list[EvalLog]:
    """The logs of the runs that ended in this process, as Inspect's run-end hook hands them over
    (registered once, when ``scievals eval`` first runs)."""
    from inspect_ai.hooks import Hooks, RunEnd, hooks
    from inspect_ai.hooks._startup import init_hooks

    init_hooks()  # Inspect announces the hooks it finds once: ours, registered after, is not
    ended: list[EvalLog] = []

    @hooks(name="scievals_eval_status", description="scievals eval: each task's final status")
    class _Ended(Hooks):
        async def on_run_end(self, data: RunEnd) -> None:
            ended.extend(data.logs)

    return ended


def _unfinished(logs: Sequence[EvalLog]) -> list[str]:
    """One line per task that did not finish: its status, why, and where its log is."""
    lines = []
    for log in logs:
        if log.status != "success":
            why = log.error.message.strip().splitlines()[0] if log.error else log.status
            lines.append(
                f"{log.eval.task} did not finish ({log.status}): {why}; log: {log.location}"
            )
    return lines


def _cmd_eval(ns: argparse.Namespace) -> int:
    if {"-h", "--help"} & set(ns.rest):
        print(ns.help_of(ns.task))
        return 0
    from inspect_ai._cli.main import main as inspect_main
    from inspect_ai._util.error import PrerequisiteError
    from rich.text import Text

    from scievals.offline import seed_tiktoken

    seed_tiktoken()
    argv = _eval_args(ns.task, ns.rest)
    if problems := _refused(argv):
        raise InputError("\n".join(problems))
    print("running: inspect " + " ".join(argv), file=sys.stderr)
    ended = _finished_tasks()
    ended.clear()
    sys.argv = ["inspect", *argv]
    try:
        inspect_main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except PrerequisiteError as exc:  # a task refusing its parameters, or Inspect's own
        message = exc.message if isinstance(exc.message, str) else str(exc)
        raise InputError(Text.from_markup(message).plain.strip()) from None
    else:
        code = 0
    log_dir = next((argv[i + 1] for i, a in enumerate(argv) if a == "--log-dir"), "./logs")
    print(f"logs: {log_dir}  (open them with: inspect view --log-dir {log_dir})", file=sys.stderr)
    unfinished = _unfinished(ended)
    for line in unfinished:
        print(f"scievals: error: {line}", file=sys.stderr)
    return code or (1 if unfinished else 0)


def _eval_help(parser: argparse.ArgumentParser, task: str) -> str:
    """The eval command's help, and the parameters of the task named (if it is ours)."""
    name = task if "/" in task else OURS + task
    params = _task_params(name)
    if params is None:
        return parser.format_help()
    names = ", ".join("--" + p.replace("_", "-") for p in params)
    return f"{parser.format_help()}\nparameters of {name}: {names}\n"


class _Parser(argparse.ArgumentParser):
    """A parser whose subcommands refuse what they do not know with their own usage (argparse
    leaves a subcommand's unknown arguments to the top-level parser, which shows its usage)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scievals", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser(
        "eval",
        help="evaluate a model on a benchmark (Inspect options pass through)",
        description="e.g. scievals eval scicode --model openai/gpt-4o --split dev --limit 2",
        epilog="Options of `inspect eval` pass through; any other --key value (or -T key=value) "
        "is a task parameter. `scievals eval TASK --help` lists the task's parameters.",
    )
    ev.add_argument("task", help="scicode, scibench, or any Inspect task name")
    ev.add_argument("rest", nargs=argparse.REMAINDER, help="task parameters and Inspect options")
    ev.set_defaults(func=_cmd_eval, help_of=lambda task: _eval_help(ev, task))

    groups = {
        "root": sub,
        "grade": sub.add_parser("grade", help="grade completions made elsewhere").add_subparsers(
            dest="benchmark", required=True
        ),
        "analyze": sub.add_parser("analyze", help="analyses of finished runs").add_subparsers(
            dest="analysis", required=True
        ),
    }
    for module in ROOM_COMMANDS:
        importlib.import_module(module).register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        return int(ns.func(ns) or 0)
    except KeyboardInterrupt:
        return 130
    except (InputError, ArtifactError, FileNotFoundError) as exc:
        # The user can act on these: a line each. Anything else is our bug and keeps its traceback.
        for line in str(exc).splitlines():
            if line.strip():
                print(f"scievals: error: {line}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
