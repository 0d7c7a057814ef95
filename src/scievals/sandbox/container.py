"""Step programs in a container of a scoring runtime image, with our sandbox's guarantees.

The harness side of ``inside/container_runner.py``: one ``exec`` per program carries the program and
its limits in, and its structured outcome, output tails and the file it was asked to keep out
(larger files come in chunks). Programs of one container run one at a time, so that the
container's kernel limits are the program's own and nothing of one program (processes, files,
IPC) is left for the next. Everything the container answers is untrusted: bounded by
Inspect's exec output limit, then checked field by field.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import secrets
import weakref
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import anyio
from inspect_ai.util import (
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentLimits,
)

from scievals.sandbox import seccomp
from scievals.sandbox.ending import LIMITS, Ending
from scievals.sandbox.files import FileTooLargeError, NotRegularFileError
from scievals.sandbox.image import RUNNER_MIB
from scievals.sandbox.kept import CHUNK_BYTES as KEPT_CHUNK
from scievals.sandbox.kept import KeptFile, KeptWriter
from scievals.sandbox.limits import Limits
from scievals.sandbox.runtime import WARM_MODULES
from scievals.shipped import SANDBOX, program

PREFIX = "SCIEVALS-RUNNER "
INLINE_BYTES = 4 << 20
"""A kept file up to this size comes back with the outcome (Inspect caps an exec's output at
10 MiB; the two output tails take up to 2 MiB more, all in base64)."""
CHUNK_BYTES = 6 << 20
EXEC_MARGIN = 60
"""Seconds the exec may take beyond the program's own timeout (set-up, clean-up) before
Inspect's timeout stops the runner itself."""
MAX_REASON = 400


class RunnerError(RuntimeError):
    """The runner's answer is missing or malformed: the machinery failed, not the program."""


@dataclass(frozen=True)
class FileJob:
    """One program to run from a file: ``source`` written to ``name`` in a directory of its
    own, ``argv`` run there for at most ``timeout`` s, and the file ``keep`` it leaves read back
    (at most ``max_keep`` bytes)."""

    name: str
    source: str
    argv: list[str]
    timeout: int
    keep: str | None = None
    max_keep: int = 0


@dataclass(frozen=True)
class FileRun:
    """One program run from a file, and the file it was asked to keep, as read."""

    outcome: Ending
    kept: KeptFile | None
    """The kept file, waiting in the harness's spool (``kept.py``)."""
    kept_error: OSError | None


class _State:
    """What the harness knows of one container: its turn (one program at a time, re-entered
    freely by the task holding it: a scorer takes it before its CPU slot, ``run_file`` again
    inside), whether its runner refused or failed, the secret and last report of its warm
    server, and the Docker container behind it."""

    def __init__(self) -> None:
        self.lock = anyio.Lock()
        self.owner: int | None = None
        self.refused: str | None = None
        """Why the runner refused (not one of our runtime images): nothing is run there."""
        self.failed = False
        """Its runner failed once (no answer, a malformed one, a timeout of its own)."""
        self.token = secrets.token_hex(16)
        """The secret its warm server answers to (never in the container's files)."""
        self.warm: dict[str, Any] | None = None
        """Its warm server, as the runner last reported it (pid, start time, name)."""
        self.container: str | None = None
        """The Docker container behind it ("" where there is none); None until looked up."""

    @property
    def usable(self) -> bool:
        return self.refused is None and not self.failed


_states: weakref.WeakKeyDictionary[SandboxEnvironment, _State] = weakref.WeakKeyDictionary()


def _state(env: SandboxEnvironment) -> _State:
    found = _states.get(env)
    if found is None:
        found = _states[env] = _State()
    return found


@asynccontextmanager
async def turn(env: SandboxEnvironment) -> AsyncIterator[SandboxEnvironment]:
    """Hold a container for one program (and the reads of what it left): ``env`` itself, or
    for a view of a fleet (``docker_pool.SharedContainer``) the one it leases."""
    lease = getattr(env, "lease", None)
    if lease is not None:
        async with lease() as leased, turn(leased) as held:
            yield held
        return
    found = _state(env)
    me = anyio.get_current_task().id
    if found.owner == me:
        yield env
        return
    async with found.lock:
        found.owner = me
        try:
            yield env
        finally:
            found.owner = None


def failed(env: SandboxEnvironment) -> bool:
    """Whether the runner of the container ``env`` failed once (it is not used again)."""
    return _state(env).failed


def _warm_server(value: Any) -> dict[str, Any] | None:
    """The warm server the runner reports, if well formed (else none is assumed)."""
    if not isinstance(value, dict) or set(value) != {"pid", "start", "name"}:
        return None
    pid, start, name = value["pid"], value["start"], value["name"]
    if type(pid) is int and type(start) is int and isinstance(name, str) and len(name) < 64:
        return {"pid": pid, "start": start, "name": name}
    return None


@cache
def _filters() -> dict[str, list[str]]:
    """Machine -> the sandbox's seccomp filter and the guard (the runner takes its own)."""
    return {
        machine: [
            base64.b64encode(build(machine)).decode() for build in (seccomp.build, seccomp.guard)
        ]
        for machine in seccomp.TARGETED
    }


def _server_fields(env: SandboxEnvironment) -> dict[str, Any]:
    """What a runner needs to find, or start, the container's warm server."""
    return {
        "runner": program(SANDBOX, "container_runner"),  # the warm server is the runner's
        "modules": WARM_MODULES,
        "token": _state(env).token,
        "warm": _state(env).warm,
    }


async def run_file(env: SandboxEnvironment, job: FileJob, tail_bytes: int) -> FileRun | None:
    """Run ``job`` in the container's working directory;
    None when the container is not one of our runtime images (the runner refused, touching
    nothing). Raises ``RunnerError`` (or the sandbox's own errors) when the machinery fails."""
    async with turn(env) as env:  # the container itself, or the one a fleet leases
        state = _state(env)
        if state.refused is not None:
            return None
        request = {
            "op": "run",
            "file": job.name,
            "source": job.source,
            "argv": job.argv,
            "keep": job.keep,
            "max_keep": job.max_keep,
            "inline": INLINE_BYTES,
            "timeout": job.timeout,
            "tail": tail_bytes,
            "limits": Limits().wire(),
            "runner_bytes": RUNNER_MIB << 20,
            "filters": _filters(),
            "marks": list(seccomp.FLOOR_MARKS),
            **_server_fields(env),
        }
        answer = await _call(env, request, job.timeout + EXEC_MARGIN)
        if "refused" in answer:
            state.refused = str(answer["refused"])[:MAX_REASON]
            return None
        state.warm = _warm_server(answer.get("warm"))
        outcome = _outcome(answer, tail_bytes)
        kept, error = await _kept(env, answer.get("kept"), job.keep, job.max_keep)
        return FileRun(outcome, kept, error)


async def clear(env: SandboxEnvironment) -> bool:
    """Empty the container as a program finds it, its warm server running (started now if
    need be), before it serves another sample or its first; False when it cannot be trusted
    to: not ours, or its runner failed."""
    state = _state(env)
    if not state.usable:
        return False
    request = {"op": "clear", **_server_fields(env)}
    async with turn(env):
        try:
            answer = await _call(env, request, EXEC_MARGIN)
        except Exception:  # noqa: BLE001 - any failure: the container is not handed on
            return False
        state.warm = _warm_server(answer.get("warm"))
    return answer.get("cleared") is True


async def _call(env: SandboxEnvironment, request: dict[str, Any], timeout: int) -> dict[str, Any]:
    try:
        return await _answer(env, request, timeout)
    except BaseException:
        _state(env).failed = True
        raise


async def _answer(env: SandboxEnvironment, request: dict[str, Any], timeout: int) -> dict[str, Any]:
    cmd = ["python3", "-I", "-S", "-c", program(SANDBOX, "container_runner")]
    stdin = json.dumps(request).encode()
    container = await _container(env)
    try:
        if container:
            stdout, stderr, code = await _docker_exec(container, cmd, stdin, timeout)
        else:
            res = await env.exec(cmd, input=stdin, timeout=timeout, timeout_retry=False)
            stdout, stderr, code = res.stdout, res.stderr, res.returncode
    except OutputLimitExceededError as exc:
        raise RunnerError(f"the runner's answer is over Inspect's limit ({exc.limit_str})") from exc
    except TimeoutError as exc:
        raise RunnerError(f"the runner did not answer within {timeout} s") from exc
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith(PREFIX)), None)
    if line is None:
        tail = (stderr.strip().splitlines() or [f"exit {code}"])[-1][:MAX_REASON]
        raise RunnerError(f"the runner gave no answer: {tail}")
    try:
        answer = json.loads(line[len(PREFIX) :])
    except ValueError as exc:
        raise RunnerError("the runner's answer is not JSON") from exc
    if not isinstance(answer, dict):
        raise RunnerError("the runner's answer is not an object")
    return answer


async def _container(env: SandboxEnvironment) -> str:
    """The Docker container behind ``env`` (from Inspect's public ``connection``), or "" where
    there is none (k8s, a test's fake): one ``docker exec`` costs a seventh of the CPU of the
    ``docker compose exec`` that Inspect's exec runs."""
    state = _state(env)
    if state.container is None:
        found = ""
        try:
            connection = await env.connection()
        except Exception:  # noqa: BLE001 - any provider without connections, or a failure
            connection = None
        if connection is not None and connection.type == "docker" and connection.container:
            found = connection.container
        state.container = found
    return state.container


async def _docker_exec(
    container: str, cmd: list[str], stdin: bytes, timeout: int
) -> tuple[str, str, int]:
    """``docker exec`` of ``cmd`` as the container's user, bounded as Inspect bounds an exec:
    its output (``MAX_EXEC_OUTPUT_SIZE``) and, inside the container, its time (``timeout``)."""
    limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
    wrapped = ["/usr/bin/timeout", "-k", "5s", f"{timeout}s", *cmd]
    proc = await asyncio.create_subprocess_exec(
        "docker",
        "exec",
        "-i",
        container,
        *wrapped,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout + 15):
            out, err, _ = await asyncio.gather(
                _bounded(proc.stdout, limit), _bounded(proc.stderr, limit), _feed(proc, stdin)
            )
            code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if code == 124:
        raise TimeoutError(f"the runner ran past {timeout} s")
    return out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"), code


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data)
    with contextlib.suppress(ConnectionError):
        await proc.stdin.drain()
    proc.stdin.close()


async def _bounded(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    data = bytearray()
    while stream is not None and (chunk := await stream.read(1 << 16)):
        data += chunk
        if len(data) > limit:
            raise OutputLimitExceededError(
                f"{limit // 2**20} MiB", data[:limit].decode(errors="replace")
            )
    return bytes(data)


def _text(value: Any, cap: int) -> str:
    if not isinstance(value, str) or len(value) > (cap * 4) // 3 + 8:
        raise RunnerError("the runner's output tail is malformed")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RunnerError("the runner's output tail is not base64") from exc
    return data[-cap:].decode("utf-8", errors="replace")


def _outcome(answer: dict[str, Any], tail_bytes: int) -> Ending:
    returncode, limit, reason = answer.get("returncode"), answer.get("limit"), answer.get("reason")
    seconds = answer.get("seconds")
    if not (returncode is None or (type(returncode) is int and 0 <= returncode < 512)):
        raise RunnerError("the runner's exit status is malformed")
    if limit is not None and limit not in LIMITS:
        raise RunnerError("the runner named no known limit")
    if reason is not None and not isinstance(reason, str):
        raise RunnerError("the runner's reason is malformed")
    if not isinstance(seconds, int | float) or not 0 <= seconds < 1e7:
        raise RunnerError("the runner's time is malformed")
    if returncode is None and limit != "timeout":
        raise RunnerError("the runner gave no exit status")
    return Ending(
        returncode,
        _text(answer.get("stdout"), tail_bytes),
        _text(answer.get("stderr"), tail_bytes),
        limit,
        reason[:MAX_REASON] if reason else None,
        float(seconds),
    )


async def _kept(
    env: SandboxEnvironment, kept: Any, name: str | None, max_keep: int
) -> tuple[KeptFile | None, OSError | None]:
    """The kept file, inflated chunk by chunk into the harness's spool as the runner sends it
    (compressed), or the error a read in our own sandbox would raise."""
    if name is None:
        return None, None
    if not isinstance(kept, dict) or not kept:
        raise RunnerError("the runner's kept file is malformed")
    what, value = next(iter(kept.items()))
    if len(kept) == 1:  # the refusals; data comes with its size
        if what == "missing":
            return None, FileNotFoundError(f"{name}: no such file")
        if what == "not_regular":
            return None, NotRegularFileError(f"{name}: {str(value)[:MAX_REASON]}")
        if what == "too_large" and type(value) is int:
            return None, FileTooLargeError(name, value, max_keep)
        raise RunnerError("the runner's kept file is malformed")
    size = kept.get("size")
    if set(kept) != {what, "size"} or type(size) is not int or not 0 <= size <= max_keep:
        raise RunnerError("the runner's kept file is malformed")
    inline = what == "zlib" and isinstance(value, str)
    if not (inline and len(value) <= (INLINE_BYTES * 4) // 3 + 8) and not (
        what == "held" and type(value) is int and INLINE_BYTES < value <= _packed_bound(size)
    ):
        raise RunnerError("the runner's kept file is malformed")
    inflater = Inflater(size)
    try:
        if inline:
            await anyio.to_thread.run_sync(inflater.feed, _decode(value))
        else:
            fetched = 0
            while fetched < value:
                length = min(CHUNK_BYTES, value - fetched)
                last = fetched + length >= value
                request = {"op": "fetch", "offset": fetched, "length": length, "last": last}
                chunk = _decode((await _call(env, request, 120)).get("data"))
                if not chunk or len(chunk) > length:
                    raise RunnerError("the runner's chunk of the kept file is malformed")
                await anyio.to_thread.run_sync(inflater.feed, chunk)
                fetched += len(chunk)
        return inflater.close(), None
    except BaseException:
        inflater.abandon()
        raise


def _packed_bound(size: int) -> int:
    """The most zlib can write for ``size`` bytes (stored blocks and the stream's frame)."""
    return size + (size >> 10) + 64


class Inflater:
    """The runner's compressed kept file, inflated as its chunks arrive straight into the
    harness's spool (``kept.py``): exactly ``size`` bytes, never more (a bomb stops there), and
    never more than one chunk of it in memory."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._inflater = zlib.decompressobj()
        self._writer = KeptWriter(size)

    def feed(self, packed: bytes) -> None:
        try:
            while packed and not self._inflater.eof:
                data = self._inflater.decompress(packed, KEPT_CHUNK)
                if self._writer.size + len(data) > self.size:
                    raise RunnerError("the runner's kept file is not the size it said")
                self._writer.write(data)
                packed = self._inflater.unconsumed_tail
        except zlib.error as exc:
            raise RunnerError("the runner's kept file is not zlib") from exc
        if packed:
            raise RunnerError("the runner's kept file is not the size it said")

    def close(self) -> KeptFile:
        if self._writer.size != self.size or not self._inflater.eof or self._inflater.unused_data:
            raise RunnerError("the runner's kept file is not the size it said")
        return self._writer.close()

    def abandon(self) -> None:
        self._writer.abandon()


def _decode(value: Any) -> bytes:
    if not isinstance(value, str) or len(value) > (CHUNK_BYTES * 4) // 3 + 8:
        raise RunnerError("the runner's data is malformed")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RunnerError("the runner's data is not base64") from exc
