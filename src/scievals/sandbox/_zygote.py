"""The warm zygote: a process of the pinned runtime that has imported the scientific stack once.

It runs under the runtime's interpreter (``python -I -B _zygote.py CTL_FD``; the config is sent
first) and imports nothing from scievals, only the standard library and the runtime's packages.

For every execution the harness sends one socket over the control socket (SCM_RIGHTS). The zygote
forks a *supervisor* for it and goes straight back to waiting, so executions run in parallel. The
supervisor reads the request from that socket, enters fresh namespaces (mount, pid, network, ipc,
uts) and forks an *init* process, which builds a private root file system (read-only system and
runtime, a private /tmp, the sample's directory read-write), drops to an unprivileged uid, sets the
rlimits and forks the *program*. The program either runs Python code in place (the fast path: no
interpreter start-up, no imports) or execs the command. When init exits the kernel kills everything
left in the pid namespace, so nothing outlives an execution. The supervisor enforces what rlimits
cannot (wall clock, output size, memory and task count of the whole tree) and sends back the result.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import errno
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
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
ST_FLAGS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC}
NOTE = "scievals-sandbox: "

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None):
    _check(libc.mount(_b(src), _b(dst), _b(fstype), flags, _b(data)), f"mount {dst}")


def prctl(option: int, arg: int) -> None:
    _check(libc.prctl(option, arg, 0, 0, 0), f"prctl {option}")


# ---------------------------------------------------------------- messages


def send_msg(sock: socket.socket, obj: dict) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack(">Q", len(data)) + data)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        buf += chunk
    return bytes(buf)


def recv_msg(sock: socket.socket) -> dict:
    (n,) = struct.unpack(">Q", recv_exact(sock, 8))
    return json.loads(recv_exact(sock, n))


# ---------------------------------------------------------------- zygote


def warm(modules: list[str]) -> list[str]:
    """Import the scientific stack once; failures are reported, not fatal."""
    failed = []
    for name in modules:
        try:
            __import__(name)
            if name == "matplotlib":
                import matplotlib

                matplotlib.use("Agg")
        except Exception as exc:  # noqa: BLE001 - report any import failure
            failed.append(f"{name}: {exc}")
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
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(ctl, 16, 1)
        except InterruptedError:
            continue
        if not fds:
            break  # the harness went away: stop
        if os.fork() == 0:
            ctl.close()
            supervise(fds[0], config)
        os.close(fds[0])


# ---------------------------------------------------------------- supervisor


def supervise(fd: int, config: dict) -> None:
    """One execution, from request to result; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sock = socket.socket(fileno=fd)
    try:
        req = recv_msg(sock)
        result = run(req, sock, config)
    except BaseException:  # noqa: BLE001 - anything here is our bug: report it
        result = {"error": traceback.format_exc()}
    with contextlib.suppress(OSError):
        send_msg(sock, result)
    os._exit(0)


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


def run(req: dict, sock: socket.socket, config: dict) -> dict:
    lim = req["limits"]
    stdin = os.memfd_create("stdin")
    os.write(stdin, base64.b64decode(req["input"]))
    os.lseek(stdin, 0, os.SEEK_SET)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    st_r, st_w = os.pipe()
    if config["mode"] in ("unshare", "userns"):
        # The mount namespace is init's alone (its pivot_root would also move our root).
        _check(libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(out_r), os.close(err_r), os.close(st_r), sock.close()
            init(req, config, stdin, out_w, err_w, st_w)
        except BaseException:  # noqa: BLE001
            os.write(err_w, (NOTE + "setup failed: " + traceback.format_exc()).encode())
        os._exit(125)
    for f in (stdin, out_w, err_w, st_w):
        os.close(f)

    cap = lim["output_bytes"]
    data = {out_r: bytearray(), err_r: bytearray()}
    seen = {out_r: 0, err_r: 0}
    status = bytearray()
    poller = select.poll()
    for f in (out_r, err_r, st_r, sock.fileno()):
        poller.register(f, select.POLLIN)
    live = {out_r, err_r, st_r}
    reason = None
    killed_at = None
    timeout = req.get("timeout")
    wall = timeout if timeout else lim["wall_seconds"]
    next_check = start
    while live:
        now = time.monotonic()
        if killed_at is None:
            if now - start > wall:
                reason = "timeout" if timeout else f"wall-clock limit ({wall:g} s)"
            elif now >= next_check:
                next_check = now + 0.1
                pss, tasks = usage(tree(pid))
                if pss > lim["memory_bytes"]:
                    reason = f"memory limit ({lim['memory_bytes'] / 2**30:g} GiB)"
                elif tasks >= lim["processes"]:
                    reason = f"process limit ({lim['processes']} processes and threads)"
        elif now - killed_at > 5:
            break  # the tree is dead; a pipe left open by nothing we can wait for
        if reason and killed_at is None:
            os.kill(pid, signal.SIGKILL)
            killed_at = now
        for f, _ in poller.poll(100):
            if f == sock.fileno():
                if killed_at is None:
                    reason = "cancelled"
                    os.kill(pid, signal.SIGKILL)
                    killed_at = time.monotonic()
                poller.unregister(f)
                continue
            chunk = os.read(f, 1 << 16)
            if not chunk:
                poller.unregister(f)
                live.discard(f)
                continue
            if f == st_r:
                status += chunk
                continue
            seen[f] += len(chunk)
            room = cap - len(data[f])
            if room > 0:
                data[f] += chunk[:room]
            if seen[f] > cap and killed_at is None:
                reason = f"output limit ({cap // 1024} KiB per stream)"
                os.kill(pid, signal.SIGKILL)
                killed_at = time.monotonic()
    os.waitpid(pid, 0)
    elapsed = time.monotonic() - start
    stdout, stderr = bytes(data[out_r]), bytes(data[err_r])
    for f, name in ((out_r, "stdout"), (err_r, "stderr")):
        if seen[f] > cap:
            note = f"\n[{name} truncated: {seen[f]} bytes written, first {cap} kept]\n"
            if f == out_r:
                stdout += note.encode()
            else:
                stderr += note.encode()
    info = json.loads(status) if status else None
    timed_out = reason == "timeout"
    if reason:
        returncode = 137
    elif info is None:
        returncode, reason = 125, "the sandbox's init process died"
    elif info["signal"]:
        sig = info["signal"]
        returncode = 128 + sig
        cpu = lim["cpu_seconds"]
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and info["cpu"] >= cpu):
            reason = f"cpu time limit ({cpu:g} s)"
        elif sig == signal.SIGXFSZ:
            reason = f"file size limit ({lim['file_bytes'] // 2**20} MiB)"
        else:
            reason = f"signal {signal.Signals(sig).name}"
    else:
        returncode = info["code"]
    if reason and not timed_out:
        stderr += f"\n{NOTE}killed: {reason}\n".encode()
    return {
        "returncode": returncode,
        "stdout": base64.b64encode(stdout).decode(),
        "stderr": base64.b64encode(stderr).decode(),
        "reason": reason,
        "timed_out": timed_out,
        "elapsed": elapsed,
    }


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


def build_root(req: dict, config: dict) -> None:
    """A new root: system and runtime read-only, private /tmp and /dev, the sample dir writable."""
    _check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    new = config["root_mount"]
    mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), new + top)
        elif os.path.isdir(top):
            bind(top, new + top)
    tops = ("/usr/", "/bin/", "/sbin/", "/lib")
    for path in config["visible"]:
        if os.path.exists(path) and not path.startswith(tops):
            bind(path, new + path)
    os.makedirs(new + "/tmp")
    mount(
        "tmpfs",
        new + "/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"mode=1777,size={req['limits']['tmp_bytes']}",
    )
    work = req["workdir"]
    bind(work, new + work, rw=True)
    dev = new + "/dev"
    os.makedirs(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
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
    mount("tmpfs", dev + "/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    os.makedirs(new + "/proc")
    mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
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


def init(req: dict, config: dict, stdin: int, out_w: int, err_w: int, st_w: int) -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    if config["mode"] in ("unshare", "userns"):
        build_root(req, config)
    uid, gid = req["uid"], req["gid"]
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if config["mode"] == "userns":
        drop_capabilities()
    prctl(PR_SET_DUMPABLE, 0)
    lim = req["limits"]
    cpu = int(lim["cpu_seconds"])
    limits = [
        (resource.RLIMIT_AS, lim["memory_bytes"]),
        (resource.RLIMIT_FSIZE, lim["file_bytes"]),
        (resource.RLIMIT_NOFILE, lim["open_files"]),
        (resource.RLIMIT_CORE, 0),
    ]
    if uid is not None:  # RLIMIT_NPROC counts per uid: only meaningful for a uid of our own
        limits.append((resource.RLIMIT_NPROC, lim["processes"]))
    for res, value in limits:
        resource.setrlimit(res, (value, value))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    child = os.fork()
    if child == 0:
        os.close(st_w)
        program(req, stdin, out_w, err_w)
    for f in (stdin, out_w, err_w):
        os.close(f)
    while True:
        try:
            pid, status, ru = os.wait4(-1, 0)
        except ChildProcessError:
            os._exit(125)
        if pid == child:
            break
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    os.write(
        st_w, json.dumps({"code": code, "signal": sig, "cpu": ru.ru_utime + ru.ru_stime}).encode()
    )
    os._exit(0)


# ---------------------------------------------------------------- the program


def program(req: dict, stdin: int, out_w: int, err_w: int) -> None:
    """Become the requested program; never returns."""
    try:
        prctl(PR_SET_DUMPABLE, 1)
        os.dup2(stdin, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.umask(0o002)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
    except BaseException as exc:  # noqa: BLE001
        os.write(2, f"{NOTE}cannot start: {exc}\n".encode())
        os._exit(126)
    argv = req["argv"]
    if req["fast"]:
        os._exit(run_python(argv))
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

    main_mod = types.ModuleType("__main__")
    main_mod.__dict__["__builtins__"] = builtins
    if argv[1] == "-c":
        source, filename = argv[2], "<string>"
        sys.argv = ["-c", *argv[3:]]
        sys.path.insert(0, "")
    else:
        filename = argv[1]
        try:
            with open(filename, "rb") as fh:
                source = fh.read()
        except OSError as exc:
            sys.stderr.write(
                f"{argv[0]}: can't open file {filename!r}: [Errno {exc.errno}] {exc.strerror}\n"
            )
            sys.stderr.flush()
            return 2
        sys.argv = argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(filename)))
        main_mod.__file__ = filename
    sys.modules["__main__"] = main_mod
    code = 0
    try:
        exec(compile(source, filename, "exec"), main_mod.__dict__)
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


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(sys.argv[2], sys.argv[3])
    else:
        main()
