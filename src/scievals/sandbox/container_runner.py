"""Runs one program in a container of a scoring runtime image, as our own sandbox would.

Shipped as source into the container (``python3 -I -S -c SOURCE``, the request as one JSON
object on stdin, the answer as one line on stdout) by ``container.py``; it imports only the
standard library. The harness runs one request at a time per container, so the container's
own kernel limits (memory, pids) are the program's: the runner reads their counters to say
which limit stopped it. For each program it

- kills whatever an earlier program left running and empties the working directory, /tmp,
  /dev/shm and System V IPC, so that nothing of one program can reach the next;
- writes the program file and runs it in a session of its own, under the sandbox's rlimits,
  the harness's seccomp filter and a second filter that keeps its signals (and rlimit and
  pidfd calls) off every process older than itself (the runner, the container's init);
- enforces the wall clock, keeps the last bytes of each output stream, watches the memory and
  pids counters of the container's cgroup and whether its capped file systems filled up;
- kills every process the program left (the runner is their subreaper, so a double fork does
  not escape) and reads the file the harness asked for (never following a link, never
  blocking, bounded), then empties the directories again.

It only acts in an image that says it is one of ours (``/etc/scievals-runtime``): elsewhere
(Inspect's local sandbox, someone else's image) it answers ``refused`` and touches nothing.
"""

import base64
import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import stat
import sys
import time

MARKER = "/etc/scievals-runtime"
PREFIX = "SCIEVALS-RUNNER "
HELD = ".scievals-held"
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 4, 22, 38
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2
IPC_RMID = 0
POLL_SECONDS = 0.05
CGROUP_V2 = "/sys/fs/cgroup"
BOOT_TICKS = os.sysconf("SC_CLK_TCK")  # one second
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def prctl(option, arg):
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl {option}: {os.strerror(err)}")


def install_seccomp(program):
    fprog = SockFprog(len(program) // 8, program)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


def with_floor(program, marks, floor):
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


# ---------------------------------------------------------------- the container's state


def stat_fields(pid):
    """(parent pid, start time in clock ticks) from /proc/PID/stat, or None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def ancestors():
    """What is never killed: the container's init and main process (started with it, within
    ``BOOT_TICKS``: no program can start that early), and this process with the ones it runs
    under (the exec's timeout wrapper)."""
    keep = {1}
    boot = stat_fields(1)
    if boot is not None:
        for name in os.listdir("/proc"):
            fields = stat_fields(name) if name.isdigit() else None
            if fields is not None and fields[0] == 1 and fields[1] - boot[1] <= BOOT_TICKS:
                keep.add(int(name))
    pid = os.getpid()
    while pid > 1 and pid not in keep:
        keep.add(pid)
        fields = stat_fields(pid)
        if fields is None:
            break
        pid = fields[0]
    return keep


def sweep(keep, seconds=5.0):
    """SIGKILL every process but ``keep`` until none is left (a fork bomb refills the table),
    reaping our own children (orphans come to us: we are their subreaper)."""
    deadline = time.monotonic() + seconds
    while True:
        found = False
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in keep:
                found = True
                with contextlib.suppress(OSError):
                    os.kill(int(name), signal.SIGKILL)
        reap()
        if not found or time.monotonic() > deadline:
            return
        time.sleep(0.005)


REAPED = {}  # pid -> (status, rusage) of the children reaped so far


def reap():
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        REAPED[pid] = (status, usage)


def clear(top, keep_name=None):
    """Remove everything under ``top`` (but ``keep_name``), with few open files and no
    recursion: each directory found is moved up to ``top`` under a fresh name and emptied in
    turn, so that neither depth nor path length matters."""
    try:
        topfd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    token = os.urandom(6).hex()
    moved = []
    serial = iter(range(1 << 62))

    def empty(fd, at_top):
        for entry in list(os.scandir(fd)):
            if at_top and entry.name == keep_name:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    name = f".scievals-gone-{token}-{next(serial)}"
                    os.rename(entry.name, name, src_dir_fd=fd, dst_dir_fd=topfd)
                    moved.append(name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                pass

    try:
        empty(topfd, True)
        while moved:
            name = moved.pop()
            try:
                os.chmod(name, 0o700, dir_fd=topfd)
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=topfd)
            except OSError:
                continue
            try:
                empty(fd, False)
            except OSError:
                pass
            finally:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=topfd)
    finally:
        os.close(topfd)


def clear_ipc():
    """Remove System V shared memory, queues and semaphores (they outlive their creator)."""
    for kind, call in (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl")):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        fn = getattr(libc, call)
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].isdigit():
                if call == "semctl":
                    fn(int(fields[1]), 0, IPC_RMID, None)
                else:
                    fn(int(fields[1]), IPC_RMID, None)


def counter(paths, key):
    """A ``key N`` line of the first readable cgroup events file; None when there is none."""
    for path in paths:
        try:
            with open(path) as fh:
                for line in fh:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def oom_kills():
    return counter(
        [f"{CGROUP_V2}/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"], "oom_kill"
    )


def fork_refusals():
    return counter([f"{CGROUP_V2}/pids.events", "/sys/fs/cgroup/pids/pids.events"], "max")


def full(paths):
    """The reason if one of the capped file systems is (nearly) full."""
    for path in paths:
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        total = st.f_blocks * st.f_frsize
        if total and (
            st.f_bavail * st.f_frsize < min(2 << 20, total // 16)
            or (st.f_files and st.f_favail == 0)
        ):
            return f"disk limit ({path} full: {total / 2**20:g} MiB, {st.f_files} files)"
    return None


# ---------------------------------------------------------------- one program


def child(req, home, out_w, err_w, main_filter, floor_guard):
    """Become the program: its own session, the rlimits, the filters, then exec."""
    try:
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.closerange(3, 1 << 16)
        os.setsid()
        prctl(PR_SET_DUMPABLE, 1)  # its own /proc files are its own again (the runner's are not)
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write("1000")  # the kernel's OOM killer takes the program, never the runner
        lim = req["limits"]
        for res, value in (
            (resource.RLIMIT_AS, lim["memory_bytes"]),
            (resource.RLIMIT_FSIZE, lim["file_bytes"]),
            (resource.RLIMIT_NOFILE, lim["open_files"]),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(res, (value, value))
        cpu = int(lim["cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        os.chdir(home)
        os.umask(0o002)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        install_seccomp(main_filter)
        install_seccomp(with_floor(floor_guard, req["marks"], os.getpid()))
        argv = req["argv"]
        os.execvp(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001
        os.write(2, f"scievals-runner: cannot start: {exc}\n".encode())
    os._exit(127)


def run(req, home):
    keep = ancestors()
    sweep(keep)
    clear_ipc()
    os.chmod(home, 0o755)  # a program may have taken its own rights away
    for top in (home, "/tmp", "/dev/shm"):
        clear(top)
    fd = os.open(
        os.path.join(home, req["file"]), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444
    )  # read-only to the program, as the harness's file is in our sandbox
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(req["source"])
    main_filter, guard = (base64.b64decode(f) for f in req["filters"][os.uname().machine])
    oom0, refused0 = oom_kills(), fork_refusals()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r), os.close(err_r)
        child(req, home, out_w, err_w, main_filter, guard)
    os.close(out_w), os.close(err_w)
    lim, cap, timeout = req["limits"], req["tail"], req["timeout"]
    tails = {out_r: bytearray(), err_r: bytearray()}
    poller = select.poll()
    for f in tails:
        poller.register(f, select.POLLIN)
    live = set(tails)
    stop, status, usage, disk = None, None, None, None
    while status is None:
        if stop is None:
            disk = disk or full((home, "/tmp"))
            if time.monotonic() - start > timeout:
                stop = ("timeout", f"timeout ({timeout:g} s)")
            elif (oom_kills() or 0) > (oom0 or 0):
                stop = ("memory", memory_reason(lim))
            elif (fork_refusals() or 0) > (refused0 or 0):
                stop = ("processes", process_reason(lim))
            if stop is not None:
                sweep(keep)
        if not drain(poller, tails, live, cap, int(POLL_SECONDS * 1000)):
            time.sleep(POLL_SECONDS)
        reap()
        if pid in REAPED:
            status, usage = REAPED.pop(pid)
    seconds = time.monotonic() - start
    # What the program wrote before it ended, not what its leftovers may still be writing.
    while drain(poller, tails, live, cap, 0):
        pass
    sweep(keep)
    disk = disk or full((home, "/tmp"))
    answer = {
        "seconds": seconds,
        "stdout": base64.b64encode(bytes(tails[out_r])).decode(),
        "stderr": base64.b64encode(bytes(tails[err_r])).decode(),
    }
    answer.update(verdict(status, usage, stop, disk, lim, oom0, refused0))
    answer.update(collect(req, home))
    os.chmod(home, 0o755)
    for top in (home, "/tmp", "/dev/shm"):
        clear(top, keep_name=HELD if top == home else None)
    clear_ipc()
    return answer


def drain(poller, tails, live, cap, wait_ms):
    """Read what is ready into the tails (each keeps its last ``cap`` bytes); False when
    nothing was (or no stream is open)."""
    ready = poller.poll(wait_ms) if live else []
    for f, _ in ready:
        chunk = os.read(f, 1 << 16)
        if not chunk:
            poller.unregister(f)
            live.discard(f)
            continue
        tails[f] += chunk
        del tails[f][: max(0, len(tails[f]) - cap)]
    return bool(ready)


def memory_reason(lim):
    return f"memory limit ({lim['memory_bytes'] / 2**30:g} GiB)"


def process_reason(lim):
    return f"process limit ({lim['processes']} processes and threads)"


def verdict(status, usage, stop, disk, lim, oom0, refused0):
    """returncode, limit and reason, as our own sandbox's supervisor says them."""
    if stop is not None and stop[0] == "timeout":
        return {"returncode": None, "limit": "timeout", "reason": stop[1]}
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = 128 + sig if sig else os.WEXITSTATUS(status)
    if stop is not None:
        return {"returncode": 137, "limit": stop[0], "reason": stop[1]}
    if (oom_kills() or 0) > (oom0 or 0):
        return {"returncode": code, "limit": "memory", "reason": memory_reason(lim)}
    cpu = lim["cpu_seconds"]
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and usage.ru_utime + usage.ru_stime >= cpu):
        return {"returncode": code, "limit": "cpu", "reason": f"cpu time limit ({cpu:g} s)"}
    if sig == signal.SIGXFSZ:
        reason = f"file size limit ({lim['file_bytes'] // 2**20} MiB)"
        return {"returncode": code, "limit": "file_size", "reason": reason}
    if code != 0 and (fork_refusals() or 0) > (refused0 or 0):
        return {"returncode": code, "limit": "processes", "reason": process_reason(lim)}
    if code != 0 and disk:
        return {"returncode": code, "limit": "disk", "reason": disk}
    reason = f"signal {signal.Signals(sig).name}" if sig else None
    return {"returncode": code, "limit": None, "reason": reason}


def collect(req, home):
    """The file the harness asked for: inline when small, else held for ``fetch``."""
    name = req.get("keep")
    if not name:
        return {}
    try:
        fd = os.open(os.path.join(home, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {"kept": {"missing": True}}
    except OSError as exc:
        return {"kept": {"not_regular": os.strerror(exc.errno or 0) or str(exc)}}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return {"kept": {"not_regular": "not a regular file"}}
        if info.st_size > req["max_keep"]:
            return {"kept": {"too_large": info.st_size}}
        if info.st_size > req["inline"]:
            os.rename(os.path.join(home, name), os.path.join(home, HELD))  # nothing runs now
            return {"kept": {"held": info.st_size}}
        data = bytearray()
        while len(data) <= req["max_keep"]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        return {"kept": {"data": base64.b64encode(bytes(data)).decode()}}
    finally:
        os.close(fd)


def fetch(req, home):
    """A chunk of the held file; the last one removes it."""
    path = os.path.join(home, HELD)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        os.lseek(fd, req["offset"], os.SEEK_SET)
        data = os.read(fd, req["length"])
    finally:
        os.close(fd)
    if req.get("last"):
        os.unlink(path)
    return {"data": base64.b64encode(data).decode()}


def main():
    req = json.loads(sys.stdin.buffer.read())
    machine = os.uname().machine
    if not os.path.exists(MARKER):
        answer = {"refused": f"no {MARKER}: not a scievals runtime container"}
    elif req["op"] == "run" and machine not in req["filters"]:
        answer = {"refused": f"no seccomp filters for {machine}"}
    else:
        prctl(PR_SET_DUMPABLE, 0)  # same uid as the program: keep it out of our /proc files
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        home = os.getcwd()
        answer = fetch(req, home) if req["op"] == "fetch" else run(req, home)
    sys.stdout.write(PREFIX + json.dumps(answer) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":  # also under ``python3 -c SOURCE``
    main()
