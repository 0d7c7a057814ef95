"""The harness side of the sandbox: isolation mode, limits, the zygote process, uids, sample dirs.

One ``Engine`` per harness process owns one zygote (see ``_zygote.py``); every execution of every
sample goes through it. Nothing here runs model-written code itself.
"""

from __future__ import annotations

import atexit
import base64
import errno
import fcntl
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from scievals.sandbox import _zygote
from scievals.sandbox.runtime import REPORTED, WARM_MODULES, Runtime, ensure_runtime

ZYGOTE = Path(_zygote.__file__)
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


class SandboxError(RuntimeError):
    """The sandbox machinery itself failed (not the program it ran)."""


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. Memory, cpu, file size and open files are rlimits of every process;
    memory and processes are also watched over the whole process tree; wall and output are
    enforced by the supervisor."""

    memory_gib: float = 4.0
    cpu_seconds: float = 600.0
    wall_seconds: float = 1800.0
    processes: int = 64
    file_mib: int = 256
    open_files: int = 256
    output_kib: int = 1024
    tmp_mib: int = 256

    def wire(self) -> dict[str, Any]:
        return {
            "memory_bytes": int(self.memory_gib * 2**30),
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "processes": self.processes,
            "file_bytes": self.file_mib * 2**20,
            "open_files": self.open_files,
            "output_bytes": self.output_kib * 1024,
            "tmp_bytes": self.tmp_mib * 2**20,
        }

    def describe(self) -> dict[str, Any]:
        return asdict(self)


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
            [sys.executable, "-I", "-S", str(ZYGOTE), "probe", mode, scratch],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
    err = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return proc.returncode == 0, err


# ---------------------------------------------------------------- uids


class UidPool:
    """Unprivileged uids of our own, one per running execution, so RLIMIT_NPROC means something
    and no execution can signal or trace another. Lock files make the choice safe across
    processes (two evals, pytest-xdist)."""

    def __init__(self) -> None:
        self.base = self._base()
        self.gid = self.base
        self.dir = Path(tempfile.gettempdir()) / "scievals-uids"
        self.dir.mkdir(mode=0o700, exist_ok=True)

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


def send_msg(sock: socket.socket, obj: dict[str, Any]) -> None:
    _zygote.send_msg(sock, obj)


def recv_msg(sock: socket.socket) -> dict[str, Any]:
    return _zygote.recv_msg(sock)


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


class Engine:
    """Owns the runtime, the isolation mode and the zygote for this harness process."""

    def __init__(self, mode: str | None = None) -> None:
        self.runtime: Runtime = ensure_runtime()
        self.mode, self.mode_note = detect_mode(mode)
        # Own uids need real root; in a user namespace only our own uid is mapped.
        self.uids = UidPool() if os.geteuid() == 0 and self.mode != "userns" else None
        self._lock = threading.Lock()
        self._zygote: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._dir: Path | None = None
        self.hello: dict[str, Any] = {}
        atexit.register(self.close)

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
        self._dir = Path(tempfile.mkdtemp(prefix="scievals-zygote-"))
        (self._dir / "root").mkdir()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        config = {
            "mode": self.mode,
            "warm": WARM_MODULES,
            "report": REPORTED,
            "root_mount": str(self._dir / "root"),
            "visible": self.visible(),
        }
        with open(self._dir / "zygote.log", "wb") as log:
            self._zygote = subprocess.Popen(
                [str(self.runtime.python), "-I", "-B", str(ZYGOTE), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=self.base_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self._dir,
                start_new_session=True,
            )
        theirs.close()
        try:
            send_msg(ours, config)
            self.hello = recv_msg(ours)
        except (EOFError, OSError) as exc:
            log_tail = (self._dir / "zygote.log").read_text(errors="replace")[-2000:]
            ours.close()
            raise SandboxError(f"the sandbox zygote did not start: {exc}\n{log_tail}") from exc
        if self.hello.get("failed"):
            print(
                f"scievals sandbox: warning: warm imports failed: {self.hello['failed']}",
                file=sys.stderr,
            )
        self._ctl = ours

    def ensure_started(self) -> dict[str, Any]:
        with self._lock:
            if self._zygote is None or self._zygote.poll() is not None:
                self._stop()
                self._start()
            return self.hello

    def _stop(self) -> None:
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        if self._zygote is not None:
            try:
                self._zygote.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._zygote.kill()
                self._zygote.wait()
            self._zygote = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def close(self) -> None:
        """Stop the zygote (running executions see the harness go and kill their trees)."""
        with self._lock:
            self._stop()

    # -- executions

    def open_channel(self) -> socket.socket:
        """A fresh socket to one new supervisor process."""
        self.ensure_started()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                assert self._ctl is not None
                socket.send_fds(self._ctl, [b"x"], [theirs.fileno()])
        except OSError as exc:
            ours.close()
            raise SandboxError(f"the sandbox zygote is gone: {exc}") from exc
        finally:
            theirs.close()
        return ours

    def run(self, req: Request, channel: socket.socket) -> dict[str, Any]:
        """Run one request on a channel from ``open_channel`` (blocking; call from a thread)."""
        uid = lock = None
        if self.uids is not None:
            uid, lock = self.uids.acquire()
        try:
            argv = req.argv
            fast = _is_fast(argv)
            send_msg(
                channel,
                {
                    "argv": argv,
                    "fast": fast,
                    "workdir": req.workdir,
                    "cwd": req.cwd,
                    "env": {**self.base_env(), **req.env},
                    "input": base64.b64encode(req.input).decode(),
                    "timeout": req.timeout,
                    "limits": req.limits.wire(),
                    "uid": uid,
                    "gid": self.uids.gid if self.uids else None,
                },
            )
            try:
                result = recv_msg(channel)
            except (EOFError, OSError) as exc:
                raise SandboxError(f"the sandbox supervisor died: {exc}") from exc
        finally:
            channel.close()
            if lock is not None:
                lock.close()
        if "error" in result:
            raise SandboxError(f"sandbox failure: {result['error']}")
        result["stdout"] = base64.b64decode(result["stdout"])
        result["stderr"] = base64.b64decode(result["stderr"])
        result["fast"] = fast
        return result


def _is_fast(argv: list[str]) -> bool:
    """``python -c CODE ...`` or ``python FILE.py ...``: run in a fork of the warm zygote."""
    if len(argv) < 2 or argv[0] not in PYTHON_NAMES:
        return False
    if argv[1] == "-c":
        return len(argv) >= 3
    return argv[1].endswith(".py") and not argv[1].startswith("-")


_engine: Engine | None = None
_engine_lock = threading.Lock()


def engine() -> Engine:
    """The process-wide engine (built on first use: runtime, mode probe)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = Engine()
        return _engine
