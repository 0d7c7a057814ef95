"""Memory, pids, cpu and cpuacct cgroups, one of each per execution (cgroup v1 or a delegated v2
subtree).

Rlimits and a polling watcher cannot see shared memory (memfd, tmpfs, /dev/shm pages) nor stop a
tree between polls; a memory cgroup charges every page the execution touches and the kernel
stops it at the limit. A cpu group caps an execution's CPU bandwidth (its quota), so a program
of many busy processes takes the one CPU its execution slot stands for, not the machine. A
cpuacct group (v2: every group's cpu.stat) counts the CPU seconds of everything the execution
ran, so the supervisor enforces the CPU-time limit without an RLIMIT_CPU, which would make the
program's process CPU clock tick-granular. This module finds where groups can go (``detect``)
and says so; a standby supervisor of the zygote creates an execution's groups and moves its init
into them before the request comes (``inside/groups.join_groups``), reads their counters (OOM kills,
refused forks, CPU seconds), and the harness kills whatever is left and removes them
(``Group.remove``). Group names carry the harness's pid (``scievals-<pid>-<n>``), so leftovers
of a dead harness can be told from a live one's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CPU_PERIOD_US = 100_000  # the period a cpu group's quota is counted over (the kernel's default)
OWNED = re.compile(r"^scievals-(\d+)-")


@dataclass(frozen=True)
class Group:
    """One execution's cgroup directories (made by its supervisor, removed by the harness)."""

    dirs: tuple[Path, ...]

    def remove(self) -> bool:
        """Kill anything still in the groups and remove them; False if one had to stay (the
        next engine start sweeps it)."""
        deadline = time.monotonic() + 5
        done = True
        for d in self.dirs:
            while True:
                kill_all(d)
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        done = False
                        break
                    time.sleep(0.005)
        return done


def kill_all(d: Path) -> None:
    """SIGKILL every process in cgroup ``d`` (pidfds: a reused pid is never signalled)."""
    kill = d / "cgroup.kill"
    if kill.exists():
        with contextlib.suppress(OSError):
            kill.write_text("1")
        return
    try:
        pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
    except OSError:
        return
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            if f":{_relative(d)}\n" in Path(f"/proc/{pid}/cgroup").read_text():
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(fd)


def _relative(d: Path) -> str:
    """The path /proc/PID/cgroup shows for ``d``."""
    for mount in _mounts():
        if d.is_relative_to(mount.point):
            return "/" + str(Path(mount.root, d.relative_to(mount.point))).strip("/")
    return str(d)


@dataclass(frozen=True)
class _Mount:
    point: Path
    root: str  # the hierarchy path mounted there
    version: int
    controllers: tuple[str, ...]  # v1 only

    def dir_for(self, path: str) -> Path:
        rel = os.path.relpath(path, self.root)
        return self.point if rel == "." else self.point / rel


def _mounts() -> list[_Mount]:
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        fstype, options = fields[sep + 1], fields[sep + 3].split(",")
        if fstype in ("cgroup", "cgroup2"):
            version = 2 if fstype == "cgroup2" else 1
            out.append(_Mount(Path(fields[4]), fields[3], version, tuple(options)))
    return out


@dataclass(frozen=True)
class Cgroups:
    """Where this harness creates per-execution groups, or why it cannot."""

    version: int | None
    memory: Path | None  # parent of the per-execution memory groups
    pids: Path | None  # parent of the per-execution pids groups (the same dir on v2)
    memsw: bool  # v1 memory.memsw.* exists: swap is capped too
    memory_note: str  # why there is no memory group ("" when there is)
    pids_note: str
    cpu: Path | None = None  # parent of the per-execution cpu groups (the same dir on v2)
    cpu_note: str = "not probed"
    cpuacct: Path | None = None  # parent of the groups whose CPU seconds are read (v2: cpu.stat)
    cpuacct_note: str = "not probed"

    @property
    def parents(self) -> set[Path]:
        return {p for p in (self.memory, self.pids, self.cpu, self.cpuacct) if p is not None}

    def wire(self) -> dict | None:
        """Where the zygote's supervisors create each execution's groups (None: nowhere)."""
        if not self.parents:
            return None
        return {
            "version": self.version,
            "memory": str(self.memory) if self.memory else None,
            "pids": str(self.pids) if self.pids else None,
            "cpu": str(self.cpu) if self.cpu else None,
            "cpuacct": str(self.cpuacct) if self.cpuacct else None,
            "memsw": self.memsw,
            "prefix": f"scievals-{os.getpid()}-",
        }

    def describe_memory(self, memory_bytes: int) -> str:
        if self.memory is None:
            return f"rlimit+watcher (no memory cgroup: {self.memory_note})"
        size = _size(memory_bytes)
        if self.version == 2:
            return f"cgroup v2 memory.max={size}, memory.swap.max=0 (files in tmpfs count too)"
        swap = " (+memsw)" if self.memsw else " (no memsw: swap not capped)"
        return f"cgroup v1 memory.limit_in_bytes={size}{swap} (files in tmpfs count too)"

    def describe_pids(self, processes: int) -> str:
        if self.pids is None:
            return (
                f"RLIMIT_NPROC on the execution's uid + watcher (no pids cgroup: {self.pids_note})"
            )
        return f"cgroup v{self.version} pids.max={processes}"

    def describe_cpu(self, cpus: float) -> str:
        if not cpus:
            return "no cap (cpus=0): a limit of CPU seconds only"
        if self.cpu is None:
            return f"no cap (no cpu cgroup: {self.cpu_note}): a limit of CPU seconds only"
        knob = "cpu.max" if self.version == 2 else "cpu.cfs_quota_us"
        return f"cgroup v{self.version} {knob}: {cpus:g} CPU per execution"

    def describe_cpu_seconds(self, seconds: float, mode: str) -> str:
        if self.cpuacct is not None:
            knob = "cpu.stat usage_usec" if self.version == 2 else "cpuacct.usage"
            return (
                f"supervisor: {seconds:g} s for the whole execution, read from cgroup "
                f"v{self.version} {knob} every 0.1 s (no RLIMIT_CPU: CPU clocks at full "
                "resolution)"
            )
        said = (
            f"supervisor: {seconds:g} s for the process tree, its /proc times read every 0.1 s "
            f"(no cpu accounting cgroup: {self.cpuacct_note})"
        )
        if mode == "rlimits-only":
            said += f"; RLIMIT_CPU {seconds:g} s per process too (no pid namespace to hold orphans)"
        return said

    def sweep(self) -> None:
        """Remove groups left by harness processes that no longer exist."""
        for parent in self.parents:
            with contextlib.suppress(OSError):
                for entry in os.scandir(parent):
                    match = OWNED.match(entry.name)
                    if match and entry.is_dir() and not pid_alive(int(match[1])):
                        Group((Path(entry.path),)).remove()

    def sweep_empty_own(self, min_age: float = 0.0) -> None:
        """Remove this process's execution groups that hold no process and are older than
        ``min_age`` seconds: left when a supervisor (or the idle standby) was killed before it
        answered. Called when the zygote is replaced, when no standby is being prepared."""
        own = f"scievals-{os.getpid()}-"
        now = time.time()
        for parent in self.parents:
            with contextlib.suppress(OSError):
                for entry in os.scandir(parent):
                    if not entry.name.startswith(own) or entry.name == f"{own}harness":
                        continue
                    try:
                        empty = not (Path(entry.path) / "cgroup.procs").read_text().split()
                        old = now - entry.stat().st_mtime >= min_age
                    except OSError:
                        continue
                    if empty and old:
                        Group((Path(entry.path),)).remove()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _try_write(path: Path, value: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(value)


def _size(n: int) -> str:
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{n / 2**20:g} MiB"


def detect() -> Cgroups:
    """Find (and probe, by creating a group) where per-execution groups can go."""
    own = _own_paths()
    mounts = _mounts()
    v1: dict[str, Path | None] = {}
    for ctl in ("memory", "pids", "cpu", "cpuacct"):
        mount = next((m for m in mounts if m.version == 1 and ctl in m.controllers), None)
        v1[ctl] = mount.dir_for(own[ctl]) if mount and ctl in own else None
    if any(v1.values()):
        return _probe_v1(v1)
    v2 = next((m for m in mounts if m.version == 2), None)
    if v2 is None or "" not in own:
        why = "no cgroup v1 memory/pids/cpu/cpuacct controller and no cgroup v2 hierarchy"
        return Cgroups(None, None, None, False, why, why, None, why, None, why)
    return _probe_v2(v2.dir_for(own[""]))


def own_memory_dirs() -> list[tuple[Path, str]]:
    """Where this process's memory cgroup is, with the name of its limit file: v1's
    ``memory.limit_in_bytes``, v2's ``memory.max`` (visible mounts only)."""
    own = _own_paths()
    out = []
    for mount in _mounts():
        if mount.version == 1 and "memory" in mount.controllers and "memory" in own:
            out.append((mount.dir_for(own["memory"]), "memory.limit_in_bytes"))
        elif mount.version == 2 and "" in own:
            out.append((mount.dir_for(own[""]), "memory.max"))
    return out


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    out = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for ctl in controllers.split(",") if controllers else [""]:
            out[ctl] = path
    return out


def _probe_v1(dirs: dict[str, Path | None]) -> Cgroups:
    notes = {}
    usable: dict[str, Path | None] = {}
    memsw = False
    for ctl, parent in dirs.items():
        if parent is None:
            usable[ctl], notes[ctl] = None, f"the {ctl} controller is not mounted (cgroup v1)"
            continue
        probe = parent / f"scievals-{os.getpid()}-probe"
        try:
            probe.mkdir(exist_ok=True)
            try:
                if ctl == "memory":
                    (probe / "memory.limit_in_bytes").write_text(str(2**30))
                    if "oom_kill " not in (probe / "memory.oom_control").read_text():
                        raise OSError("memory.oom_control has no oom_kill counter (old kernel)")
                    memsw = (probe / "memory.memsw.limit_in_bytes").exists()
                elif ctl == "pids":
                    (probe / "pids.max").write_text("64")
                elif ctl == "cpuacct":
                    if not (probe / "cpuacct.usage").read_text().strip():
                        raise OSError("cpuacct.usage is empty")
                else:
                    (probe / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                    (probe / "cpu.cfs_quota_us").write_text(str(CPU_PERIOD_US))
            finally:
                probe.rmdir()
            usable[ctl], notes[ctl] = parent, ""
        except OSError as exc:
            usable[ctl], notes[ctl] = None, f"cannot create groups in {parent}: {exc}"
    return Cgroups(
        1,
        usable["memory"],
        usable["pids"],
        memsw,
        notes["memory"],
        notes["pids"],
        usable["cpu"],
        notes["cpu"],
        usable["cpuacct"],
        notes["cpuacct"],
    )


def _probe_v2(here: Path) -> Cgroups:
    """A v2 subtree we may use: our own cgroup must offer the controllers and be ours alone (we
    move ourselves into a leaf so that the controllers can be enabled for its children)."""

    def unavailable(why: str) -> Cgroups:
        return Cgroups(None, None, None, False, why, why, None, why, None, why)

    try:
        offered = (here / "cgroup.controllers").read_text().split()
        wanted = [c for c in ("memory", "pids", "cpu") if c in offered]
        if not wanted:
            return unavailable(
                f"cgroup v2: {here} is not delegated the memory, pids or cpu controller"
            )
        enabled = (here / "cgroup.subtree_control").read_text().split()
        if not set(wanted) <= set(enabled):
            procs = (here / "cgroup.procs").read_text().split()
            if procs != [str(os.getpid())]:
                return unavailable(
                    f"cgroup v2: {here} holds other processes, so its controllers cannot be "
                    "enabled for children (run the harness alone in a delegated cgroup, e.g. "
                    "`systemd-run --user --scope -p Delegate=yes scievals ...`)"
                )
            leaf = here / f"scievals-{os.getpid()}-harness"
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text("0")
            (here / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        probe = here / f"scievals-{os.getpid()}-probe"
        probe.mkdir(exist_ok=True)
        probe.rmdir()
    except OSError as exc:
        return unavailable(f"cgroup v2: cannot create groups in {here}: {exc}")
    missing = f"cgroup v2: the controller is not delegated to {here}"
    return Cgroups(
        2,
        here if "memory" in wanted else None,
        here if "pids" in wanted else None,
        False,
        "" if "memory" in wanted else missing,
        "" if "pids" in wanted else missing,
        here if "cpu" in wanted else None,
        "" if "cpu" in wanted else missing,
        here,  # every v2 group has cpu.stat, whichever controllers it has
        "",
    )
