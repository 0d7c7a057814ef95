"""What this host really enforces per execution, probed once per process, and the log's words
for it (``describe()["enforced"]``): memory, pids, cpu and cpuacct cgroups, the seccomp filter, a
fresh session keyring, the disk cap. Anything missing is said, with the reason, never silently
dropped."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from scievals.sandbox import cgroups, seccomp
from scievals.sandbox.inside import kernel
from scievals.sandbox.limits import Limits
from scievals.shipped import SANDBOX, program


@dataclass(frozen=True)
class Enforcement:
    cgroups: cgroups.Cgroups
    seccomp: bytes | None  # the filter every execution gets, or None
    seccomp_note: str  # why there is none ("" when there is)
    keyring_note: str  # why executions cannot get a fresh session keyring ("" when they can)
    disk_note: str  # why sample directories are not capped tmpfs ("" when they are)

    def describe(self, limits: Limits, mode: str) -> dict[str, str]:
        memory_bytes = int(limits.memory_gib * 2**30)
        if self.seccomp is not None:
            filtered = (
                f"on ({seccomp.denied_count()} syscalls denied; clone with namespace flags too)"
            )
        else:
            filtered = f"off: {self.seccomp_note}"
        keyring = "fresh session keyring" if not self.keyring_note else f"off: {self.keyring_note}"
        if self.seccomp is not None:
            keyring += "; key syscalls blocked"
        if not self.disk_note:
            disk = f"tmpfs {limits.disk_mib} MiB, {limits.inodes} inodes"
        else:
            disk = f"no cap ({self.disk_note}); only RLIMIT_FSIZE {limits.file_mib} MiB per file"
        memory = self.cgroups.describe_memory(memory_bytes)
        if self.cgroups.memory is not None and mode == "rlimits-only":
            memory += f"; RLIMIT_AS {limits.memory_gib:g} GiB per process too (rlimits-only mode)"
        return {
            "memory": memory,
            "pids": self.cgroups.describe_pids(limits.processes),
            "cpu": self.cgroups.describe_cpu(limits.cpus),
            "cpu_seconds": self.cgroups.describe_cpu_seconds(limits.cpu_seconds, mode),
            "seccomp": filtered,
            "keyring": keyring,
            "disk": disk,
            "tmp": (
                f"tmpfs {limits.tmp_mib} MiB, {limits.inodes} inodes; /dev/shm 64 MiB"
                if mode != "rlimits-only"
                else "none: the host's /tmp and /dev/shm (rlimits-only mode)"
            ),
        }


_cached: Enforcement | None = None
_lock = threading.Lock()


def enforcement() -> Enforcement:
    """Probe once: cgroups (by creating one), seccomp and keyrings (in a throwaway child), and
    whether a tmpfs can be mounted for sample directories."""
    global _cached
    with _lock:
        if _cached is None:
            filt, filter_note, keyring_note = _probe_filter()
            _cached = Enforcement(cgroups.detect(), filt, filter_note, keyring_note, _probe_disk())
        return _cached


def _probe_filter() -> tuple[bytes | None, str, str]:
    try:
        filt = seccomp.build()
    except ValueError as exc:
        return None, str(exc), ""
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            program(SANDBOX, "probes"),
            "features",
            base64.b64encode(filt).decode(),
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    try:
        found = json.loads(proc.stdout)
    except ValueError:
        why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return None, f"the probe failed: {why}", f"the probe failed: {why}"
    return (None if found["seccomp"] else filt), found["seccomp"], found["keyring"]


def _probe_disk() -> str:
    if os.geteuid() != 0:
        return "not root: mounting a tmpfs per sample needs it"
    with tempfile.TemporaryDirectory(prefix="scievals-probe-") as scratch:
        try:
            kernel.mount("tmpfs", scratch, "tmpfs", kernel.MS_NOSUID, "size=1m,nr_inodes=16")
            kernel.umount(scratch)
        except OSError as exc:
            return f"cannot mount a tmpfs: {exc}"
    return ""
