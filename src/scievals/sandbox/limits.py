"""Per-execution limits: one dataclass, so the provider's config and the engine cannot drift."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

CPU_PERIOD_US = 100_000  # the period a cpu group's quota is counted over (the kernel's default)


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. Memory and processes are a memory and a pids cgroup where the host
    allows (else rlimits plus a watcher over the process tree); cpus, the CPU bandwidth of the
    whole execution, is a cpu cgroup's quota (0: none); cpu seconds, file size and open files are
    rlimits of every process; wall and output are enforced by the supervisor; disk and inodes cap
    the sample's directory (a tmpfs of its own when root), tmp_mib and inodes the private /tmp.
    Files written to those tmpfs directories are memory too: they count against memory_gib."""

    memory_gib: float = 4.0
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
