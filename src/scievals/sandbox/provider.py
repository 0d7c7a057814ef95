"""``ScievalsSandbox``: the Inspect sandbox provider (``--sandbox scievals``).

Each sample gets a private directory; every ``exec`` runs isolated in it (see ``engine.py`` and
``_zygote.py``). Python programs (``python3 -c CODE`` / ``python3 FILE.py``) run in a fork of a
warm interpreter that has imported numpy, scipy, sympy and matplotlib once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Literal, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    sandboxenv,
)
from inspect_ai.util._sandbox.environment import SandboxUserUnsupportedError
from inspect_ai.util._sandbox.limits import SandboxEnvironmentLimits
from pydantic import BaseModel

from scievals.sandbox.engine import Engine, Limits, Request, engine

_DEFAULTS = Limits()


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
    max_concurrency: int | None = None
    """Executions at once in this process (default: the number of CPUs)."""

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
        self.directory = Path(tempfile.mkdtemp(prefix=f"scievals-sample-{os.getpid()}-"))
        if self.engine.uids is not None:  # children run as other uids sharing one group
            os.chown(self.directory, 0, self.engine.uids.gid)
            self.directory.chmod(0o2770)

    # -- lifecycle

    @classmethod
    def config_deserialize(cls, config: dict) -> BaseModel:
        return ScievalsSandboxConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        await anyio.to_thread.run_sync(lambda: engine().ensure_started())

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        eng = await anyio.to_thread.run_sync(engine)
        return {"default": cls(_config(config), eng)}

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
        shutil.rmtree(self.directory, ignore_errors=True)

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

        A run that hit a limit returns 137 with a last stderr line ``scievals-sandbox: killed:
        REASON``. ``timeout_retry`` is ignored: a program that timed out is not run again.
        """
        if user is not None:
            raise SandboxUserUnsupportedError(
                "the scievals sandbox runs every program as its own "
                "unprivileged user; `user` is not supported"
            )
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
        )
        limiter = _limiter(self.config.max_concurrency) if concurrency else None
        if limiter is not None:
            await limiter.acquire()
        try:
            result = await self._run(req)
        finally:
            if limiter is not None:
                limiter.release()
        if result["timed_out"]:
            raise TimeoutError(f"command timed out after {timeout} s (process tree killed)")
        return ExecResult(
            success=result["returncode"] == 0,
            returncode=result["returncode"],
            stdout=result["stdout"].decode(errors="replace"),
            stderr=result["stderr"].decode(errors="replace"),
        )

    async def _run(self, req: Request) -> dict:
        channel = await anyio.to_thread.run_sync(self.engine.open_channel)
        try:
            return await anyio.to_thread.run_sync(
                self.engine.run, req, channel, abandon_on_cancel=True
            )
        finally:
            with contextlib.suppress(OSError):  # on cancellation: the supervisor kills the tree
                channel.shutdown(socket.SHUT_RDWR)

    # -- files

    def _open(self, file: str, flags: int, create_dirs: bool = False) -> int:
        """Open ``file`` inside the sample dir without following any symlink (the program may
        have planted some), refusing paths that leave it."""
        path = Path(file)
        if path.is_absolute():
            try:
                path = path.relative_to(self.directory)
            except ValueError:
                raise PermissionError(f"{file}: outside the sandbox's directory") from None
        parts = [p for p in path.parts if p not in ("", ".")]
        if not parts or ".." in parts:
            raise PermissionError(f"{file}: not a file inside the sandbox's directory")
        dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                if create_dirs:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o2775, dir_fd=dir_fd)
                try:
                    nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise PermissionError(f"{file}: a symlink on the path") from None
                    raise
                os.close(dir_fd)
                dir_fd = nxt
            try:
                return os.open(parts[-1], flags | os.O_NOFOLLOW, 0o664, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise PermissionError(f"{file}: is a symlink") from None
                raise
        finally:
            os.close(dir_fd)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode() if isinstance(contents, str) else contents
        fd = self._open(file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, create_dirs=True)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        fd = self._open(file, os.O_RDONLY)
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
            if size > limit:
                raise OutputLimitExceededError(limit_str=f"{limit} bytes", truncated_output=None)
            data = fh.read()
        return data.decode("utf-8") if text else data
