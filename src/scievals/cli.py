"""The ``scievals`` front door: eval, grade, data, sandbox, serve, report, analyze, run.

Each room registers its own subcommands (``register(groups)``) so that this file only wires them;
``eval`` is generic and forwards to Inspect, turning unknown ``--key value`` options into task args.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from scievals.artifacts import ArtifactError
from scievals.inputs import InputError

ROOM_COMMANDS = (
    "scievals.scicode.cli",
    "scievals.scibench.cli",
    "scievals.sandbox.cli",
    "scievals.models.cli",
    "scievals.report.cli",
    "scievals.quickstart",
)

# Options of `inspect eval` that `scievals eval` passes through unchanged. `--timeout` is not
# among them: for our tasks it is the per-execution timeout (it becomes -T timeout=...); so is
# `--sandbox` (-T sandbox=...: the task resolves `docker` to its compose file and logs it).
PASS_THROUGH = {
    "--model": 1,
    "--limit": 1,
    "--epochs": 1,
    "--max-connections": 1,
    "--temperature": 1,
    "--log-dir": 1,
    "--max-tokens": 1,
    "--seed": 1,
    "--sample-id": 1,
    "--max-samples": 1,
    "--sandbox": 1,
    "--model-base-url": 1,
    "--max-retries": 1,
    "--display": 1,
    "--log-level": 1,
    "--max-sandboxes": 1,
    "-M": 1,
    "-T": 1,
    "--extra-body": 1,
    "--no-log-samples": 0,
    "--fail-on-error": 1,
    "--retry-on-error": 1,
}


def _eval_args(task: str, rest: Sequence[str]) -> list[str]:
    """Build the `inspect eval` argument list: known options pass, others become -T key=value."""
    args = ["eval", task if "/" in task else f"scievals/{task}"]
    i = 0
    rest = list(rest)
    while i < len(rest):
        token = rest[i]
        key, eq, inline = token.partition("=")
        if key in PASS_THROUGH and not (key == "--sandbox" and args[1].startswith("scievals/")):
            if PASS_THROUGH[key] == 0:
                args.append(token)
            elif eq:
                args += [key, inline]
            else:
                if i + 1 >= len(rest):
                    raise SystemExit(f"scievals eval: {key} needs a value")
                args += [key, rest[i + 1]]
                i += 1
        elif key.startswith("--") and len(key) > 2:
            name = key[2:].replace("-", "_")
            if eq:
                value = inline
            elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
                value = rest[i + 1]
                i += 1
            else:
                value = "true"
            args += ["-T", f"{name}={value}"]
        else:
            raise SystemExit(f"scievals eval: unexpected argument {token!r}")
        i += 1
    if "--model" not in args:
        args += ["--model", "scievals/local"]
    return args


def _cmd_eval(ns: argparse.Namespace) -> int:
    from inspect_ai._cli.main import main as inspect_main

    from scievals.offline import seed_tiktoken

    seed_tiktoken()
    argv = _eval_args(ns.task, ns.rest)
    print("running: inspect " + " ".join(argv), file=sys.stderr)
    sys.argv = ["inspect", *argv]
    try:
        inspect_main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    else:
        code = 0
    log_dir = next((argv[i + 1] for i, a in enumerate(argv) if a == "--log-dir"), "./logs")
    print(f"logs: {log_dir}  (open them with: inspect view --log-dir {log_dir})", file=sys.stderr)
    return code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scievals", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser(
        "eval",
        help="evaluate a model on a benchmark (Inspect options pass through)",
        description="e.g. scievals eval scicode --model openai/gpt-4o --split dev --limit 2",
    )
    ev.add_argument("task", help="scicode, scibench, or any Inspect task name")
    ev.add_argument("rest", nargs=argparse.REMAINDER)
    ev.set_defaults(func=_cmd_eval)

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
        # The user can act on these: one line. Anything else is our bug and keeps its traceback.
        print(f"scievals: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
