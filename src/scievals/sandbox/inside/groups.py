"""An execution's cgroups and what the kernel counts of it: the groups made, limited, emptied
and removed; their counters (OOM kills, refused forks, CPU seconds) read; and, where there are
no groups, the same figures for a process tree from /proc.

Our sandbox's supervisor reads its execution's groups; the container runner reads the
container's (``counter``, the CPU clocks). Standard library only; loaded with the program that
uses it (``scievals.shipped``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # the unit of /proc/PID/stat's CPU times


def group_dirs(cgroups: dict | None, name: str) -> list[str]:
    """The cgroup directories of one execution (one per hierarchy on v1, one on v2)."""
    if not cgroups:
        return []
    name = cgroups["prefix"] + name
    parents = {cgroups[k] for k in ("memory", "pids", "cpu", "cpuacct") if cgroups.get(k)}
    return [os.path.join(parent, name) for parent in sorted(parents)]


def remove_groups(groups: list[str]) -> None:
    """Kill what is in the groups and remove them (best effort: the harness sweeps the rest)."""
    deadline = time.monotonic() + 2
    for d in groups:
        while os.path.isdir(d):
            kill_group({"procs": [os.path.join(d, "cgroup.procs")]})
            try:
                os.rmdir(d)
            except OSError:
                if time.monotonic() > deadline:
                    break  # the harness sweeps it later
                time.sleep(0.005)


def join_groups(cgroups: dict, groups: list[str], pid: int) -> dict:
    """Create the execution's groups and move init into them. Returns what the supervisor needs:
    the files to write the limits into once the request is known, and the counters to read."""
    wire: dict = {"procs": [], "limits": []}
    v2 = cgroups["version"] == 2
    for d in groups:
        os.mkdir(d)
        parent = os.path.dirname(d)
        if parent == cgroups.get("memory"):
            if v2:
                wire["oom"] = f"{d}/memory.events"
                wire["limits"] += [(f"{d}/memory.max", "memory_bytes")]
                wire["limits"] += [(f"{d}/memory.swap.max", 0), (f"{d}/memory.oom.group", 1)]
            else:
                wire["oom"] = f"{d}/memory.oom_control"
                wire["limits"].append((f"{d}/memory.limit_in_bytes", "memory_bytes"))
                if cgroups["memsw"]:  # after memory.limit_in_bytes: it may not be below it
                    wire["limits"].append((f"{d}/memory.memsw.limit_in_bytes", "memory_bytes"))
        if parent == cgroups.get("pids"):
            wire["pids"] = [f"{d}/pids.current", f"{d}/pids.events"]
            wire["limits"].append((f"{d}/pids.max", "processes"))
        if parent == cgroups.get("cpu"):
            wire["limits"].append(
                (f"{d}/cpu.max", "cpu_max") if v2 else (f"{d}/cpu.cfs_quota_us", "cpu_quota_us")
            )
        if parent == cgroups.get("cpuacct"):
            wire["cpu_usage"] = f"{d}/cpu.stat" if v2 else f"{d}/cpuacct.usage"
        with open(f"{d}/cgroup.procs", "w") as fh:
            fh.write(str(pid))
        wire["procs"].append(f"{d}/cgroup.procs")
    return wire


def set_limits(cgroup: dict, lim: dict) -> None:
    """The request's limits into the groups (before init is told to go). Literal values are
    optional extras (v2's swap.max, oom.group), skipped where the kernel lacks them."""
    for path, value in cgroup["limits"]:
        try:
            with open(path, "w") as fh:
                fh.write(str(lim[value] if isinstance(value, str) else value))
        except OSError:
            if isinstance(value, str):
                raise
    if "pids" in cgroup:
        cgroup["pids"].append(lim["processes"])


def kill_group(cgroup: dict | None) -> None:
    """SIGKILL whatever is in the execution's cgroups (without a pid namespace, init's death does
    not take its descendants along)."""
    for procs in (cgroup or {}).get("procs", []):
        with contextlib.suppress(OSError), open(procs) as fh:
            for pid in fh.read().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)


def counter(path: str, key: str) -> int:
    """One ``key N`` line of a cgroup events file (memory.oom_control, memory.events, pids.events)."""
    try:
        with open(path) as fh:
            for line in fh:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def read_int(path: str) -> int:
    try:
        with open(path) as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 0


def cgroup_cpu_seconds(path: str) -> float:
    """CPU seconds of everything a group ever held: v1 cpuacct.usage (ns), v2 cpu.stat (µs)."""
    if path.endswith("cpu.stat"):
        return counter(path, "usage_usec") / 1e6
    return read_int(path) / 1e9


# ---------------------------------------------------------------- without groups: /proc


def tree(root: int) -> list[int]:
    """Host pids of ``root`` and its descendants (via /proc/PID/task/TID/children)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as fh:
                    todo.extend(int(p) for p in fh.read().split())
        except OSError:
            continue
    return out


def usage(pids: list[int]) -> tuple[int, int]:
    """Proportional memory (bytes) and task count of a process tree."""
    pss = tasks = 0
    for pid in pids:
        with contextlib.suppress(OSError):  # zombies count as tasks (the kernel counts them too)
            tasks += len(os.listdir(f"/proc/{pid}/task"))
        with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
                    break
    return pss, tasks


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds of a process tree from /proc/PID/stat: each process's own (every thread,
    ended ones too) and what the children it reaped used."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/stat") as fh:
            ticks += sum(int(f) for f in fh.read().rpartition(")")[2].split()[11:15])
    return ticks / CLOCK_TICKS
