"""What a program can read about the machine it runs on, printed as one JSON object.

Run as a step program is run (``python3 env_probe.py`` from the directory holding it), once the
official way and once in each of our sandboxes; ``test_sandbox_environment.py`` compares the
facts. Standard library only, so that it runs in any runtime. Each fact is a plain value that
two runs on the same machine give alike; what varies from run to run (pids, temp paths, exact
timings) is reduced to the property that matters (a clock is "fine" or ticks every N ms).
"""

import contextlib
import gc
import importlib
import json
import os
import resource
import signal
import socket
import stat
import sys
import time

IMPORT_FAILURES = []
"""Standard modules this program could not import (it imports them as honest code would)."""


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        IMPORT_FAILURES.append(f"{name}: {type(exc).__name__}")
        return None


getpass = optional("getpass")
locale = optional("locale")
pwd = optional("pwd")
tempfile = optional("tempfile")

FINE = 20e-6
"""A clock whose median step is below this is at full resolution (a plain run gets about 1 µs;
a tick-updated clock steps by 1-10 ms)."""
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
SIGNALS = (
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGPIPE",
    "SIGALRM",
    "SIGTERM",
    "SIGCHLD",
    "SIGCONT",
    "SIGTSTP",
    "SIGTTIN",
    "SIGTTOU",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGWINCH",
)
PROC_FILES = (
    "/proc/self/status",
    "/proc/self/limits",
    "/proc/self/stat",
    "/proc/self/statm",
    "/proc/self/maps",
    "/proc/self/cgroup",
    "/proc/self/cmdline",
    "/proc/self/mountinfo",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/loadavg",
    "/proc/uptime",
)
STATUS_FIELDS = ("SigBlk", "SigIgn", "Cpus_allowed_list", "Seccomp", "NoNewPrivs", "CapEff")


def cpu_burn_step(clock, seconds=0.6, steps=41):
    """The median nonzero step of ``clock`` while this thread computes (a CPU clock only moves
    while it runs): about 1 µs at full resolution, 4 ms for a clock the kernel updates on ticks."""
    seen = []
    last = clock()
    deadline = time.perf_counter() + seconds
    while len(seen) < steps and time.perf_counter() < deadline:
        now = clock()
        if now != last:
            seen.append(now - last)
            last = now
    return sorted(seen)[len(seen) // 2] if seen else None


def resolution(step):
    if step is None:
        return "never moved"
    if step < FINE:
        return "fine"
    return f"{round(step * 1000)} ms"


def clocks():
    def usage(who):
        def read():
            ru = resource.getrusage(who)
            return ru.ru_utime + ru.ru_stime

        return read

    def times():
        t = os.times()
        return t.user + t.system

    raw = {
        "process_time": cpu_burn_step(time.process_time),
        "thread_time": cpu_burn_step(time.thread_time),
        "getrusage(RUSAGE_SELF)": cpu_burn_step(usage(resource.RUSAGE_SELF)),
        "os.times": cpu_burn_step(times),
        "monotonic": cpu_burn_step(time.monotonic),
        "perf_counter": cpu_burn_step(time.perf_counter),
        "time": cpu_burn_step(time.time),
    }
    return {f"clock.{k}": resolution(v) for k, v in raw.items()}, raw


def kind_of(fd):
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return "closed"
    if os.isatty(fd):
        return "tty"
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(fd), os.stat(os.devnull)):
                return "/dev/null"
        return "character device"
    if stat.S_ISREG(mode):
        return "regular file"
    return "other"


def streams():
    out = {
        f"stdio.{name}": kind_of(fd) for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2))
    }
    try:
        out["stdio.stdin reads"] = repr(os.read(0, 16))
    except OSError as exc:
        out["stdio.stdin reads"] = f"{type(exc).__name__} errno {exc.errno}"
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        out[f"stdio.{name} encoding"] = f"{stream.encoding} {stream.errors}"
        out[f"stdio.{name} line_buffering"] = stream.line_buffering
    out["stdio.open fds"] = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))[:-1]
    return out


def environment():
    out = {}
    for name, value in os.environ.items():
        secret = any(word in name.upper() for word in SECRET_WORDS)
        out[f"env.{name}"] = "<set>" if secret else value
    return out


def limits():
    out = {}
    for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_")):
        soft, hard = resource.getrlimit(getattr(resource, name))
        out[f"rlimit.{name}"] = ["inf" if v == resource.RLIM_INFINITY else v for v in (soft, hard)]
    return out


def signals():
    out = {}
    for name in SIGNALS:
        handler = signal.getsignal(getattr(signal, name))
        if handler in (signal.SIG_DFL, signal.SIG_IGN):
            out[f"signal.{name}"] = signal.Handlers(handler).name
        else:
            out[f"signal.{name}"] = getattr(handler, "__name__", "handler")
    out["signal.blocked"] = sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"):
        out[f"signal.{name}"] = list(signal.getitimer(getattr(signal, name)))
    return out


def proc():
    out = {}
    for path in PROC_FILES:
        try:
            with open(path, "rb") as fh:
                fh.read()
            out[f"proc.{path}"] = "readable"
        except OSError as exc:
            out[f"proc.{path}"] = f"{type(exc).__name__} errno {exc.errno}"
    try:
        with open("/proc/self/status") as fh:
            status = dict(line.split(":", 1) for line in fh if ":" in line)
        for field in STATUS_FIELDS:
            out[f"proc.status {field}"] = status.get(field, "").strip()
    except OSError:
        pass
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj") as fh:
        out["proc.oom_score_adj"] = fh.read().strip()
    return out


def identity():
    uid, gid = os.getuid(), os.getgid()
    out = {
        "id.uid is root": uid == 0,
        "id.gid is root": gid == 0,
        "id.euid == uid": os.geteuid() == uid,
        "id.supplementary groups": len(os.getgroups()),
        "id.owns cwd": os.stat(".").st_uid == uid,
        "id.umask": oct(os.umask(0o022)),
    }
    os.umask(int(out["id.umask"], 8))
    try:
        out["id.passwd entry"] = pwd.getpwuid(uid).pw_dir
    except KeyError:
        out["id.passwd entry"] = "none"
    except AttributeError:
        out["id.passwd entry"] = "pwd not importable"
    try:
        out["id.getpass.getuser"] = "works" if getpass.getuser() else "empty"
    except Exception as exc:  # noqa: BLE001 - its failure is the fact
        out["id.getpass.getuser"] = type(exc).__name__
    out["id.expanduser(~)"] = os.path.expanduser("~")
    return out


def place():
    here = os.path.dirname(os.path.abspath(__file__))
    cwd = os.getcwd()
    out = {
        "place.__file__ is absolute": os.path.isabs(__file__),
        "place.__file__ in cwd": here == cwd,
        "place.code's file name is __file__": sys._getframe().f_code.co_filename == __file__,
        "place.argv": sys.argv,
        "place.sys.path[0] is the file's directory": sys.path[0] == here,
        "place.cwd entries": sorted(os.listdir(cwd)),
        "place.cwd writable": os.access(cwd, os.W_OK),
        "place.tempfile.gettempdir": tempfile.gettempdir() if tempfile else None,
        "place.tmp writable": os.access("/tmp", os.W_OK),
        "place.executable": sys.executable,
        "place.prefix": sys.prefix,
        "place.sys.path (but [0])": sys.path[1:],
        "place.hostname": socket.gethostname(),
    }
    return out


def interpreter():
    flags = sys.flags
    names = [n for n in dir(flags) if not n.startswith("_") and n not in ("count", "index")]
    out = {f"python.flags.{n}": getattr(flags, n) for n in names}
    out["python.version"] = sys.version
    out["python.dont_write_bytecode"] = sys.dont_write_bytecode
    out["python.numpy imported at start"] = "numpy" in sys.modules
    out["python.gc objects frozen at start"] = gc.get_freeze_count() > 0
    out["python.standard modules that do not import"] = IMPORT_FAILURES
    main = vars(sys.modules["__main__"])
    out["python.__main__ dunders"] = sorted(k for k in main if k.startswith("__"))
    return out


def locales():
    if locale is None:
        return {"locale.preferred encoding": None}
    return {
        "locale.preferred encoding": locale.getpreferredencoding(False),
        "locale.filesystem encoding": sys.getfilesystemencoding(),
        "locale.LC_CTYPE": locale.setlocale(locale.LC_CTYPE),
        "locale.LC_ALL": locale.setlocale(locale.LC_ALL),
        "locale.tzname": list(time.tzname),
        "locale.utf8_mode": sys.flags.utf8_mode,
    }


def cpus():
    return {
        "cpu.os.cpu_count": os.cpu_count(),
        "cpu.sched_getaffinity": len(os.sched_getaffinity(0)),
        "cpu.nice": os.nice(0),
        "cpu.scheduler": os.sched_getscheduler(0),
    }


def main():
    facts, raw = clocks()
    for part in (streams, environment, limits, signals, proc, identity, place, locales, cpus):
        facts.update(part())
    facts.update(interpreter())
    print(json.dumps({"facts": facts, "raw": raw}))


if __name__ == "__main__":
    main()
