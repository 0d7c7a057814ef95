"""The warm zygote and the processes it forks: the only file about our sandbox's processes.

It runs under the runtime's interpreter (``python -I -B zygote.py CTL_FD``, assembled with the
modules it imports by ``scievals.shipped``; the config is sent first) and imports nothing from
scievals, only the standard library and the runtime's packages. What the processes stand on
is in its sibling modules: ``kernel`` (libc, mounts, namespaces, seccomp, the private root),
``framing`` (the messages), ``groups`` (cgroups and the kernel's counters), ``verdict`` (how a
program ended, shared with the container runner) and ``inplace`` (a Python program run in place).

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
The request and the answer are typed field by field in the harness's ``engine.py``
(``ZygoteRequest``, ``ZygoteAck``, ``ZygoteAnswer``).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import json
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback

from . import groups as cg
from . import kernel
from .framing import recv_msg, send_msg
from .inplace import run_python, warm
from .verdict import NOTE, exit_verdict, full_disk, reason, set_rlimits

POLL_SECONDS = 0.1
PYTHON_IGNORES = {signal.SIGPIPE, signal.SIGXFSZ}  # ignored by Python at start, by nothing else
RESET_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP, *PYTHON_IGNORES})
"""Set to default in each execution's init (a fresh run's dispositions); computed once."""


# ---------------------------------------------------------------- zygote


def main() -> None:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    config = recv_msg(ctl)
    failed = warm(config["warm"])
    if config["mode"] == "userns":
        kernel.enter_userns()
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
        groups = cg.group_dirs(config.get("cgroups"), f"{os.getpid()}-{serial}")
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
        cg.remove_groups(self.groups)

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
        cg.remove_groups(groups)
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
        kernel.unshare(
            kernel.CLONE_NEWPID | kernel.CLONE_NEWNET | kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS
        )
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
            prepared.cgroup = cg.join_groups(cgroups, groups, pid)
        except BaseException:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            cg.remove_groups(groups)
            raise
    return prepared


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

    def oom(self) -> bool:
        oom = self.cgroup.get("oom")
        return bool(oom) and cg.counter(oom, "oom_kill") > 0

    def fork_refused(self) -> bool:
        pids = self.cgroup.get("pids")
        return bool(pids) and cg.counter(pids[1], "max") > 0

    def check(self) -> tuple[str, str] | None:
        """(limit, reason) when the tree must be stopped now."""
        self.disk = self.disk or full_disk(self.disks)
        if self.oom():
            return "memory", reason("memory", self.lim)
        pids = self.cgroup.get("pids")
        if pids and (cg.read_int(pids[0]) >= pids[2] or self.fork_refused()):
            return "processes", reason("processes", self.lim)
        procs = None
        if self.cgroup.get("cpu_usage"):
            used = cg.cgroup_cpu_seconds(self.cgroup["cpu_usage"])
        else:
            procs = cg.tree(self.init_pid)
            used = cg.tree_cpu_seconds(procs)
        if used > self.lim["cpu_seconds"]:
            return "cpu", reason("cpu", self.lim)
        if self.cgroup.get("oom") and pids:
            return None
        pss, tasks = cg.usage(procs if procs is not None else cg.tree(self.init_pid))
        if not self.cgroup.get("oom") and pss > self.lim["memory_bytes"]:
            return "memory", reason("memory", self.lim)
        if not pids and tasks >= self.lim["processes"]:
            return "processes", reason("processes", self.lim)
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
    returncode, limit, why = exit_status(info, stop, watch, lim)
    if limit is None and info is None:  # init is our code: it reports unless the kernel kills it
        return {"error": f"the sandbox's init process died ({_describe_status(status)})"}
    return {
        "returncode": returncode,
        "stdout": base64.b64encode(out).decode(),
        "stderr": base64.b64encode(err).decode(),
        "limit": limit,
        "reason": why,
        "seconds": seconds,
    }


def _hand_over(req: dict, config: dict, prep: Prepared) -> list[tuple[str, int]]:
    """The request and its input written where the waiting init reads them, its limits set,
    and init told to go; the disks to watch (the work directory's, if it has a quota)."""
    lim = req["limits"]
    if prep.cgroup:
        cg.set_limits(prep.cgroup, lim)
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

    def kill(limit: str, why: str) -> None:
        nonlocal stop, killed_at
        if killed_at is None:
            stop = (limit, why)
            os.kill(pid, signal.SIGKILL)
            cg.kill_group(watch.cgroup)
            killed_at = time.monotonic()

    while live:
        now = time.monotonic()
        if killed_at is None:
            if now - start > wall:
                if timeout:
                    kill("timeout", reason("timeout", lim, timeout))
                else:
                    kill("wall_clock", reason("wall_clock", lim))
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
                    cg.kill_group(watch.cgroup)  # init is done: nothing of it may linger
                continue
            chunk = os.read(f, 1 << 16)
            if not chunk:
                poller.unregister(f)
                live.discard(f)
                continue
            seen[f] += len(chunk)
            _keep(data[f], chunk, cap, tail)
            if not tail and seen[f] > cap:
                kill("output", reason("output", lim))
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
    """(returncode, limit, reason) by the one rule (``verdict.exit_verdict``), from what stopped
    the program, init's report of its end and the counters the watcher reads."""
    if stop is None and info is None:  # init itself was killed: the OOM killer may choose it
        return 137, ("memory" if watch.oom() else None), reason("memory", lim)
    sig, code, cpu = (info["signal"], info["code"], info["cpu"]) if info else (0, 0, 0.0)
    return exit_verdict(
        sig,
        code,
        lim,
        stop=stop,
        oom=watch.oom(),
        refused=watch.fork_refused(),
        disk=watch.disk,
        cpu_rlimit=watch.cpu_rlimit,
        cpu_used=cpu,
    )


# ---------------------------------------------------------------- init (pid 1 of the execution)


def init(
    config: dict, stdin: int, request: int, out_w: int, err_w: int, st_w: socket.socket
) -> None:
    """Pid 1 of the execution (forked and moved into its cgroups before the request came):
    wait for the request, build the root, become the uid, take a fresh keyring, set the limits
    and the seccomp filter, fork the program, report how it ended. Init leads a session of its
    own: a program's group signal can name no process of the zygote's."""
    kernel.prctl(kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
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
        kernel.build_root(config["root_mount"], req["limits"], config["visible"], req["workdir"])
        mounts = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in ("/tmp", "/dev/shm")]
        socket.send_fds(st_w, [b"fds"], mounts)
        for fd in mounts:
            os.close(fd)
    uid, gid = req["uid"], req["gid"]
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
    if config["mode"] == "userns":
        kernel.drop_capabilities()
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)
    kernel.join_session_keyring()
    cgroup = req.get("cgroup") or {}
    # A memory cgroup charges the pages really used, so an address-space limit stays only where
    # no cgroup counts memory or the mode is the weakest; RLIMIT_NPROC counts per uid: only
    # meaningful for a uid of our own, and not needed under a pids cgroup (whose refusals are
    # counted, so the verdict is the kernel's).
    set_rlimits(
        req["limits"],
        address_space=config["mode"] == "rlimits-only" or not cgroup.get("oom"),
        cpu=bool(req.get("cpu_rlimit")),
        nproc=uid is not None and not cgroup.get("pids"),
    )
    if config.get("seccomp"):
        kernel.install_seccomp(base64.b64decode(config["seccomp"]))
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
        kernel.prctl(kernel.PR_SET_DUMPABLE, 1)
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
            kernel.install_seccomp(kernel.with_floor(guard, config["marks"], os.getpid()))
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
