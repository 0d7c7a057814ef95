"""Running a program in any Inspect sandbox, and reading what it left, as structured outcomes.

``run_program`` runs a command in any Inspect sandbox. In ours the engine says which limit it
stopped the program for; elsewhere (docker, local, k8s) what can be known is derived from
``exec``. A failure of the sandbox machinery is retried once, then reported as
``infrastructure``. ``read_regular_file`` reads what a program left behind without blocking or
following links.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Literal, TypeVar

import anyio
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironment

from scievals.sandbox import container
from scievals.sandbox.container import FileJob, FileRun
from scievals.sandbox.ending import Ending, infrastructure
from scievals.sandbox.files import FileTooLargeError
from scievals.sandbox.kept import KeptFile, keep_bytes
from scievals.sandbox.provider import ScievalsSandbox
from scievals.shipped import SANDBOX, source

T = TypeVar("T")
FOREIGN_READ_SECONDS = 120
FOREIGN_TAIL_BYTES = 1 << 20
"""What a foreign sandbox keeps of each stream of a program run with ``output="tail"``."""
# What a foreign sandbox raises when its machinery (not the program) fails.
MACHINERY_ERRORS = (RuntimeError, ConnectionError, EOFError)


Backend = Literal["native", "fleet", "container"]
"""Who runs a program: our native sandbox; a fleet of containers of our image, leased one per
program (``docker_pool.py``); or one container, of our runtime image when its runner accepts
the request (``container.py``), else any other provider's, through its own ``exec``."""


def backend(env: SandboxEnvironment) -> tuple[Backend, SandboxEnvironment]:
    """The one place that tells backends apart: which runs programs in ``env``, and the sandbox
    behind it. In an eval, Inspect hands scorers and solvers its event-logging proxy of the
    sample's sandbox (``inspect_ai.util.sandbox``): without looking through it, step programs
    would lose their own directories and structured outcomes there, and a container's turn
    would be one per proxy instead of one per container."""
    inner = getattr(env, "_sandbox", None) or env
    if isinstance(inner, ScievalsSandbox):
        return "native", inner
    if hasattr(inner, "lease"):
        return "fleet", inner
    return "container", inner


def scievals_sandbox(env: SandboxEnvironment) -> ScievalsSandbox | None:
    """Our native sandbox behind ``env``, if it is one."""
    kind, inner = backend(env)
    return inner if kind == "native" else None  # type: ignore[return-value]


async def run_program(
    env: SandboxEnvironment,
    cmd: list[str],
    *,
    input: str | bytes | None = None,
    timeout: int | None = None,
    cwd: str | None = None,
    output: Literal["limit", "tail"] = "limit",
) -> Ending:
    """Run ``cmd`` in ``env`` and say how it ended; never raises for the program's failures nor,
    after one retry, for the sandbox's. With ``output="tail"`` printing never stops the
    program: each stream keeps its last bytes (in a foreign sandbox, through ``tail_runner``)."""
    ours = scievals_sandbox(env)
    if ours is not None:
        return await ours.execute(cmd, input=input, timeout=timeout, cwd=cwd, output=output)
    if output == "tail":
        cmd = ["python3", "-c", source(SANDBOX, "tail_runner"), str(FOREIGN_TAIL_BYTES), *cmd]
    return await _retried(lambda: _foreign(env, cmd, input, timeout, cwd), MACHINERY_ERRORS)


async def _retried(
    call: Callable[[], Awaitable[T]], errors: tuple[type[BaseException], ...]
) -> T | Ending:
    """``call()``, once more when the sandbox's machinery fails (``errors``); after a second
    failure an ``infrastructure`` outcome: no verdict about the program."""
    started = time.monotonic()
    failure = ""
    for _ in range(2):
        try:
            return await call()
        except errors as exc:
            failure = f"{type(exc).__name__}: {exc}"
    return infrastructure(f"the sandbox failed twice: {failure}", _since(started))


async def _foreign(
    env: SandboxEnvironment,
    cmd: list[str],
    input: str | bytes | None,
    timeout: int | None,
    cwd: str | None,
) -> Ending:
    started = time.monotonic()
    try:
        res = await env.exec(cmd, input=input, timeout=timeout, cwd=cwd, timeout_retry=False)
    except TimeoutError:
        return Ending(None, "", "", "timeout", f"timeout ({timeout} s)", _since(started))
    except OutputLimitExceededError as exc:
        out = exc.truncated_output or ""
        return Ending(137, out, "", "output", f"output limit ({exc.limit_str})", _since(started))
    return Ending(
        res.returncode, res.stdout, res.stderr, None, _signal(res.returncode), _since(started)
    )


def _signal(returncode: int) -> str | None:
    """What a foreign exit status says about a signal: 137 in a container (the kernel's OOM
    killer or the runtime's limits send SIGKILL), -N from a local subprocess."""
    if returncode in (137, -signal.SIGKILL):
        return "killed by SIGKILL (a container limit?)"
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-returncode).name}"
    return None


def _since(started: float) -> float:
    return time.monotonic() - started


async def read_regular_file(env: SandboxEnvironment, path: str, max_bytes: int) -> bytes:
    """The bytes of a regular file a program left, at most ``max_bytes``.

    In our sandbox: opened relative to the sample directory with ``O_NOFOLLOW | O_NONBLOCK``,
    refused unless ``fstat`` says it is a regular file (symlinks, FIFOs, sockets, devices and
    directories raise ``NotRegularFileError``), and refused before reading when over the bound
    (``FileTooLargeError``). Elsewhere: the sandbox's own ``read_file`` (docker's copies an
    archive, which does not block on a FIFO), bounded in time and size.
    """
    ours = scievals_sandbox(env)
    if ours is not None:
        return await ours.read_regular(path, max_bytes)
    with anyio.fail_after(FOREIGN_READ_SECONDS):
        data = await env.read_file(path, text=False)
    if len(data) > max_bytes:
        raise FileTooLargeError(path, len(data), max_bytes)
    return data


async def run_file(env: SandboxEnvironment, job: FileJob) -> FileRun:
    """Run ``job`` (output kept as tails) and read the file it keeps into the harness's spool
    (``kept.py``), in a directory of the program's own:
    in ours a fresh sample directory; in a container of our runtime image through
    ``container.py`` (one program at a time, the container cleared between them); in any
    other sandbox as its own ``write_file``, ``exec`` and ``read_file`` do it. The kept
    file's read error is returned, not raised."""
    kind, inner = backend(env)
    if kind != "native":
        ran = await _retried(
            lambda: container.run_file(inner, job, FOREIGN_TAIL_BYTES),
            (container.RunnerError, *MACHINERY_ERRORS),
        )
        if isinstance(ran, Ending):
            return FileRun(ran, None, None)
        if ran is not None:
            return ran  # else not our image: the provider's own file and exec calls, below
    async with own_directory(env) as box:
        await box.write_file(job.name, job.source)
        outcome = await run_program(box, job.argv, timeout=job.timeout, output="tail")
        if job.keep is None:
            return FileRun(outcome, None, None)
        try:
            return FileRun(outcome, await _keep(box, job.keep, job.max_keep), None)
        except OSError as exc:  # missing, over the bound, not a regular file, ...
            return FileRun(outcome, None, exc)


async def _keep(env: SandboxEnvironment, path: str, max_bytes: int) -> KeptFile:
    """The file ``path`` copied into the harness's spool: it waits on disk, not in memory."""
    ours = scievals_sandbox(env)
    if ours is not None:
        return await ours.keep_regular(path, max_bytes)
    data = await read_regular_file(env, path, max_bytes)
    return await anyio.to_thread.run_sync(keep_bytes, data)


@asynccontextmanager
async def exclusive(env: SandboxEnvironment) -> AsyncIterator[None]:
    """Wait for a turn of the sandbox's container, where programs run one at a time (in ours
    every program has a directory and limits of its own: no wait; in a fleet of containers,
    ``docker_pool.py``, the program takes the next free one, and there are more containers
    than CPU slots). Taken before a CPU slot, so that a program waiting for its container
    holds no slot."""
    kind, inner = backend(env)
    if kind != "container":
        yield
        return
    async with container.turn(inner):
        yield


@asynccontextmanager
async def own_directory(env: SandboxEnvironment) -> AsyncIterator[SandboxEnvironment]:
    """A sandbox for one program with a directory (and disk quota) of its own, so that what one
    program writes can neither reach nor crowd out another of the same sample. In ours that is
    a new sample directory with the same limits, removed afterwards; another provider's sandbox
    (a container) is used as it is."""
    ours = scievals_sandbox(env)
    if ours is None:
        yield env
        return
    box = await anyio.to_thread.run_sync(ScievalsSandbox, ours.config, ours.engine)
    try:
        yield box
    finally:
        await anyio.to_thread.run_sync(box.cleanup)
