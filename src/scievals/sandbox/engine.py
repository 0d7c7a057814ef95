"""The harness side of the sandbox: isolation mode, limits, the zygote process, uids, sample dirs.

One ``Engine`` per harness process owns one zygote (see ``inside/zygote.py``); every execution of every
sample goes through it. Nothing here runs model-written code itself.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import errno
import fcntl
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypedDict

from scievals.sandbox import sampledir, seccomp
from scievals.sandbox.cgroups import Group
from scievals.sandbox.ending import Ending
from scievals.sandbox.enforce import Enforcement, enforcement
from scievals.sandbox.inside import framing
from scievals.sandbox.limits import Limits
from scievals.sandbox.runtime import (
    DEFAULT_RUNTIME,
    REPORTED,
    WARM_MODULES,
    Runtime,
    ensure_runtime,
)
from scievals.shipped import SANDBOX, program

MODES = ("unshare", "userns", "rlimits-only")
THREAD_VARS = (
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OMP_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/mime.types",
)
PYTHON_NAMES = ("python", "python3", f"python3.{sys.version_info.minor}")
UID_SLOTS = 4096
STARTUP_SECONDS = 180  # the zygote's warm imports, on a loaded machine
CONTROL_SECONDS = 30  # handing a channel to the zygote
ANSWER_MARGIN_SECONDS = 60  # past the wall clock, a supervisor that has not answered is broken


class SandboxError(RuntimeError):
    """The sandbox machinery itself failed (not the program it ran)."""


# ---------------------------------------------------------------- isolation mode

_mode_cache: dict[str, tuple[str, str]] = {}


def detect_mode(requested: str | None = None) -> tuple[str, str]:
    """The strongest isolation this host allows, and a sentence saying why if it is not the best.

    ``requested`` (or ``SCIEVALS_SANDBOX_MODE``) may ask for a weaker mode; asking for a stronger
    one than the host allows is an error rather than a silent downgrade.
    """
    requested = requested or os.environ.get("SCIEVALS_SANDBOX_MODE") or "auto"
    if requested in _mode_cache:
        return _mode_cache[requested]
    if requested not in ("auto", *MODES):
        raise ValueError(
            f"unknown sandbox mode {requested!r}; choose from auto, {', '.join(MODES)}"
        )
    failures = []
    candidates = MODES if requested == "auto" else MODES[MODES.index(requested) :]
    for mode in candidates:
        if mode == "rlimits-only":
            why = "; ".join(failures)
            break
        if mode == "unshare" and os.geteuid() != 0:
            failures.append("unshare mode needs root (it runs children as uids of their own)")
            continue
        ok, err = _probe(mode)
        if ok:
            why = "; ".join(failures)
            break
        failures.append(f"{mode} mode unavailable: {err}")
    if requested != "auto" and mode != requested:
        raise SandboxError(f"sandbox mode {requested!r} is not available here: {why}")
    if mode == "rlimits-only":
        why = (why + "; " if why else "") + (
            "WEAKER ISOLATION: no network, mount or pid namespaces; the program sees the host's "
            "file system and network (only rlimits, a separate uid when root, and a clean "
            "environment apply)"
        )
        print(f"scievals sandbox: warning: {why}", file=sys.stderr)
    _mode_cache[requested] = (mode, why)
    return mode, why


def _probe(mode: str) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="scievals-probe-") as scratch:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", program(SANDBOX, "probes"), "probe", mode, scratch],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
    err = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return proc.returncode == 0, err


# ---------------------------------------------------------------- uids


UID_LOCKS = Path("/run" if os.path.isdir("/run") else "/tmp") / "scievals-uids"
"""One place for the whole machine, whatever TMPDIR each harness has (checked to be root's)."""


class UidPool:
    """Unprivileged uids of our own, one per running execution, so RLIMIT_NPROC means something
    and no execution can signal or trace another. Lock files make the choice safe across
    processes (two evals, pytest-xdist, runs with different HOME, cache or TMPDIR)."""

    def __init__(self, locks: Path = UID_LOCKS) -> None:
        self.base = self._base()
        self.gid = self.base
        self.dir = locks
        self.dir.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(self.dir)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
            raise SandboxError(f"{self.dir} must be a directory of root's that only root writes")

    @staticmethod
    def _base() -> int:
        best = (0, 0)
        for line in Path("/proc/self/uid_map").read_text().splitlines():
            inside, _, count = (int(x) for x in line.split())
            if count > best[1]:
                best = (inside, count)
        start, count = best
        if start + count > 1_500_000_000 + 2 * UID_SLOTS:
            return 1_500_000_000
        if count < 4 * UID_SLOTS:
            raise SandboxError(f"the uid map is too small to allocate sandbox uids ({count})")
        return start + count - 2 * UID_SLOTS

    def acquire(self) -> tuple[int, IO[str]]:
        offset = random.randrange(1, UID_SLOTS)
        for i in range(UID_SLOTS):
            uid = self.base + 1 + (offset + i) % (UID_SLOTS - 1)
            fh = open(self.dir / f"{uid}.lock", "w")  # noqa: SIM115 - held while in use
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                fh.close()
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    continue
                raise
            return uid, fh
        raise SandboxError("no free sandbox uid")


# ---------------------------------------------------------------- messages


def send_msg(sock: socket.socket, obj: Mapping[str, Any], fd: int | None = None) -> None:
    framing.send_msg(sock, obj, fd)


def recv_msg(sock: socket.socket) -> dict[str, Any]:
    return framing.recv_msg(sock)


# ---------------------------------------------------------------- the engine


@dataclass
class Request:
    """One execution, prepared by the provider."""

    argv: list[str]
    workdir: str
    cwd: str
    env: dict[str, str]
    input: bytes
    timeout: float | None
    limits: Limits
    disk: str | None = None  # how the supervisor names the sample dir if it is a capped tmpfs
    output: str = (
        "limit"  # "limit": over output_kib a stream kills; "tail": its last output_kib kept
    )


class ZygoteRequest(TypedDict):
    """What the harness sends for one execution (JSON over the zygote's socket), field by field;
    the zygote hands it to the execution's supervisor (``inside/zygote.py``, ``run``), which
    adds ``cgroup`` and ``cpu_rlimit`` before init reads it."""

    argv: list[str]
    """The command; ``python3 -c CODE`` / ``python3 FILE.py`` run in a fork of the warm zygote."""
    fast: bool
    """Whether ``argv`` is such a Python program (``_is_fast``)."""
    workdir: str
    """The sample directory on the host, bound as the program's working tree."""
    cwd: str
    """The program's working directory, as the program sees it."""
    env: dict[str, str]
    """The program's whole environment (the base environment and the call's own)."""
    input: str
    """Its standard input, base64."""
    timeout: float | None
    """The call's timeout in seconds (a ``timeout`` verdict), else the wall-clock limit holds."""
    limits: dict[str, Any]
    """``Limits.wire()``: CPU quota and seconds, memory, processes, file sizes, open files,
    output, /tmp and /dev/shm bytes and inodes."""
    uid: int | None
    """The execution's own uid (from the pool of ``UidPool``), None in rlimits-only mode."""
    gid: int | None
    disk: str | None
    """How the supervisor names the sample directory when it is a capped tmpfs (its quota)."""
    output: str
    """``limit``: a stream over the output limit kills; ``tail``: its last bytes are kept."""


class ZygoteAck(TypedDict):
    """The supervisor's first message (with its pidfd as an ancillary fd)."""

    cgroups: list[str]
    """The groups it made ahead of the request, removed by the harness afterwards."""


class ZygoteAnswer(TypedDict, total=False):
    """The supervisor's answer: ``error`` alone (the machinery failed, no verdict about the
    program), or every other field."""

    error: str
    returncode: int | None
    """The program's exit status (128 + signal when killed), None when stopped by ``timeout``."""
    stdout: str
    """Its kept standard output, base64 (the first or last bytes up to the output limit)."""
    stderr: str
    limit: str | None
    """The limit it was stopped for (``LIMITS`` in ``ending.py``), None when it just ended."""
    reason: str | None
    """The reason a person reads (``wall-clock limit (60 s)``, ``signal SIGSEGV``)."""
    seconds: float
    """Wall-clock seconds from the hand-over to init's end."""


class Engine:
    """Owns one runtime, the isolation mode and that runtime's zygote in this harness process."""

    def __init__(
        self,
        mode: str | None = None,
        enforced: Enforcement | None = None,
        runtime: str = DEFAULT_RUNTIME,
    ) -> None:
        self.runtime: Runtime = ensure_runtime(runtime)
        self.mode, self.mode_note = detect_mode(mode)
        self.enforced = enforced or enforcement()
        # Own uids need real root; in a user namespace only our own uid is mapped.
        self.uids = UidPool() if os.geteuid() == 0 and self.mode != "userns" else None
        self._lock = threading.Lock()
        self._zygote: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._dir: Path | None = None
        self._generation = 0  # bumped by every zygote start
        self._broken = False  # the current zygote failed a hand-over: replace it
        self.hello: dict[str, Any] = {}
        sampledir.sweep()  # what crashed harness processes left (their pid is in every name)
        self.enforced.cgroups.sweep()
        atexit.register(self.close)

    @property
    def disk_caps(self) -> bool:
        """Sample directories are tmpfs mounts capped in bytes and inodes."""
        return not self.enforced.disk_note

    # -- zygote lifecycle

    def base_env(self) -> dict[str, str]:
        bin_dir = self.runtime.root / "bin"
        env = {
            "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": str(self.runtime.mplconfig),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(dict.fromkeys(THREAD_VARS, "1"))
        return env

    def visible(self) -> list[str]:
        return [str(self.runtime.root), str(self.runtime.base_prefix), *ETC_FILES]

    def _start(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix=f"scievals-zygote-{os.getpid()}-"))
        (self._dir / "root").mkdir()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        filt = self.enforced.seccomp
        config = {
            "mode": self.mode,
            "warm": WARM_MODULES,
            "report": REPORTED,
            "root_mount": str(self._dir / "root"),
            "visible": self.visible(),
            "seccomp": base64.b64encode(filt).decode() if filt is not None else None,
            "guard": base64.b64encode(seccomp.guard()).decode() if filt is not None else None,
            "marks": list(seccomp.FLOOR_MARKS),
            "cgroups": self.enforced.cgroups.wire(),
        }
        # The zygote and its modules as one file in this private directory (``shipped.program``):
        # nothing of ours is on its path or in ``sys.modules`` when it runs a program.
        zygote = self._dir / "zygote.py"
        zygote.write_text(program(SANDBOX, "zygote"), "utf-8")
        with open(self._dir / "zygote.log", "wb") as log:
            self._zygote = subprocess.Popen(
                [str(self.runtime.python), "-I", "-B", str(zygote), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=self.base_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self._dir,
                start_new_session=True,
            )
        theirs.close()
        self._generation += 1
        self._broken = False
        try:
            ours.settimeout(STARTUP_SECONDS)
            send_msg(ours, config)
            self.hello = recv_msg(ours)
            ours.settimeout(CONTROL_SECONDS)
        except (EOFError, OSError, ValueError) as exc:
            log_tail = (self._dir / "zygote.log").read_text(errors="replace")[-2000:]
            ours.close()
            self._broken = True  # whatever state it is in, the next ensure_started replaces it
            raise SandboxError(f"the sandbox zygote did not start: {exc}\n{log_tail}") from exc
        if self.hello.get("failed"):
            print(
                f"scievals sandbox: warning: warm imports failed: {self.hello['failed']}",
                file=sys.stderr,
            )
        self._ctl = ours

    def ensure_started(self) -> dict[str, Any]:
        """Start the zygote, or replace it if it died or failed a hand-over."""
        with self._lock:
            if self._broken or self._zygote is None or self._zygote.poll() is not None:
                self._stop()
                self._start()
            return self.hello

    def _stop(self) -> None:
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        if self._zygote is not None:
            if self._broken:
                self._zygote.kill()
            try:
                self._zygote.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._zygote.kill()
                self._zygote.wait()
            self._zygote = None
        if self._dir is not None:
            sampledir.remove_tree(self._dir)
            self._dir = None
        self.enforced.cgroups.sweep_empty_own()

    def close(self) -> None:
        """Stop the zygote (running executions see the harness go and kill their trees)."""
        with self._lock:
            self._stop()

    # -- executions

    def open_channel(self) -> Channel:
        """A fresh socket to one new supervisor process."""
        self.ensure_started()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with self._lock:
            generation, ctl = self._generation, self._ctl
            try:
                if ctl is None:
                    raise OSError("the zygote is restarting")
                socket.send_fds(ctl, [b"x"], [theirs.fileno()])
            except OSError as exc:
                ours.close()
                self._mark_broken(generation)
                raise SandboxError(f"the sandbox zygote is gone: {exc}") from exc
            finally:
                theirs.close()
        return Channel(ours, generation)

    def _mark_broken(self, generation: int) -> None:
        """The zygote of ``generation`` failed: the next ``ensure_started`` replaces it (unless it
        has been replaced already)."""
        if generation == self._generation:
            self._broken = True

    def run(self, req: Request, channel: Channel) -> Ending:
        """Run one request on a channel from ``open_channel`` (blocking; call from a thread).
        Raises SandboxError when the machinery fails, and never hangs: the supervisor must
        acknowledge within CONTROL_SECONDS (else the zygote is replaced) and answer within the
        wall clock plus a margin (else it is killed)."""
        uid = lock = supervisor = None
        group: Group | None = None
        sock = channel.sock
        try:
            if self.uids is not None:
                uid, lock = self.uids.acquire()
            sock.settimeout(CONTROL_SECONDS)
            send_msg(sock, self._request(req, uid))
            try:
                ack, fd = framing.recv_msg_fd(sock)
                supervisor = _pidfd(fd)
            except (EOFError, OSError, ValueError, KeyError) as exc:
                self._mark_broken(channel.generation)
                raise SandboxError(f"no supervisor started: {type(exc).__name__}: {exc}") from exc
            # The supervisor made the groups ahead of the request; removing them is ours now.
            acked: ZygoteAck = ack
            group = Group(tuple(Path(d) for d in acked["cgroups"]))
            sock.settimeout((req.timeout or req.limits.wall_seconds) + ANSWER_MARGIN_SECONDS)
            result: ZygoteAnswer = recv_msg(sock)  # type: ignore[assignment]
        except (EOFError, OSError, ValueError) as exc:
            raise SandboxError(
                f"the sandbox supervisor failed: {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            sock.close()
            if supervisor is not None:  # it has answered (and exits) or is broken: gone now
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(supervisor, signal.SIGKILL)
                os.close(supervisor)
            if group is not None and not group.remove():  # before the uid is free again
                print(
                    f"scievals sandbox: warning: could not remove cgroups {group.dirs} "
                    "(the next engine start sweeps them)",
                    file=sys.stderr,
                )
            if lock is not None:
                lock.close()
        if "error" in result:
            raise SandboxError(f"sandbox failure: {failure_text(result['error'])}")
        return Ending(
            returncode=result["returncode"],
            stdout=base64.b64decode(result["stdout"]).decode(errors="replace"),
            stderr=base64.b64decode(result["stderr"]).decode(errors="replace"),
            limit=result["limit"],
            reason=result["reason"],
            seconds=result["seconds"],
        )

    def _request(self, req: Request, uid: int | None) -> ZygoteRequest:
        return {
            "argv": req.argv,
            "fast": _is_fast(req.argv),
            "workdir": req.workdir,
            "cwd": req.cwd,
            "env": {**self.base_env(), **req.env},
            "input": base64.b64encode(req.input).decode(),
            "timeout": req.timeout,
            "limits": req.limits.wire(),
            "uid": uid,
            "gid": self.uids.gid if self.uids else None,
            "disk": req.disk,
            "output": req.output,
        }


TRACEBACK = "Traceback (most recent call last):"


def failure_text(error: str) -> str:
    """A supervisor's error with the exception's last line brought into its first line: the
    supervisor sends whole tracebacks, and a failure is reported by its first line."""
    lines = error.strip().splitlines()
    if len(lines) < 2 or TRACEBACK not in lines[0]:
        return error.strip()
    head = lines[0].replace(TRACEBACK, "").strip().rstrip(":")
    last = lines[-1].strip()
    return "\n".join([f"{head}: {last}" if head else last, *lines[1:]])


@dataclass
class Channel:
    """A socket to one supervisor, and which zygote start handed it over."""

    sock: socket.socket
    generation: int


def _pidfd(fd: int | None) -> int:
    """The supervisor's pidfd from its acknowledgment: through it the harness may kill the
    supervisor later and never another process, even once the supervisor's pid is reused."""
    if fd is None:
        raise ValueError("the supervisor sent no pidfd")
    try:
        signal.pidfd_send_signal(fd, 0)
    except ProcessLookupError:
        pass  # a pidfd of a supervisor that has answered and exited already
    except OSError as exc:
        os.close(fd)
        raise ValueError(f"the supervisor sent an fd that is not a pidfd: {exc}") from exc
    return fd


def _is_fast(argv: list[str]) -> bool:
    """``python -c CODE ...`` or ``python FILE.py ...``: run in a fork of the warm zygote."""
    if len(argv) < 2 or argv[0] not in PYTHON_NAMES:
        return False
    if argv[1] == "-c":
        return len(argv) >= 3
    return argv[1].endswith(".py") and not argv[1].startswith("-")


_engines: dict[str, Engine] = {}
_engine_lock = threading.Lock()


def engine(runtime: str = DEFAULT_RUNTIME) -> Engine:
    """The process-wide engine of a runtime (built on first use: runtime, mode probe)."""
    with _engine_lock:
        if runtime not in _engines:
            _engines[runtime] = Engine(runtime=runtime)
        return _engines[runtime]
