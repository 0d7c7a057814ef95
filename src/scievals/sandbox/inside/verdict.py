"""The one verdict rule of the inside programs: how a program ended, as a return code, the
limit that stopped it and the reason a person reads; the notes a program's own errors get; the
rlimit set every program runs under; when a capped file system counts as full.

Our sandbox's supervisor (``zygote.py``) and the container runner (``container_runner.py``) both
judge by it, so that a verdict reads the same whichever backend ran the program. Standard
library only; loaded with the program that uses it (``scievals.shipped``).
"""

from __future__ import annotations

import errno
import os
import resource
import signal

NOTE = "scievals-sandbox: "
"""What starts a line the sandbox, not the program, wrote to the program's stderr."""


def reason(limit: str, lim: dict, timeout: float = 0.0) -> str:
    """What a person reads for ``limit``, with its value from ``lim`` (the request's limits),
    or for ``timeout`` the seconds the caller gave."""
    match limit:
        case "memory":
            return f"memory limit ({lim['memory_bytes'] / 2**30:g} GiB)"
        case "processes":
            return f"process limit ({lim['processes']} processes and threads)"
        case "cpu":
            return f"cpu time limit ({lim['cpu_seconds']:g} s)"
        case "file_size":
            return f"file size limit ({lim['file_bytes'] // 2**20} MiB)"
        case "output":
            return f"output limit ({lim['output_bytes'] // 1024} KiB per stream)"
        case "wall_clock":
            return f"wall-clock limit ({lim['wall_seconds']:g} s)"
        case "timeout":
            return f"timeout ({timeout:g} s)"
    raise ValueError(f"no such limit: {limit}")


def exit_verdict(
    sig: int,
    code: int,
    lim: dict,
    *,
    stop: tuple[str, str] | None,
    oom: bool,
    refused: bool,
    disk: str | None,
    cpu_rlimit: bool = False,
    cpu_used: float = 0.0,
) -> tuple[int | None, str | None, str | None]:
    """(returncode, limit, reason) of a program that ended by signal ``sig`` or with exit
    ``code``: a limit the watcher acted on (``stop``), else the kernel's counters (an OOM kill,
    a refused fork), an rlimit's signal (CPU where RLIMIT_CPU was set, file size), a full disk,
    or the program's own end. A refused fork or a full disk only explains a failure."""
    if stop is not None:
        limit, why = stop
        return (None if limit == "timeout" else 137), limit, why
    returncode = 128 + sig if sig else code
    if oom:
        return returncode, "memory", reason("memory", lim)
    over = sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_used >= lim["cpu_seconds"])
    if over and cpu_rlimit:
        return returncode, "cpu", reason("cpu", lim)
    if sig == signal.SIGXFSZ:
        return returncode, "file_size", reason("file_size", lim)
    if returncode != 0 and refused:
        return returncode, "processes", reason("processes", lim)
    if returncode != 0 and disk:
        return returncode, "disk", disk
    if sig:
        return returncode, None, f"signal {signal.Signals(sig).name}"
    return returncode, None, None


def full_disk(disks: list[tuple[str, int | str]]) -> str | None:
    """The reason if one of the capped file systems (a label, and an open fd or a path of it) is
    (nearly) full: less free than 2 MiB or a sixteenth of it, or no inode left."""
    for label, where in disks:
        try:
            st = os.statvfs(where)
        except OSError:
            continue
        total = st.f_blocks * st.f_frsize
        if total and (
            st.f_bavail * st.f_frsize < min(2 << 20, total // 16)
            or (st.f_files and st.f_favail == 0)
        ):
            return f"disk limit ({label} full: {total / 2**20:g} MiB, {st.f_files} files)"
    return None


def limit_note(exc: BaseException) -> str | None:
    """Say which limit an uncaught exception of the program most likely came from."""
    if isinstance(exc, MemoryError):
        return "memory limit reached (MemoryError)"
    if isinstance(exc, OSError):
        return {
            errno.EFBIG: "file size limit reached",
            errno.EMFILE: "open files limit reached",
            errno.EAGAIN: "process limit reached",
        }.get(exc.errno)
    return None


def set_rlimits(lim: dict, *, address_space: bool, cpu: bool = False, nproc: bool = False) -> None:
    """The rlimits of a program: file size, open files, no core dumps; an address space only
    where nothing counts real memory (it overstates what NumPy and OpenBLAS use), CPU seconds
    only where nothing else can count them (it makes the process CPU clock tick-granular), and
    processes only for a uid of the execution's own where no pids cgroup counts them."""
    limits = [
        (resource.RLIMIT_FSIZE, lim["file_bytes"]),
        (resource.RLIMIT_NOFILE, lim["open_files"]),
        (resource.RLIMIT_CORE, 0),
    ]
    if address_space:
        limits.append((resource.RLIMIT_AS, lim["memory_bytes"]))
    if cpu:
        limits.append((resource.RLIMIT_CPU, int(lim["cpu_seconds"])))
    if nproc:
        limits.append((resource.RLIMIT_NPROC, lim["processes"]))
    for res, value in limits:
        hard = value + 1 if res == resource.RLIMIT_CPU else value  # SIGXCPU first, then SIGKILL
        resource.setrlimit(res, (value, hard))
