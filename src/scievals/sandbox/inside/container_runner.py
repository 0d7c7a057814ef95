"""Runs one program in a container of a scoring runtime image, as our own sandbox would.

Shipped as source into the container (``python3 -I -S -c PROGRAM``, the request as one JSON
object on stdin, the answer as one line on stdout) by ``container.py``; it imports only the
standard library and its siblings, assembled with it by ``scievals.shipped``: ``kernel``
(prctl, seccomp), ``groups`` (the cgroup counters), ``verdict`` (the rule our own sandbox's
supervisor judges by, and the rlimit set) and ``inplace`` (the warm server's in-place run). The harness runs one request at a time per container, so the container's
own kernel limits (memory, pids) are the program's: the runner reads their counters to say
which limit stopped it. For each program it

- kills whatever an earlier program left running and empties the working directory, /tmp,
  /dev/shm and System V IPC, so that nothing of one program can reach the next;
- writes the program file and runs it in a session of its own, under the sandbox's rlimits,
  the harness's seccomp filter and a second filter that keeps its signals (and rlimit and
  pidfd calls) off every process older than itself (the runner, the container's init);
- enforces the wall clock and the CPU seconds (the container's cgroup's, not an RLIMIT_CPU,
  which would make the program's process CPU clock tick-granular), keeps the last bytes of each
  output stream, watches the memory and pids counters of the container's cgroup and whether its
  capped file systems filled up;
- kills every process the program left (the runner is their subreaper, so a double fork does
  not escape) and reads the file the harness asked for (never following a link, never
  blocking, bounded), then empties the directories again.

It only acts in an image that says it is one of ours (``/etc/scievals-runtime``): elsewhere
(Inspect's local sandbox, someone else's image) it answers ``refused`` and touches nothing.
"""

import base64
import contextlib
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import time
import zlib

from . import groups, kernel
from .inplace import run_python, warm
from .verdict import exit_verdict, full_disk, reason, set_rlimits

MARKER = "/etc/scievals-runtime"
PREFIX = "SCIEVALS-RUNNER "
HELD = ".scievals-held"
IPC_RMID = 0
POLL_SECONDS = 0.05
CGROUP_V2 = "/sys/fs/cgroup"
MQUEUE = "/dev/mqueue"
V1_OOM, V1_PIDS = "/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/pids/pids.events"
CPU_USAGE = (  # the container's CPU seconds: v2, then v1 with cpuacct on its own or with cpu
    f"{CGROUP_V2}/cpu.stat",
    "/sys/fs/cgroup/cpuacct/cpuacct.usage",
    "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage",
)
BOOT_TICKS = os.sysconf("SC_CLK_TCK")  # one second


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
    """What is never killed: the container's init, its main process (init's oldest child, if it
    started with the container, within ``BOOT_TICKS``: what a command left to init came later,
    however soon after the start) and this process with the ones it runs under (the exec's
    timeout wrapper)."""
    keep = {1}
    boot = stat_fields(1)
    adopted = []
    for name in os.listdir("/proc"):
        fields = stat_fields(name) if name.isdigit() else None
        if fields is not None and fields[0] == 1:
            adopted.append((fields[1], int(name)))
    if boot is not None and adopted:
        start, main = min(adopted)
        if start - boot[1] <= BOOT_TICKS:
            keep.add(main)
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


def subreaper():
    """Become the subreaper of what a program leaves behind, where the kernel can (gVisor's
    older releases cannot: there the container's init reaps orphans, and the sweep, which
    reads /proc, still finds and kills them)."""
    with contextlib.suppress(OSError):
        kernel.prctl(kernel.PR_SET_CHILD_SUBREAPER, 1)


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
    """Remove System V shared memory, queues and semaphores, and POSIX message queues (all
    outlive their creator)."""
    clear(MQUEUE)
    for kind, call in (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl")):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        fn = getattr(kernel.libc, call)
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].isdigit():
                if call == "semctl":
                    fn(int(fields[1]), 0, IPC_RMID, None)
                else:
                    fn(int(fields[1]), IPC_RMID, None)


def oom_kills():
    """OOM kills in the container's memory cgroup so far (0 where it shows no counter)."""
    return max(groups.counter(p, "oom_kill") for p in (f"{CGROUP_V2}/memory.events", V1_OOM))


def program_memory(req):
    """The program's memory: the harness's figure, or less where the container holds less
    beside the runner's share (a pod's limits, a compose file read without the harness's
    variable), so that a memory verdict names the limit that applied."""
    wanted = req["limits"]["memory_bytes"]
    for path in (f"{CGROUP_V2}/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            with open(path) as fh:
                held = int(fh.read())
            return min(wanted, held - req["runner_bytes"])
    return wanted


def memory_counted():
    """The container's memory cgroup shows its OOM kills: the kernel enforces real memory, and
    the program needs no address-space limit (which overstates what NumPy and OpenBLAS use)."""
    return any(os.path.exists(p) for p in (f"{CGROUP_V2}/memory.events", V1_OOM))


def cpu_seconds(pid):
    """CPU seconds so far: of the whole container where its cgroup says (the runner's and the
    warm server's share beside the program is a fraction of a percent), else of the program's
    process tree from /proc."""
    for path in CPU_USAGE:
        if os.path.exists(path):
            return groups.cgroup_cpu_seconds(path)
    return groups.tree_cpu_seconds(groups.tree(pid)) if pid else 0.0


def fork_refusals():
    """Forks the container's pids cgroup refused so far (0 where it shows no counter)."""
    return max(groups.counter(p, "max") for p in (f"{CGROUP_V2}/pids.events", V1_PIDS))


# ---------------------------------------------------------------- one program


def become_program(req, home, out_w, err_w):
    """Set up this fresh fork as the program: its output pipes, its own session, the rlimits,
    the filters (the guard's floor is this process). Raises on failure."""
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, 1 << 16)
    os.setsid()
    kernel.prctl(kernel.PR_SET_DUMPABLE, 1)  # its own /proc files are its own again
    with open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("1000")  # the kernel's OOM killer takes the program, never the runner
    # No RLIMIT_CPU: the runner counts CPU seconds (clocks stay fine).
    set_rlimits(req["limits"], address_space=not memory_counted())
    os.chdir(home)
    os.umask(0o002)
    for sig in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # SIGPIPE, SIGXFSZ: ignored, as
    # a Python interpreter has them
    main_filter, guard = (base64.b64decode(f) for f in req["filters"][os.uname().machine])
    kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
    kernel.install_seccomp(main_filter)
    kernel.install_seccomp(kernel.with_floor(guard, req["marks"], os.getpid()))


def cold(req, home, out_w, err_w):
    """The program as a fresh interpreter (no warm server): exec ``argv``; never returns."""
    try:
        become_program(req, home, out_w, err_w)
        for sig in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):  # a fresh process's own
            signal.signal(sig, signal.SIG_DFL)
        argv = req["argv"]
        os.execvp(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001
        os.write(2, f"scievals-runner: cannot start: {exc}\n".encode())
    os._exit(127)


# ---------------------------------------------------------------- the warm server


def serve():
    """The warm server (``python3 -c SOURCE serve``, its config on stdin): imports the
    scientific stack once, then forks each program from that state and runs it in place, as
    our own sandbox's zygote does (``inplace.run_python``). Started by a runner
    before any program of the container ran; the programs' guard keeps them off it, and it
    answers only requests that carry the harness's token."""
    config = json.loads(sys.stdin.readline())
    if sys.path[:1] == [""]:  # what -c puts first; a program gets its own directory there
        del sys.path[0]
    kernel.prctl(kernel.PR_SET_DUMPABLE, 0)
    subreaper()
    failed = warm(config["modules"])
    token = bytearray(config.pop("token").encode())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + config["name"])
    listener.listen(8)
    sys.stdout.write(json.dumps({"ready": True, "failed": failed}) + "\n")
    sys.stdout.flush()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        reap()
        REAPED.clear()
        ready, _, _ = select.select([listener], [], [], POLL_SECONDS)
        if ready:
            conn, _ = listener.accept()
            with contextlib.suppress(OSError, ValueError, KeyError):
                handle(conn, token)
            conn.close()


def handle(conn, token):
    """One program: its pipes and request from a runner, a fork, its pid, then its status."""
    conn.settimeout(10)
    _, fds, _, _ = socket.recv_fds(conn, 1, 2)
    data = bytearray()
    while not data.endswith(b"\n") and len(data) < 1 << 20:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    req = json.loads(data)
    if len(fds) != 2 or req.get("token", "").encode() != bytes(token):
        for fd in fds:
            os.close(fd)
        return
    pid = os.fork()
    if pid == 0:
        conn.close()
        token[:] = bytes(len(token))  # the program gets no copy of it
        try:
            become_program(req, req["home"], *fds)
        except BaseException as exc:  # noqa: BLE001
            os.write(2, f"scievals-runner: cannot start: {exc}\n".encode())
            os._exit(127)
        os._exit(run_python(req["argv"]))
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    conn.setblocking(False)
    while True:
        reap()
        if pid in REAPED:
            status, _ = REAPED.pop(pid)
            conn.setblocking(True)
            conn.sendall(json.dumps({"status": status}).encode() + b"\n")
            return
        REAPED.clear()
        try:
            if conn.recv(1) == b"":
                return  # the runner went away: the next one sweeps the program
        except BlockingIOError:
            pass
        time.sleep(0.01)


def known_warm(req, keep):
    """The warm server the harness knows of, if it still runs: kept from the sweeps."""
    known = req.get("warm") or {}
    pid = known.get("pid")
    if isinstance(pid, int) and pid > 1:
        fields = stat_fields(pid)
        if fields is not None and fields[1] == known.get("start"):
            keep.add(pid)
            return known
    return None


def warm_server(req, keep, known):
    """The container's warm server: ``known`` if it runs, else a new one, started now (after
    the sweep, before any program); None when none can start."""
    if known is not None:
        return known
    name = f"scievals-warm-{os.urandom(8).hex()}"
    config = {
        "modules": req["modules"],
        "token": req["token"],
        "name": name,
    }
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", req["runner"], "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
        proc.stdin.write(json.dumps(config).encode() + b"\n")
        proc.stdin.close()
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        line = proc.stdout.readline() if ready else b""
        proc.stdout.close()
        if not json.loads(line or b"{}").get("ready"):
            raise OSError("the warm server did not start")
    except (OSError, ValueError):
        sweep(keep)
        return None
    fields = stat_fields(proc.pid)
    if fields is None:
        return None
    keep.add(proc.pid)
    return {"pid": proc.pid, "start": fields[1], "name": name}


def start_warm(req, home, warm, out_w, err_w):
    """Ask the warm server to fork the program: the connection it answers on and the program's
    pid, or None."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(10)
        conn.connect("\0" + warm["name"])
        socket.send_fds(conn, [b"x"], [out_w, err_w])
        program = {k: req[k] for k in ("token", "argv", "limits", "filters", "marks")}
        conn.sendall(json.dumps({**program, "home": home}).encode() + b"\n")
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(4096)
            if not chunk:
                raise OSError("the warm server closed the connection")
            reply += chunk
        pid = json.loads(reply)["pid"]
    except (OSError, ValueError, KeyError):
        conn.close()
        return None
    conn.setblocking(False)
    return conn, pid


def warm_status(conn, buffer):
    """The program's wait status once the warm server sends it; None meanwhile; raises OSError
    when the server went away without it."""
    try:
        chunk = conn.recv(4096)
    except BlockingIOError:
        return None
    if not chunk:
        raise OSError("the warm server went away during the program")
    buffer += chunk
    if not buffer.endswith(b"\n"):
        return None
    return json.loads(buffer)["status"]


def reset(home, keep, keep_name=None):
    """Nothing of an earlier program left: its processes killed, its files and IPC gone."""
    sweep(keep)
    clear_ipc()
    os.chmod(home, 0o755)  # a program may have taken its own rights away
    for top in (home, "/tmp", "/dev/shm"):
        clear(top, keep_name=keep_name if top == home else None)


def cleared(req, home):
    """The ``clear`` request: the container as a program finds it, with its warm server
    running (kept, or started now), so that the next program forks at once. The harness
    sends it before a container serves its first sample and before it is handed on."""
    keep = ancestors()
    known = known_warm(req, keep)
    reset(home, keep)
    return {"cleared": True, "warm": warm_server(req, keep, known)}


def run(req, home):
    req["limits"] = {**req["limits"], "memory_bytes": program_memory(req)}
    keep = ancestors()
    known = known_warm(req, keep)
    reset(home, keep)
    fd = os.open(
        os.path.join(home, req["file"]), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444
    )  # read-only to the program, as the harness's file is in our sandbox
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(req["source"])
    warm = warm_server(req, keep, known)
    oom0, refused0 = oom_kills(), fork_refusals()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.monotonic()
    started = start_warm(req, home, warm, out_w, err_w) if warm else None
    conn, pid, buffer = None, None, bytearray()
    if started is not None:
        conn, pid = started
    else:
        warm = None
        pid = os.fork()
        if pid == 0:
            os.close(out_r), os.close(err_r)
            cold(req, home, out_w, err_w)
    os.close(out_w), os.close(err_w)
    lim, cap, timeout = req["limits"], req["tail"], req["timeout"]
    tails = {out_r: bytearray(), err_r: bytearray()}
    poller = select.poll()
    for f in tails:
        poller.register(f, select.POLLIN)
    live = set(tails)
    if conn is not None:
        poller.register(conn, select.POLLIN)  # its answer ends the wait at once
    stop, status, disk = None, None, None
    cpu0 = cpu_seconds(pid)
    while status is None:
        if stop is None:
            disk = disk or full_disk([(home, home), ("/tmp", "/tmp")])
            if time.monotonic() - start > timeout:
                stop = ("timeout", reason("timeout", lim, timeout))
            elif oom_kills() > oom0:
                stop = ("memory", reason("memory", lim))
            elif fork_refusals() > refused0:
                stop = ("processes", reason("processes", lim))
            elif cpu_seconds(pid) - cpu0 > lim["cpu_seconds"]:
                stop = ("cpu", reason("cpu", lim))
            if stop is not None:
                sweep(keep)
        drain(poller, tails, live, cap, int(POLL_SECONDS * 1000))
        reap()
        if conn is None and pid in REAPED:
            status = REAPED.pop(pid)[0]
        elif conn is not None:
            try:
                status = warm_status(conn, buffer)
            except (OSError, ValueError, KeyError):
                sweep(keep)
                return {"error": "the warm server went away during the program", "warm": None}
    seconds = time.monotonic() - start
    # What the program wrote before it ended, not what its leftovers may still be writing
    # (bounded: a leftover that never stops writing must not hold the runner).
    for _ in range(2 * (cap >> 16) + 2):
        if not drain(poller, tails, live, cap, 0):
            break
    sweep(keep)
    disk = disk or full_disk([(home, home), ("/tmp", "/tmp")])
    answer = {
        "seconds": seconds,
        "stdout": base64.b64encode(bytes(tails[out_r])).decode(),
        "stderr": base64.b64encode(bytes(tails[err_r])).decode(),
    }
    if conn is not None:
        conn.close()
    answer.update(verdict(status, stop, disk, lim, oom0, refused0))
    answer["warm"] = warm
    answer.update(collect(req, home))
    reset(home, keep, keep_name=HELD)
    return answer


def drain(poller, tails, live, cap, wait_ms):
    """Wait up to ``wait_ms`` for output or another registered file (the warm server's
    answer), reading what is ready into the tails (each keeps its last ``cap`` bytes); False
    when no stream had anything."""
    read = False
    for f, _ in poller.poll(wait_ms):
        if f not in live:
            continue
        read = True
        chunk = os.read(f, 1 << 16)
        if not chunk:
            poller.unregister(f)
            live.discard(f)
            continue
        tails[f] += chunk
        del tails[f][: max(0, len(tails[f]) - cap)]
    return read


def verdict(status, stop, disk, lim, oom0, refused0):
    """returncode, limit and reason by the one rule our own sandbox's supervisor uses
    (``verdict.exit_verdict``), from the program's wait status and the container's counters."""
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    returncode, limit, why = exit_verdict(
        sig,
        code,
        lim,
        stop=stop,
        oom=oom_kills() > oom0,
        refused=fork_refusals() > refused0,
        disk=disk,
    )
    return {"returncode": returncode, "limit": limit, "reason": why}


def collect(req, home):
    """The file the harness asked for, compressed (zlib, level 1: records shrink about tenfold,
    and every byte crosses ``docker exec`` as base64): inline when small, else held for
    ``fetch``."""
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
        packer, size, packed = zlib.compressobj(1), 0, bytearray()
        while size <= req["max_keep"]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            packed += packer.compress(chunk)
        packed += packer.flush()
    finally:
        os.close(fd)
    if size > req["max_keep"]:
        return {"kept": {"too_large": size}}
    if len(packed) <= req["inline"]:
        return {"kept": {"zlib": base64.b64encode(bytes(packed)).decode(), "size": size}}
    # Nothing of the program runs now, and only the held file is wanted from here on: the
    # directory is emptied first, so that a program that filled it cannot leave no room.
    clear(home)
    held = os.open(os.path.join(home, HELD), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(held, "wb") as fh:
        fh.write(packed)
    return {"kept": {"held": len(packed), "size": size}}


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


def respond():
    req = json.loads(sys.stdin.buffer.read())
    machine = os.uname().machine
    if not os.path.exists(MARKER):
        answer = {"refused": f"no {MARKER}: not a scievals runtime container"}
    elif req["op"] == "run" and machine not in req["filters"]:
        answer = {"refused": f"no seccomp filters for {machine}"}
    elif req["op"] == "fetch":  # nothing of a program runs now: the file is read and that is all
        answer = fetch(req, os.getcwd())
    else:
        kernel.prctl(kernel.PR_SET_DUMPABLE, 0)  # same uid as the program: keep it out of our /proc
        subreaper()
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        answer = (cleared if req["op"] == "clear" else run)(req, os.getcwd())
    sys.stdout.write(PREFIX + json.dumps(answer) + "\n")
    sys.stdout.flush()


def main():
    """``python3 -I -S -c PROGRAM`` (a request on stdin), or ``... serve`` (the warm server)."""
    serve() if sys.argv[1:] == ["serve"] else respond()
