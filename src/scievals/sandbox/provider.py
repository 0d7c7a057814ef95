"""``ScievalsSandbox``: the Inspect sandbox provider (``--sandbox scievals``).

Each sample gets a private directory; every ``exec`` runs isolated in it (see ``engine.py`` and
``inside/zygote.py``). Python programs (``python3 -c CODE`` / ``python3 FILE.py``) run in a fork of a
warm interpreter that has imported numpy, scipy, sympy and matplotlib once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from pathlib import Path
from typing import Literal, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUserUnsupportedError,
    sandboxenv,
)
from pydantic import BaseModel, field_validator

from scievals.sandbox import sampledir
from scievals.sandbox.ending import Ending, infrastructure
from scievals.sandbox.engine import Engine, Request, SandboxError, engine
from scievals.sandbox.files import (
    FileTooLargeError,
    NotRegularFileError,
    keep_regular,
    read_regular,
    write_regular,
)
from scievals.sandbox.kept import KeptFile
from scievals.sandbox.limits import Limits
from scievals.sandbox.runtime import DEFAULT_RUNTIME, check_runtimes, runtime_environment

_DEFAULTS = Limits()
NOTE = "scievals-sandbox: "
AGENT_ENVIRONMENT = "agent"
"""The environment an agent's tools run in, apart from those its answers are graded in."""


class ScievalsSandboxConfig(BaseModel, frozen=True):
    """Configuration for ``sandbox=("scievals", ScievalsSandboxConfig(...))`` (all optional)."""

    # Defaults are the engine's own (``Limits``), so the two cannot drift apart.
    memory_gib: float = _DEFAULTS.memory_gib
    cpu_seconds: float = _DEFAULTS.cpu_seconds
    wall_seconds: float = _DEFAULTS.wall_seconds
    processes: int = _DEFAULTS.processes
    file_mib: int = _DEFAULTS.file_mib
    open_files: int = _DEFAULTS.open_files
    output_kib: int = _DEFAULTS.output_kib
    tmp_mib: int = _DEFAULTS.tmp_mib
    disk_mib: int = _DEFAULTS.disk_mib
    inodes: int = _DEFAULTS.inodes
    cpus: float = _DEFAULTS.cpus
    """CPU bandwidth of each execution, all its processes together (0: no cap)."""
    max_concurrency: int | None = None
    """Executions at once in this process (default: the number of CPUs)."""
    runtimes: tuple[str, ...] = (DEFAULT_RUNTIME,)
    """Scoring runtimes each sample gets: the first as ``default``, each other one as the
    environment ``runtime_environment(NAME)`` names (see ``runtime.py``)."""
    agent: bool = False
    """Each sample also gets ``AGENT_ENVIRONMENT``: the first runtime, a directory of its own."""

    @field_validator("runtimes", mode="before")
    @classmethod
    def _known_runtimes(cls, value: object) -> tuple[str, ...]:
        return check_runtimes(value)  # type: ignore[arg-type]

    def limits(self) -> Limits:
        fields = Limits.__dataclass_fields__
        return Limits(**{k: v for k, v in self.model_dump().items() if k in fields})


def _config(config: SandboxEnvironmentConfigType | None) -> ScievalsSandboxConfig:
    if isinstance(config, ScievalsSandboxConfig):
        return config
    if isinstance(config, BaseModel):
        return ScievalsSandboxConfig(**config.model_dump())
    if isinstance(config, str) and config:
        return ScievalsSandboxConfig.model_validate_json(Path(config).read_text())
    return ScievalsSandboxConfig()


_limiters: dict[tuple[int, int], anyio.CapacityLimiter] = {}


def _limiter(size: int | None) -> anyio.CapacityLimiter:
    """One limiter per event loop and size (anyio primitives belong to a loop)."""
    n = size or os.cpu_count() or 1
    key = (id(asyncio.get_running_loop()), n)
    if key not in _limiters:
        _limiters[key] = anyio.CapacityLimiter(n)
    return _limiters[key]


@sandboxenv(name="scievals")
class ScievalsSandbox(SandboxEnvironment):
    """A private directory per sample; isolated, limited executions in it."""

    def __init__(
        self, config: ScievalsSandboxConfig | None = None, eng: Engine | None = None
    ) -> None:
        super().__init__()
        self.config = config or ScievalsSandboxConfig()
        self.engine = eng or engine()
        limits = self.config.limits()
        # Children run as other uids sharing one group; when root the directory is a tmpfs
        # capped in bytes and inodes.
        self.directory = sampledir.create(
            self.engine.uids.gid if self.engine.uids is not None else None,
            limits.disk_mib * 2**20,
            limits.inodes,
            tmpfs=self.engine.disk_caps,
        )

    # -- lifecycle

    @classmethod
    def config_deserialize(cls, config: dict) -> BaseModel:
        return ScievalsSandboxConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Every runtime built now; the first one's zygote started (the others' start when a
        program first needs them, as the later runtimes only see what the first failed)."""
        first, *others = _config(config).runtimes
        await anyio.to_thread.run_sync(lambda: engine(first).ensure_started())
        for name in others:
            await anyio.to_thread.run_sync(engine, name)

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        chosen = _config(config)
        environments: dict[str, SandboxEnvironment] = {}
        for index, name in enumerate(chosen.runtimes):
            eng = await anyio.to_thread.run_sync(engine, name)
            environments[runtime_environment(name, index)] = cls(chosen, eng)
        if chosen.agent:
            first = await anyio.to_thread.run_sync(engine, chosen.runtimes[0])
            environments[AGENT_ENVIRONMENT] = cls(chosen, first)
        return environments

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for env in environments.values():
            if isinstance(env, ScievalsSandbox):
                env.cleanup()

    def cleanup(self) -> None:
        """Remove the sample's directory and everything in it; never raises."""
        sampledir.remove(self.directory)

    # -- exec

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run ``cmd`` isolated; ``timeout`` raises TimeoutError (after the whole tree is killed).

        Inspect's contract, kept for any task: a run that hit a limit returns 137 with a last
        stderr line ``scievals-sandbox: killed: REASON``; a sandbox failure (after one retry)
        raises SandboxError. Scorers should use ``execution.run_program`` instead: structured,
        and unforgeable by what the program prints. ``timeout_retry`` is ignored: a program
        that timed out is not run again.
        """
        if user is not None:
            raise SandboxUserUnsupportedError(
                "the scievals sandbox runs every program as its own "
                "unprivileged user; `user` is not supported"
            )
        res = await self.execute(
            cmd, input=input, cwd=cwd, env=env, timeout=timeout, concurrency=concurrency
        )
        if res.infrastructure:
            raise SandboxError(res.infrastructure)
        if res.limit == "timeout":
            raise TimeoutError(f"command timed out after {timeout} s (process tree killed)")
        stdout, stderr = res.stdout, res.stderr
        cap = self.config.output_kib * 1024
        if res.limit == "output":
            note = "\n[{} truncated: first {} bytes kept]\n"
            if len(stdout.encode(errors="replace")) >= cap:
                stdout += note.format("stdout", cap)
            if len(stderr.encode(errors="replace")) >= cap:
                stderr += note.format("stderr", cap)
        if res.reason:
            stderr += f"\n{NOTE}killed: {res.reason}\n"
        return ExecResult(
            success=res.returncode == 0, returncode=res.returncode, stdout=stdout, stderr=stderr
        )

    async def execute(
        self,
        cmd: list[str],
        *,
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: int | None = None,
        concurrency: bool = True,
        output: Literal["limit", "tail"] = "limit",
    ) -> Ending:
        """Run ``cmd`` isolated and return the engine's structured outcome. A machinery failure
        (zygote or supervisor died, broken channel) is retried once, restarting the zygote if
        needed; a second one gives an ``infrastructure`` outcome instead of raising. With
        ``output="tail"`` a stream over the output limit keeps its last bytes and the program
        goes on (a step program is never failed for printing)."""
        if not cmd:
            raise ValueError("empty command")
        work = str(self.directory)
        run_cwd = work if cwd is None else os.path.normpath(os.path.join(work, cwd))
        data = input.encode() if isinstance(input, str) else (input or b"")
        req = Request(
            argv=list(cmd),
            workdir=work,
            cwd=run_cwd,
            env=dict(env or {}),
            input=data,
            timeout=timeout,
            limits=self.config.limits(),
            disk="sample directory" if self.engine.disk_caps else None,
            output=output,
        )
        limiter = _limiter(self.config.max_concurrency) if concurrency else None
        if limiter is not None:
            await limiter.acquire()
        started = time.monotonic()
        try:
            failures = []
            for _ in range(2):
                try:
                    return await self._run(req)
                except SandboxError as exc:
                    failures.append((str(exc).strip().splitlines() or ["?"])[0][:500])
            return infrastructure(
                "the sandbox failed twice: " + "; then: ".join(failures),
                time.monotonic() - started,
            )
        finally:
            if limiter is not None:
                limiter.release()

    async def _run(self, req: Request) -> Ending:
        channel = await anyio.to_thread.run_sync(self.engine.open_channel)
        try:
            return await anyio.to_thread.run_sync(
                self.engine.run, req, channel, abandon_on_cancel=True
            )
        finally:
            with contextlib.suppress(OSError):  # on cancellation: the supervisor kills the tree
                channel.sock.shutdown(socket.SHUT_RDWR)

    # -- files (the program controls the directory: see files.py)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode() if isinstance(contents, str) else contents
        write_regular(self.directory, file, data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Inspect's read_file, made safe: regular files only (a planted symlink, FIFO, socket or
        device raises NotRegularFileError, a PermissionError; a directory IsADirectoryError),
        never blocking, size checked before reading (OutputLimitExceededError)."""
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        try:
            data = await self.read_regular(file, limit)
        except NotRegularFileError as exc:
            if exc.kind == "a directory":  # Inspect's contract names this one
                raise IsADirectoryError(str(exc)) from None
            raise
        except FileTooLargeError:
            raise OutputLimitExceededError(
                limit_str=f"{limit} bytes", truncated_output=None
            ) from None
        return data.decode("utf-8") if text else data

    async def read_regular(self, file: str, max_bytes: int) -> bytes:
        """A regular file of the sample directory, at most ``max_bytes`` (see files.py)."""
        return await anyio.to_thread.run_sync(read_regular, self.directory, file, max_bytes)

    async def keep_regular(self, file: str, max_bytes: int) -> KeptFile:
        """A regular file of the sample directory, at most ``max_bytes``, copied into the
        harness's spool so that it outlives the directory (see files.py, kept.py)."""
        return await anyio.to_thread.run_sync(keep_regular, self.directory, file, max_bytes)
