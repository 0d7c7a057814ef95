"""A Python program run in place: the warm interpreter's imports, made once, and ``python -c
CODE`` / ``python FILE`` run in a fork of it with the semantics of a fresh interpreter (a new
``__main__``, ``sys.argv``, ``sys.path[0]``, the exit code from ``SystemExit``, a traceback for
an uncaught exception, atexit handlers).

The program role of our sandbox's zygote and the container runner's warm server both run
programs this way. Standard library only; loaded with the program that uses it
(``scievals.shipped``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import traceback
import types

from .verdict import NOTE, limit_note


def warm(modules: list[str]) -> list[str]:
    """Import the scientific stack once; failures are reported, not fatal."""
    failed = []
    for name in modules:
        try:
            __import__(
                name
            )  # inspect-evals-lint: ignore[host_code_execution] -- the runtime's fixed list of warm modules (runtime.WARM_MODULES), in the zygote
            if name == "matplotlib":
                import matplotlib

                matplotlib.use("Agg")
        except Exception as exc:  # noqa: BLE001 - report any import failure
            failed.append(f"{name}: {exc}")
    # The warm stack is more than a plain run imports: left in the collector's generations, every
    # full collection of a program would walk it (list-heavy code ran 2x slower than plainly).
    gc.collect()
    gc.freeze()
    return failed


def run_python(argv: list[str]) -> int:
    """Run ``python -c CODE`` / ``python FILE`` in place, as a fresh interpreter would."""
    import atexit
    import builtins
    import importlib.machinery

    main_mod = types.ModuleType("__main__")
    main_mod.__dict__["__annotations__"] = {}
    main_mod.__dict__["__builtins__"] = builtins
    if argv[1] == "-c":
        source, filename = argv[2], "<string>"
        sys.argv = ["-c", *argv[3:]]
        sys.path.insert(0, "")
        main_mod.__loader__ = importlib.machinery.BuiltinImporter
    else:
        filename = argv[1]
        try:
            with open(filename, "rb") as fh:
                source = fh.read()
        except OSError as exc:
            sys.stderr.write(
                f"{argv[0]}: can't open file {os.path.abspath(filename)!r}: "
                f"[Errno {exc.errno}] {exc.strerror}\n"
            )
            sys.stderr.flush()
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
        filename = main_mod.__file__ = os.path.abspath(filename)  # as Python 3.9+ names a script
        main_mod.__cached__ = None
        main_mod.__loader__ = importlib.machinery.SourceFileLoader("__main__", main_mod.__file__)
    sys.modules["__main__"] = main_mod
    code = 0
    try:
        program = compile(
            source, filename, "exec"
        )  # inspect-evals-lint: ignore[host_code_execution] -- the sandboxed program itself, in the sandbox's own process (never the harness)
        exec(
            program, main_mod.__dict__
        )  # inspect-evals-lint: ignore[host_code_execution] -- as above
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException as exc:  # noqa: BLE001 - a fresh interpreter reports anything
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        exc.__traceback__ = tb  # hide our own frame, as if the program were the main script
        try:
            sys.excepthook(type(exc), exc, tb)
        except BaseException:  # noqa: BLE001
            traceback.print_exception(type(exc), exc, tb)
        note = limit_note(exc)
        if note:
            sys.stderr.write(f"{NOTE}{note}\n")
        code = 1
    with contextlib.suppress(BaseException):  # a fresh interpreter reports and carries on
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            code = code or 120
    return code


def exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    sys.stderr.write(f"{exc.code}\n")
    return 1
