"""Per-execution limits: one dataclass, so the provider's config and the engine cannot drift.

The memory limit is the machine's, shared out: what the harness and the trusted workers may take
is set aside, and the rest divided among the execution slots (one per CPU, as the step queue and
the sandbox's concurrency count them), never below ``MEMORY_FLOOR_GIB``. A fixed 4 GiB (then
also an address-space limit) failed honest code the official run passes (a 32-million-point grid
built as a Python list, 10.6 on 10.11's test) on a machine with 23 GB for two slots.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from scievals.sandbox.cgroups import CPU_PERIOD_US, own_memory_dirs

MEMORY_FLOOR_GIB = 6.0
"""No execution gets less, however small the machine: the gold code of every dev step peaks at
2.3 GiB (10.11), the honest list-built grid of 10.6 on 10.11's test at 4.9 GiB (resident, a
plain run). Where slots' limits together exceed the machine, the kernel's OOM killer takes a
program first (its oom_score_adj is 1000), never the harness."""
TRUSTED_SHARE = 0.25
"""The trusted workers' share of the machine's memory, all of them together."""
HARNESS_GIB = 2.5
"""The harness itself: Inspect, the log, its budget of 1 GiB of untrusted bytes held at once,
and a zygote per scoring runtime (about 160 MiB each)."""
MEMORY_STEP_GIB = 0.25  # the limit is rounded down to this, so that it reads as a plain number


def _own_cgroup_limit() -> int | None:
    """The memory limit of the cgroup this process runs in (the lowest of it and its ancestors'
    that are visible), or None: a harness in a container or a systemd slice has less than the
    machine."""
    found = []
    for directory, name in own_memory_dirs():
        path = directory
        while True:
            try:
                text = (path / name).read_text().strip()
            except OSError:
                text = ""
            if text.isdigit():
                found.append(int(text))
            if path.parent == path or not (path.parent / name).exists():
                break
            path = path.parent
    finite = [n for n in found if n < 1 << 60]
    return min(finite) if finite else None


def machine_memory_bytes() -> int:
    """The memory this harness may use: /proc/meminfo's MemTotal, or its cgroup's limit if lower."""
    total = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            total = int(line.split()[1]) * 1024
    own = _own_cgroup_limit()
    return min(total, own) if own else total


def program_memory_gib(total_bytes: int, slots: int) -> float:
    """Each execution's share of ``total_bytes``: less the trusted workers' share and the
    harness's, divided among ``slots``, rounded down, never below the floor."""
    usable = total_bytes / 2**30 * (1 - TRUSTED_SHARE) - HARNESS_GIB
    share = usable / max(slots, 1) // MEMORY_STEP_GIB * MEMORY_STEP_GIB
    return max(MEMORY_FLOOR_GIB, share)


@cache
def default_memory_gib() -> float:
    """This machine's per-execution memory (computed once per process)."""
    return program_memory_gib(machine_memory_bytes(), os.cpu_count() or 1)


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. Memory and processes are a memory and a pids cgroup where the host
    allows (else rlimits plus a watcher over the process tree); cpus, the CPU bandwidth of the
    whole execution, is a cpu cgroup's quota (0: none); cpu seconds, file size and open files are
    rlimits of every process; wall and output are enforced by the supervisor; disk and inodes cap
    the sample's directory (a tmpfs of its own when root), tmp_mib and inodes the private /tmp.
    Files written to those tmpfs directories are memory too: they count against memory_gib,
    which by default is this machine's share per execution slot (``default_memory_gib``)."""

    memory_gib: float = field(default_factory=default_memory_gib)
    cpu_seconds: float = 600.0
    wall_seconds: float = 1800.0
    processes: int = 64
    file_mib: int = 512
    open_files: int = 256
    output_kib: int = 1024
    tmp_mib: int = 256
    disk_mib: int = 512
    inodes: int = 10000
    cpus: float = 1.0

    def wire(self) -> dict[str, Any]:
        quota = int(self.cpus * CPU_PERIOD_US) if self.cpus > 0 else -1
        return {
            "cpu_quota_us": quota,
            "cpu_max": f"{quota if quota > 0 else 'max'} {CPU_PERIOD_US}",
            "memory_bytes": int(self.memory_gib * 2**30),
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "processes": self.processes,
            "file_bytes": self.file_mib * 2**20,
            "open_files": self.open_files,
            "output_bytes": self.output_kib * 1024,
            "tmp_bytes": self.tmp_mib * 2**20,
            "inodes": self.inodes,
        }

    def describe(self) -> dict[str, Any]:
        return asdict(self)
