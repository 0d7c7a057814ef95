"""The warm zygote: a process of the pinned runtime that has imported the scientific stack once.

It runs under the runtime's interpreter (``python -I -B zygote.py CTL_FD``; the config is sent
first) and imports nothing from scievals, only the standard library and the runtime's packages.

For every execution the harness sends one socket over the control socket (SCM_RIGHTS). The zygote
forks a *supervisor* for it and goes straight back to waiting, so executions run in parallel. The
supervisor reads the request from that socket, enters fresh namespaces (pid, network, ipc, uts)
and forks an *init* process (which it moves into the execution's memory and pids cgroups, made
by the harness), which builds a private root file system in a mount namespace of its own
(read-only system and runtime, a private /tmp, the sample's directory read-write), drops to an
unprivileged uid, joins a fresh session keyring, sets the rlimits, installs the seccomp filter
(built by the harness) and, once in the cgroups, forks the *program*. The program either runs Python code in place (the fast path: no interpreter
start-up, no imports) or execs the command. When init exits the kernel kills everything left in
the pid namespace, so nothing outlives an execution. The supervisor enforces what the kernel does
not (wall clock, output size; without cgroups, memory and task count of the whole tree), reads
the kernel's verdicts (OOM kills, refused forks, full tmpfs mounts) and sends back the result.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import dataclasses
import errno
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import traceback
import types

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 4, 22, 38
SECCOMP_MODE_FILTER = 2
KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
SYS_UNSHARE = {"x86_64": 272, "aarch64": 97}
SYS_CLONE3 = {"x86_64": 435, "aarch64": 435}
SHM_OPTIONS = "mode=1777,size=64m,nr_inodes=1024"
POLL_SECONDS = 0.1
MAX_MESSAGE = 1 << 31
ST_FLAGS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC}
NOTE = "scievals-sandbox: "
PYTHON_IGNORES = {signal.SIGPIPE, signal.SIGXFSZ}  # ignored by Python at start, by nothing else
RESET_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP, *PYTHON_IGNORES})
"""Set to default in each execution's init (a fresh run's dispositions); computed once."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")  # the unit of /proc/PID/stat's CPU times

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
libc.syscall.restype = ctypes.c_long


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None):
    _check(libc.mount(_b(src), _b(dst), _b(fstype), flags, _b(data)), f"mount {dst}")


def umount(path: str, flags: int = 0) -> None:
    _check(libc.umount2(os.fsencode(path), flags), f"umount {path}")


def prctl(option: int, arg: int) -> None:
    _check(libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


def syscall(numbers: dict[str, int], *args: int | None) -> int:
    """A raw syscall (its number per architecture; every argument passed as a full-width long,
    None as a NULL pointer); -1 with errno set on failure."""
    values = [ctypes.c_long(a) if isinstance(a, int) else ctypes.c_void_p(a) for a in args]
    return libc.syscall(ctypes.c_long(numbers[os.uname().machine]), *values)


def join_session_keyring() -> None:
    """A new, empty session keyring: the harness's keys (or an earlier execution's) are not ours."""
    if syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"keyctl(JOIN_SESSION_KEYRING): {os.strerror(err)}")


def install_seccomp(program: bytes) -> None:
    """Install a classic BPF seccomp filter (needs PR_SET_NO_NEW_PRIVS first); inherited by every
    child and kept across execve."""
    fprog = SockFprog(len(program) // 8, program)
    _check(
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp"
    )


# ---------------------------------------------------------------- messages


def with_floor(program: bytes, marks: list[int], floor: int) -> bytes:
    """The guard filter with its placeholders replaced: the lowest pid it lets a signal reach,
    and that pid's negation (a process group) as a 32-bit word."""
    low, high = marks
    out = bytearray(program)
    for at in range(0, len(out), 8):
        k = int.from_bytes(out[at + 4 : at + 8], "little")
        if k == low:
            out[at + 4 : at + 8] = floor.to_bytes(4, "little")
        elif k == high:
            out[at + 4 : at + 8] = ((1 << 32) - floor).to_bytes(4, "little")
    return bytes(out)


def send_msg(sock: socket.socket, obj: dict, fd: int | None = None) -> None:
    """One length-prefixed JSON message; ``fd``, if given, rides on its first byte."""
    data = json.dumps(obj).encode()
    packet = struct.pack(">Q", len(data)) + data
    sent = socket.send_fds(sock, [packet], [fd]) if fd is not None else 0
    sock.sendall(packet[sent:])


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        buf += chunk
    return bytes(buf)


def recv_msg(sock: socket.socket) -> dict:
    return _message_after(sock, recv_exact(sock, 8))


def recv_msg_fd(sock: socket.socket) -> tuple[dict, int | None]:
    """A message from ``send_msg`` with the fd it carried (None if it carried none)."""
    head, fds, _, _ = socket.recv_fds(sock, 8, 1)
    try:
        if not head:
            raise EOFError("peer closed")
        msg = _message_after(sock, head + recv_exact(sock, 8 - len(head)))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return msg, fds[0] if fds else None


def _message_after(sock: socket.socket, head: bytes) -> dict:
    (n,) = struct.unpack(">Q", head)
    if n > MAX_MESSAGE:
        raise ValueError(f"a {n}-byte message: the peer is broken")
    return json.loads(recv_exact(sock, n))


# ---------------------------------------------------------------- zygote


def warm(modules: list[str]) -> list[str]:
    """Import the scientific stack once; failures are reported, not fatal."""
    failed = []
    for name in modules:
        try:
            __import__(
                name
            )  # inspect-evals-lint: ignore[host_code_execution] -- the runtime's fixed list of warm modules (runtime.WARM_MODULES), in the zygote
            if name == "matplotlib":
                import matplotlib

                matplotlib.use("Agg")
        except Exception as exc:  # noqa: BLE001 - report any import failure
            failed.append(f"{name}: {exc}")
    # The warm stack is more than a plain run imports: left in the collector's generations, every
    # full collection of a program would walk it (list-heavy code ran 2x slower than plainly).
    gc.collect()
    gc.freeze()
    return failed


def enter_userns() -> None:
    """Map ourselves to root in a new user namespace, so that later namespaces need no privilege."""
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(CLONE_NEWUSER), "unshare(user)")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"0 {gid} 1")


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    config = recv_msg(ctl)
    failed = warm(config["warm"])
    if config["mode"] == "userns":
        enter_userns()
    versions = {}
    for name in config.get("report", []):
        mod = sys.modules.get(name)
        versions[name] = getattr(mod, "__version__", None) if mod else None
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped automatically
    threads = len(os.listdir("/proc/self/task"))
    send_msg(
        ctl,
        {
            "ready": True,
            "pid": os.getpid(),
            "failed": failed,
            "versions": versions,
            "threads": threads,
            "python": sys.version.split()[0],
        },
    )
    serial = 0
    standby: Standby | None = None
    while True:
        if standby is None:
            serial += 1
            standby = Standby.spawn(ctl, config, serial)
        poller = select.poll()
        poller.register(ctl, select.POLLIN)
        poller.register(standby.sock, select.POLLIN)
        events = dict(poller.poll())
        if standby.sock.fileno() in events:  # it died before it was needed
            standby.discard()
            standby = None
            continue
        if ctl.fileno() not in events:
            continue
        try:
            _, fds, _, _ = socket.recv_fds(ctl, 16, 1)
        except InterruptedError:
            continue
        if not fds:
            standby.retire()  # the harness went away: stop
            return
        while True:
            try:
                socket.send_fds(standby.sock, [b"x"], fds)
                break
            except OSError:  # it died just now: the next one takes the request
                standby.discard()
                serial += 1
                standby = Standby.spawn(ctl, config, serial)
        os.close(fds[0])
        standby.sock.close()
        standby = None


class Standby:
    """A supervisor forked ahead of its request, whose init is already forked (into fresh
    namespaces) and moved into the execution's fresh cgroups: moving a task between cgroups
    waits for an RCU grace period (milliseconds), which is thus off an execution's path."""

    def __init__(self, pid: int, sock: socket.socket, groups: list[str]) -> None:
        self.pid, self.sock, self.groups = pid, sock, groups

    @classmethod
    def spawn(cls, ctl: socket.socket, config: dict, serial: int) -> Standby:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        groups = group_dirs(config.get("cgroups"), f"{os.getpid()}-{serial}")
        pid = os.fork()
        if pid == 0:
            ctl.close()
            ours.close()
            wait_for_request(theirs, config, groups)
        theirs.close()
        return cls(pid, ours, groups)

    def discard(self) -> None:
        """It died unused (killed from outside): its init died with it; remove its groups."""
        self.sock.close()
        remove_groups(self.groups)

    def retire(self) -> None:
        """We are stopping: it removes its init and groups when it sees us go; wait for that,
        so that nothing outlives the zygote."""
        self.sock.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)  # children are reaped automatically: gone means done
            except ProcessLookupError:
                return
            time.sleep(0.002)


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


# ---------------------------------------------------------------- supervisor


@dataclasses.dataclass
class Prepared:
    """What a standby readies before its request: init, waiting for it; the pipes; the cgroups."""

    init: int
    stdin: int  # memfd, filled with the request's input
    request: int  # memfd: init reads the request from it when told to go
    out_r: int
    err_r: int
    st: socket.socket  # init's status (and, first, the fds of its /tmp and /dev/shm)
    cgroup: dict | None  # what the watcher reads ("procs", "oom", "pids"), limits set later


def wait_for_request(zsock: socket.socket, config: dict, groups: list[str]) -> None:
    """A standby: prepare, then serve the channel the zygote hands over; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        prepared: Prepared | str = prepare(config, groups, zsock)
    except BaseException:  # noqa: BLE001 - reported to the harness with the request
        prepared = traceback.format_exc()
    try:
        _, fds, _, _ = socket.recv_fds(zsock, 16, 1)
    except OSError:
        fds = []
    if not fds:  # the zygote is gone
        if isinstance(prepared, Prepared):
            os.kill(prepared.init, signal.SIGKILL)
            os.waitpid(prepared.init, 0)
        remove_groups(groups)
        os._exit(0)
    zsock.close()
    sock = socket.socket(fileno=fds[0])
    try:
        req = recv_msg(sock)
        # The harness may read this only after a fast program has ended and this process with
        # it (its pid then free for another): it gets a pidfd of this process, not a pid.
        me = os.pidfd_open(os.getpid())
        send_msg(sock, {"cgroups": groups}, me)  # the groups are the harness's to remove now
        os.close(me)
        if isinstance(prepared, str):
            raise RuntimeError(f"preparing the execution failed: {prepared}")
        result = run(req, sock, config, prepared)
    except BaseException:  # noqa: BLE001 - anything here is our bug: report it
        result = {"error": traceback.format_exc()}
    with contextlib.suppress(OSError):
        send_msg(sock, result)
    os._exit(0)


def prepare(config: dict, groups: list[str], zsock: socket.socket) -> Prepared:
    """Fork init into fresh pid, network, ipc and uts namespaces and move it into fresh cgroups;
    it waits for its request. (``zsock``, the standby's socket to the zygote, is not init's.)"""
    stdin = os.memfd_create("stdin")
    request = os.memfd_create("request")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    st, st_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    if config["mode"] in ("unshare", "userns"):
        # The mount namespace is init's alone (its pivot_root would also move our root).
        _check(libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    pid = os.fork()
    if pid == 0:
        try:
            os.close(out_r), os.close(err_r), st.close(), zsock.close()
            init(config, stdin, request, out_w, err_w, st_w)
        except BaseException:  # noqa: BLE001
            with contextlib.suppress(OSError):
                st_w.send(json.dumps({"setup_error": traceback.format_exc()[-4000:]}).encode())
        os._exit(125)
    for f in (out_w, err_w):
        os.close(f)
    st_w.close()
    prepared = Prepared(pid, stdin, request, out_r, err_r, st, None)
    cgroups = config.get("cgroups")
    if cgroups:
        try:
            prepared.cgroup = join_groups(cgroups, groups, pid)
        except BaseException:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            remove_groups(groups)
            raise
    return prepared


def join_groups(cgroups: dict, groups: list[str], pid: int) -> dict:
    """Create the execution's groups and move init into them. Returns what the supervisor needs:
    the files to write the limits into once the request is known, and the counters to read."""
    wire: dict = {"procs": [], "limits": []}
    for d in groups:
        os.mkdir(d)
        parent = os.path.dirname(d)
        if parent == cgroups.get("memory"):
            if cgroups["version"] == 2:
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
            if cgroups["version"] == 2:
                wire["limits"].append((f"{d}/cpu.max", "cpu_max"))
            else:
                wire["limits"].append((f"{d}/cpu.cfs_quota_us", "cpu_quota_us"))
        if parent == cgroups.get("cpuacct"):
            v2 = cgroups["version"] == 2
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


def cgroup_cpu_seconds(path: str) -> float:
    """CPU seconds of everything a group ever held: v1 cpuacct.usage (ns), v2 cpu.stat (µs)."""
    if path.endswith("cpu.stat"):
        return counter(path, "usage_usec") / 1e6
    return read_int(path) / 1e9


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


def kill_group(cgroup: dict | None) -> None:
    """SIGKILL whatever is in the execution's cgroups (without a pid namespace, init's death does
    not take its descendants along)."""
    for procs in (cgroup or {}).get("procs", []):
        with contextlib.suppress(OSError), open(procs) as fh:
            for pid in fh.read().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)


def full_disk(disks: list[tuple[str, int]]) -> str | None:
    """The reason if one of the execution's capped file systems is (nearly) full."""
    for label, fd in disks:
        try:
            st = os.fstatvfs(fd)
        except OSError:
            continue
        total = st.f_blocks * st.f_frsize
        if st.f_bavail * st.f_frsize < min(2 << 20, total // 16) or (
            st.f_files and st.f_favail == 0
        ):
            return f"disk limit ({label} full: {total / 2**20:g} MiB, {st.f_files} files)"
    return None


class Watch:
    """What the supervisor checks every poll: the cgroups' counters when there are cgroups (the
    kernel enforces, we only read the verdict), else the tree's memory and task count; and the
    CPU seconds of the whole execution (its cpuacct group, else the tree's), which no rlimit
    enforces: a finite RLIMIT_CPU arms the kernel's process CPU timer, and then the program's
    process CPU clock (``time.process_time``) is read from a tick-updated counter (1-4 ms
    steps instead of about 1 µs in a plain run)."""

    def __init__(self, req: dict, init_pid: int, disks: list[tuple[str, int]]) -> None:
        self.lim = req["limits"]
        self.cgroup = req.get("cgroup") or {}
        self.init_pid = init_pid
        self.disks = disks
        self.cpu_rlimit = bool(req.get("cpu_rlimit"))
        self.disk: str | None = None  # sticky: a full disk is remembered even if freed later

    def memory_reason(self) -> str:
        return f"memory limit ({self.lim['memory_bytes'] / 2**30:g} GiB)"

    def process_reason(self) -> str:
        return f"process limit ({self.lim['processes']} processes and threads)"

    def cpu_reason(self) -> str:
        return f"cpu time limit ({self.lim['cpu_seconds']:g} s)"

    def oom(self) -> bool:
        oom = self.cgroup.get("oom")
        return bool(oom) and counter(oom, "oom_kill") > 0

    def fork_refused(self) -> bool:
        pids = self.cgroup.get("pids")
        return bool(pids) and counter(pids[1], "max") > 0

    def check(self) -> tuple[str, str] | None:
        """(limit, reason) when the tree must be stopped now."""
        self.disk = self.disk or full_disk(self.disks)
        if self.oom():
            return "memory", self.memory_reason()
        pids = self.cgroup.get("pids")
        if pids and (read_int(pids[0]) >= pids[2] or self.fork_refused()):
            return "processes", self.process_reason()
        procs = None
        if self.cgroup.get("cpu_usage"):
            used = cgroup_cpu_seconds(self.cgroup["cpu_usage"])
        else:
            procs = tree(self.init_pid)
            used = tree_cpu_seconds(procs)
        if used > self.lim["cpu_seconds"]:
            return "cpu", self.cpu_reason()
        if self.cgroup.get("oom") and pids:
            return None
        pss, tasks = usage(procs if procs is not None else tree(self.init_pid))
        if not self.cgroup.get("oom") and pss > self.lim["memory_bytes"]:
            return "memory", self.memory_reason()
        if not pids and tasks >= self.lim["processes"]:
            return "processes", self.process_reason()
        return None


def run(req: dict, sock: socket.socket, config: dict, prep: Prepared) -> dict:
    """Hand the request to the waiting init, then watch the execution to its end."""
    lim = req["limits"]
    disks = _hand_over(req, config, prep)
    start = time.monotonic()
    watch = Watch(req, prep.init, disks)
    stop, info, out, err = _supervise(req, sock, prep, watch, disks, start)
    _, status = os.waitpid(prep.init, 0)
    seconds = time.monotonic() - start
    watch.disk = watch.disk or full_disk(disks)
    for _, fd in disks:
        os.close(fd)
    if info and "setup_error" in info:
        return {"error": f"the sandbox's setup failed: {info['setup_error']}"}
    returncode, limit, reason = exit_status(info, stop, watch, lim)
    if limit is None and info is None:  # init is our code: it reports unless the kernel kills it
        return {"error": f"the sandbox's init process died ({_describe_status(status)})"}
    return {
        "returncode": returncode,
        "stdout": base64.b64encode(out).decode(),
        "stderr": base64.b64encode(err).decode(),
        "limit": limit,
        "reason": reason,
        "seconds": seconds,
    }


def _hand_over(req: dict, config: dict, prep: Prepared) -> list[tuple[str, int]]:
    """The request and its input written where the waiting init reads them, its limits set,
    and init told to go; the disks to watch (the work directory's, if it has a quota)."""
    lim = req["limits"]
    if prep.cgroup:
        set_limits(prep.cgroup, lim)
    req["cgroup"] = prep.cgroup
    # Where orphans may leave the tree the supervisor watches (no pid namespace, no group that
    # counts them), every process keeps an RLIMIT_CPU too, at the cost of coarse clocks.
    req["cpu_rlimit"] = config["mode"] == "rlimits-only" and not (prep.cgroup or {}).get(
        "cpu_usage"
    )
    os.write(prep.stdin, base64.b64decode(req["input"]))
    os.lseek(prep.stdin, 0, os.SEEK_SET)
    view = memoryview(json.dumps(req).encode())
    while view:
        view = view[os.write(prep.request, view) :]
    os.lseek(prep.request, 0, os.SEEK_SET)
    disks = []
    if req.get("disk"):
        disks.append((req["disk"], os.open(req["workdir"], os.O_RDONLY | os.O_DIRECTORY)))
    prep.st.send(b"go")
    return disks


def _supervise(
    req: dict,
    sock: socket.socket,
    prep: Prepared,
    watch: Watch,
    disks: list[tuple[str, int]],
    start: float,
) -> tuple[tuple[str, str] | None, dict | None, bytes, bytes]:
    """Watch the execution until its streams and init's status channel close: its output
    collected (the first or, with ``output="tail"``, the last bytes up to the cap), its limits
    enforced, the harness's going away taken as a cancellation. Returns what stopped it (limit,
    reason) if anything did, init's report, and the two streams."""
    lim = req["limits"]
    pid, st, out_r, err_r = prep.init, prep.st, prep.out_r, prep.err_r
    cap = lim["output_bytes"]
    tail = req.get("output") == "tail"
    data = {out_r: bytearray(), err_r: bytearray()}
    seen = {out_r: 0, err_r: 0}
    info = None
    poller = select.poll()
    for f in (out_r, err_r, st.fileno(), sock.fileno()):
        poller.register(f, select.POLLIN)
    live = {out_r, err_r, st.fileno()}
    stop: tuple[str, str] | None = None
    killed_at = None
    timeout = req.get("timeout")
    wall = timeout if timeout else lim["wall_seconds"]
    next_check = start

    def kill(limit: str, reason: str) -> None:
        nonlocal stop, killed_at
        if killed_at is None:
            stop = (limit, reason)
            os.kill(pid, signal.SIGKILL)
            kill_group(watch.cgroup)
            killed_at = time.monotonic()

    while live:
        now = time.monotonic()
        if killed_at is None:
            if now - start > wall:
                if timeout:
                    kill("timeout", f"timeout ({timeout:g} s)")
                else:
                    kill("wall_clock", f"wall-clock limit ({wall:g} s)")
            elif now >= next_check:
                next_check = now + POLL_SECONDS
                found = watch.check()
                if found:
                    kill(*found)
        elif now - killed_at > 5:
            break  # the tree is dead; a pipe left open by nothing we can wait for
        for f, _ in poller.poll(int(POLL_SECONDS * 1000)):
            if f == sock.fileno():
                kill("cancelled", "cancelled (the harness went away)")
                poller.unregister(f)
                continue
            if f == st.fileno():
                msg, fds, _, _ = socket.recv_fds(st, 1 << 16, 4)
                if fds:
                    disks.extend(zip(("/tmp", "/dev/shm"), fds, strict=True))
                elif msg:
                    info = json.loads(msg)
                else:
                    poller.unregister(f)
                    live.discard(f)
                    kill_group(watch.cgroup)  # init is done: nothing of it may linger
                continue
            chunk = os.read(f, 1 << 16)
            if not chunk:
                poller.unregister(f)
                live.discard(f)
                continue
            seen[f] += len(chunk)
            _keep(data[f], chunk, cap, tail)
            if not tail and seen[f] > cap:
                kill("output", f"output limit ({cap // 1024} KiB per stream)")
    return stop, info, bytes(data[out_r]), bytes(data[err_r])


def _keep(kept: bytearray, chunk: bytes, cap: int, tail: bool) -> None:
    """A stream's new bytes kept: its first ``cap`` bytes, or with ``tail`` its last ones (the
    rest discarded, so that printing never fails)."""
    if tail:
        kept += chunk
        del kept[: max(0, len(kept) - cap)]
    else:
        kept += chunk[: max(0, cap - len(kept))]


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit {os.WEXITSTATUS(status)}"


def exit_status(
    info: dict | None, stop: tuple[str, str] | None, watch: Watch, lim: dict
) -> tuple[int | None, str | None, str | None]:
    """(returncode, limit, reason) from what stopped the program: a limit the supervisor acted on,
    the kernel's counters (an OOM kill, a refused fork), a full disk, or the program's own exit."""
    if stop is not None:
        limit, reason = stop
        return (None if limit == "timeout" else 137), limit, reason
    if info is None:  # init itself was killed: the OOM killer may choose it
        return 137, ("memory" if watch.oom() else None), watch.memory_reason()
    sig, code = info["signal"], info["code"]
    returncode = 128 + sig if sig else code
    if watch.oom():
        return returncode, "memory", watch.memory_reason()
    if sig:
        cpu = lim["cpu_seconds"]
        over = sig == signal.SIGXCPU or (sig == signal.SIGKILL and info["cpu"] >= cpu)
        if over and watch.cpu_rlimit:
            return returncode, "cpu", watch.cpu_reason()
        if sig == signal.SIGXFSZ:
            return returncode, "file_size", f"file size limit ({lim['file_bytes'] // 2**20} MiB)"
    if returncode != 0 and watch.fork_refused():
        return returncode, "processes", watch.process_reason()
    if returncode != 0 and watch.disk:
        return returncode, "disk", watch.disk
    if sig:
        return returncode, None, f"signal {signal.Signals(sig).name}"
    return returncode, None, None


# ---------------------------------------------------------------- init (pid 1 of the execution)


def bind(src: str, dst: str, rw: bool = False, dev: bool = False) -> None:
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.exists(dst):
            open(dst, "w").close()
    mount(src, dst, None, MS_BIND | MS_REC)
    keep = 0
    for bit, flag in ST_FLAGS.items():  # flags the source already had must stay (locked in userns)
        if os.statvfs(dst).f_flag & bit:
            keep |= flag
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | keep | (0 if dev else MS_NODEV)
    if not rw:
        flags |= MS_RDONLY
    mount(None, dst, None, flags)


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def within(path: str, tops: tuple[str, ...]) -> bool:
    """``path`` is one of ``tops`` or below one (whole components: /library is not /lib)."""
    return any(path == top or path.startswith(top + "/") for top in tops)


def build_root(req: dict, config: dict) -> None:
    """A new root: system and runtime read-only, private /tmp, /dev and /proc, the sample dir
    writable. The private mounts are made first and the host's paths bound after them, parents
    before children: a runtime or a sample dir under /tmp or /dev/shm (a cache in /tmp, as in
    many containers) is then bound inside the private mount instead of clashing with it or being
    hidden by it."""
    _check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    new = config["root_mount"]
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for top in SYSTEM_DIRS:
        if os.path.islink(top):
            os.symlink(os.readlink(top), new + top)
        elif os.path.isdir(top):
            bind(top, new + top)
    os.makedirs(new + "/tmp")
    mount(
        "tmpfs",
        new + "/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"mode=1777,size={req['limits']['tmp_bytes']},nr_inodes={req['limits']['inodes']}",
    )
    dev = new + "/dev"
    os.makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64")
    for name in ("null", "zero", "full", "random", "urandom"):
        bind("/dev/" + name, f"{dev}/{name}", rw=True, dev=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{dev}/{name}")
    os.makedirs(dev + "/shm")
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, SHM_OPTIONS)
    os.makedirs(new + "/proc")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    writable = {p: False for p in config["visible"] if os.path.exists(p)}
    writable[req["workdir"]] = True
    for path in sorted(writable):
        if within(path, ("/proc",)):
            raise OSError(errno.EINVAL, f"{path} cannot be shown under the sandbox's own /proc")
        if writable[path] or not within(path, SYSTEM_DIRS):
            bind(path, new + path, rw=writable[path])
    os.chdir(new)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None or libc.syscall(number, b".", b".") != 0:
        raise OSError(ctypes.get_errno(), "pivot_root failed")
    _check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    socket.sethostname("sandbox")


def drop_capabilities() -> None:
    """Clear every capability set (for userns mode, where we stay uid 0 inside the namespace)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()
    _check(libc.capset(header, data), "capset")


def init(
    config: dict, stdin: int, request: int, out_w: int, err_w: int, st_w: socket.socket
) -> None:
    """Pid 1 of the execution (forked and moved into its cgroups before the request came):
    wait for the request, build the root, become the uid, take a fresh keyring, set the limits
    and the seccomp filter, fork the program, report how it ended. Init leads a session of its
    own: a program's group signal can name no process of the zygote's."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()
    # A fresh run's dispositions, whatever the harness inherited (under nohup or as a background
    # job it ignores SIGHUP, SIGINT and SIGQUIT): all default but the two Python itself ignores.
    for sig in RESET_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
    if st_w.recv(16) != b"go":
        os._exit(0)  # the supervisor went away before a request came
    data = bytearray()
    while chunk := os.read(request, 1 << 20):
        data += chunk
    os.close(request)
    req = json.loads(data)
    if config["mode"] in ("unshare", "userns"):
        build_root(req, config)
        mounts = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in ("/tmp", "/dev/shm")]
        socket.send_fds(st_w, [b"fds"], mounts)
        for fd in mounts:
            os.close(fd)
    uid, gid = req["uid"], req["gid"]
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if config["mode"] == "userns":
        drop_capabilities()
    prctl(PR_SET_DUMPABLE, 0)
    join_session_keyring()
    lim = req["limits"]
    limits = [
        (resource.RLIMIT_FSIZE, lim["file_bytes"]),
        (resource.RLIMIT_NOFILE, lim["open_files"]),
        (resource.RLIMIT_CORE, 0),
    ]
    # A memory cgroup charges the pages really used; an address-space limit overstates what
    # NumPy and OpenBLAS use (reserved arenas, thread stacks), so it stays only where no cgroup
    # counts memory or the mode is the weakest.
    if config["mode"] == "rlimits-only" or not (req.get("cgroup") or {}).get("oom"):
        limits.append((resource.RLIMIT_AS, lim["memory_bytes"]))
    if req.get("cpu_rlimit"):
        limits.append((resource.RLIMIT_CPU, int(lim["cpu_seconds"])))
    # RLIMIT_NPROC counts per uid: only meaningful for a uid of our own, and not needed under a
    # pids cgroup (whose refusals are counted, so the verdict is the kernel's).
    if uid is not None and not (req.get("cgroup") or {}).get("pids"):
        limits.append((resource.RLIMIT_NPROC, lim["processes"]))
    for res, value in limits:
        hard = value + 1 if res == resource.RLIMIT_CPU else value  # SIGXCPU first, then SIGKILL
        resource.setrlimit(res, (value, hard))
    if config.get("seccomp"):
        install_seccomp(base64.b64decode(config["seccomp"]))
    child = os.fork()
    if child == 0:
        st_w.close()
        program(req, config, stdin, out_w, err_w)
    for f in (stdin, out_w, err_w):
        os.close(f)
    while True:
        pid, status, ru = os.wait4(-1, 0)
        if pid == child:
            break
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    st_w.send(json.dumps({"code": code, "signal": sig, "cpu": ru.ru_utime + ru.ru_stime}).encode())
    os._exit(0)


# ---------------------------------------------------------------- the program


def program(req: dict, config: dict, stdin: int, out_w: int, err_w: int) -> None:
    """Become the requested program, the leader of a session of its own under the guard (its
    signals reach only itself and what it starts); never returns."""
    try:
        os.setsid()
        prctl(PR_SET_DUMPABLE, 1)
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")  # under the machine's own memory pressure a program goes first
        if os.fstat(stdin).st_size == 0:  # no input: /dev/null, as a batch run's stdin is
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
        else:
            os.dup2(stdin, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.umask(0o002)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        if config.get("guard"):
            guard = base64.b64decode(config["guard"])
            install_seccomp(with_floor(guard, config["marks"], os.getpid()))
    except BaseException as exc:  # noqa: BLE001
        os.write(2, f"{NOTE}cannot start: {exc}\n".encode())
        os._exit(126)
    argv = req["argv"]
    if req["fast"]:
        os._exit(run_python(argv))
    for sig in PYTHON_IGNORES:  # Python ignores them; a fresh process does not
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, os.environ)
    except OSError as exc:
        os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
        os._exit(127 if exc.errno == errno.ENOENT else 126)


def limit_note(exc: BaseException) -> str | None:
    """Say which limit an uncaught exception most likely came from."""
    if isinstance(exc, MemoryError):
        return "memory limit reached (MemoryError)"
    if isinstance(exc, OSError):
        return {
            errno.EFBIG: "file size limit reached",
            errno.EMFILE: "open files limit reached",
            errno.EAGAIN: "process limit reached",
        }.get(exc.errno)
    return None


def run_python(argv: list[str]) -> int:
    """Run ``python -c CODE`` / ``python FILE`` in place, as a fresh interpreter would."""
    import atexit
    import builtins
    import importlib.machinery

    main_mod = types.ModuleType("__main__")
    main_mod.__dict__["__annotations__"] = {}
    main_mod.__dict__["__builtins__"] = builtins
    if argv[1] == "-c":
        source, filename = argv[2], "<string>"
        sys.argv = ["-c", *argv[3:]]
        sys.path.insert(0, "")
        main_mod.__loader__ = importlib.machinery.BuiltinImporter
    else:
        filename = argv[1]
        try:
            with open(filename, "rb") as fh:
                source = fh.read()
        except OSError as exc:
            sys.stderr.write(
                f"{argv[0]}: can't open file {os.path.abspath(filename)!r}: "
                f"[Errno {exc.errno}] {exc.strerror}\n"
            )
            sys.stderr.flush()
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
        filename = main_mod.__file__ = os.path.abspath(filename)  # as Python 3.9+ names a script
        main_mod.__cached__ = None
        main_mod.__loader__ = importlib.machinery.SourceFileLoader("__main__", main_mod.__file__)
    sys.modules["__main__"] = main_mod
    code = 0
    try:
        program = compile(
            source, filename, "exec"
        )  # inspect-evals-lint: ignore[host_code_execution] -- the sandboxed program itself, in the sandbox's own process (never the harness)
        exec(
            program, main_mod.__dict__
        )  # inspect-evals-lint: ignore[host_code_execution] -- as above
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException as exc:  # noqa: BLE001 - a fresh interpreter reports anything
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        exc.__traceback__ = tb  # hide our own frame, as if the program were the main script
        try:
            sys.excepthook(type(exc), exc, tb)
        except BaseException:  # noqa: BLE001
            traceback.print_exception(type(exc), exc, tb)
        note = limit_note(exc)
        if note:
            sys.stderr.write(f"{NOTE}{note}\n")
        code = 1
    with contextlib.suppress(BaseException):  # a fresh interpreter reports and carries on
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            code = code or 120
    return code


def exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    sys.stderr.write(f"{exc.code}\n")
    return 1


def probe(mode: str, scratch: str) -> None:
    """Exit 0 if ``mode``'s namespaces and mounts work here (run by the harness, once)."""
    if mode == "userns":
        enter_userns()
    _check(
        libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
        "unshare",
    )
    pid = os.fork()
    if pid == 0:
        try:
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
            mount("proc", scratch, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError as exc:
            sys.stderr.write(f"{exc}\n")
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


def features(program_b64: str) -> None:
    """Print (JSON) whether an execution here gets a fresh session keyring and the seccomp filter,
    and if not why: tried in a child, as an execution's init would."""
    pid = os.fork()
    if pid == 0:
        out = {"keyring": "", "seccomp": ""}
        try:
            join_session_keyring()
        except OSError as exc:
            out["keyring"] = str(exc)
        try:
            prctl(PR_SET_NO_NEW_PRIVS, 1)
            install_seccomp(base64.b64decode(program_b64))
            checks = [
                ("unshare", SYS_UNSHARE, [CLONE_NEWUSER], errno.EPERM),
                ("clone3", SYS_CLONE3, [None, 0], errno.ENOSYS),
            ]
            for label, number, args, want in checks:
                if syscall(number, *args) != -1 or ctypes.get_errno() != want:
                    raise OSError(f"the filter let {label} through")
        except OSError as exc:
            out["seccomp"] = str(exc)
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "features":
        features(sys.argv[2])
    else:
        main()
