"""What a program sees in our sandboxes against a plain run: the probe run both ways, and the one
list of the differences kept on purpose (``DIFFERENCES``, also the table in docs/sandbox.md).

The official harness runs ``python STEP.py`` from the user's shell (spec ``scicode.md`` §4); the
plain run here is that: the scoring runtime's ``python`` first on PATH, this process's own
environment, a fresh directory holding only the program, stdin from /dev/null, output to pipes.
Ours run it as a step program runs (``execution.run_file``: ``python3 probe.py`` in a directory
of its own).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from inspect_ai.util import SandboxEnvironment

from scievals.sandbox import FileJob, run_file
from scievals.sandbox.runtime import ensure_runtime

PROBE = Path(__file__).with_name("env_probe.py")
HARNESS_ENV = "env.* (the harness's own)"
"""How a variable of the plain run's environment that a sandboxed program does not get is named."""

DIFFERENCES = {
    HARNESS_ENV: "the harness's environment (API keys, PYTHON*, OPENBLAS_* ...) never reaches a "
    "program; it gets PATH, HOME, TMPDIR, LANG and the variables below",
    "env.HOME": "/tmp (Docker: /home/sandbox): the user's home is not in the sandbox",
    "env.PATH": "the runtime's bin and the system's directories only",
    "env.TMPDIR": "the private /tmp",
    "env.LC_CTYPE": "Docker: the image sets no LANG, so Python coerces the C locale to C.UTF-8 "
    "(PEP 538) and says so here; the encodings are the same",
    "env.HOSTNAME": "Docker sets it to the container's id",
    "env.OPENBLAS_NUM_THREADS": "1: an execution has one CPU (its slot); more BLAS threads would "
    "only contend for it",
    "env.MKL_NUM_THREADS": "1, as OPENBLAS_NUM_THREADS",
    "env.OMP_NUM_THREADS": "1, as OPENBLAS_NUM_THREADS",
    "env.NUMEXPR_NUM_THREADS": "1, as OPENBLAS_NUM_THREADS",
    "env.VECLIB_MAXIMUM_THREADS": "1, as OPENBLAS_NUM_THREADS",
    "env.MPLBACKEND": "Agg: there is no display",
    "env.MPLCONFIGDIR": "matplotlib's font cache, built once with the runtime",
    "id.expanduser(~)": "follows HOME",
    "id.uid is root": "each execution runs as an unprivileged uid of its own (Docker: 10001)",
    "id.gid is root": "its group is the one it shares with the sample directory",
    "id.owns cwd": "the sample directory is the harness's, writable by the execution's group",
    "id.passwd entry": "the execution's uid has no entry in /etc/passwd (Docker's has one)",
    "id.getpass.getuser": "no passwd entry and no USER or LOGNAME variable: KeyError",
    "id.supplementary groups": "Docker: the image's user is in its own group",
    "id.umask": "0o002: what a program writes stays writable by the sample directory's group",
    "place.hostname": "its own uts namespace: 'sandbox' (Docker: the container's id)",
    "place.executable": "Docker: the image's interpreter (/opt/runtime), the same pins",
    "place.prefix": "Docker: the image's runtime (/opt/runtime)",
    "place.sys.path (but [0])": "Docker: the image's standard library and runtime",
    "python.version": "Docker: the image's Python 3.11 (Debian's build)",
    "proc.oom_score_adj": "1000: under the machine's own memory pressure the kernel's OOM killer "
    "takes a program, never the harness",
    "proc.status CapEff": "no capabilities",
    "proc.status NoNewPrivs": "set: the seccomp filter needs it",
    "proc.status Seccomp": "2: the seccomp filter and the guard",
    "python.flags.isolated": "the zygote runs python -I: no PYTHON* variables, no user site "
    "directory, nothing from its working directory (a program's own directory still comes first "
    "on sys.path, as a script's does)",
    "python.flags.ignore_environment": "as python.flags.isolated",
    "python.flags.no_user_site": "as python.flags.isolated",
    "python.flags.safe_path": "as python.flags.isolated",
    "stdio.stderr line_buffering": "Python's default for a pipe; the plain run obeys the "
    "harness's PYTHONUNBUFFERED where it is set (this machine sets it)",
    "python.numpy imported at start": "the zygote (Docker: the warm server) imports the "
    "scientific stack once; every program forks from it",
    "python.gc objects frozen at start": "the warm stack's objects are frozen (gc.freeze) before "
    "the fork, so that a program's full collections walk only what it made, as a plain run's "
    "walk only what it imported (list-heavy code ran 2x slower without)",
    "python.standard modules that do not import": "rlimits-only mode as root: the execution's "
    "uid cannot enter a directory only root may (the base interpreter under /root here), so a "
    "standard module the zygote did not import fails (the other modes bind it in)",
    "rlimit.RLIMIT_AS": "rlimits-only mode: address space too, each process (elsewhere the "
    "memory cgroup alone counts real memory)",
    "rlimit.RLIMIT_CORE": "no core files",
    "rlimit.RLIMIT_FSIZE": "512 MiB per file",
    "rlimit.RLIMIT_NOFILE": "256 open files",
    "rlimit.RLIMIT_OFILE": "as RLIMIT_NOFILE",
}
"""Every fact in which a sandboxed program may see other than a plain run, and why."""


def facts_of(stdout: str) -> dict[str, Any]:
    return json.loads(stdout)["facts"]


def default_signals() -> None:
    """Every signal at its default disposition, as a terminal starts a program: a harness under
    nohup or in a background job ignores SIGHUP, SIGINT and SIGQUIT, and its children inherit
    that; a sandboxed program starts from the defaults whatever the harness ignores."""
    for sig in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)


def official_facts() -> dict[str, Any]:
    """The probe's facts in a plain run of the scoring runtime, started as a terminal starts it."""
    runtime = ensure_runtime()
    env = {**os.environ, "PATH": f"{runtime.root / 'bin'}:{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory(prefix="scievals-official-") as here:
        Path(here, "probe.py").write_text(PROBE.read_text())
        proc = subprocess.run(
            ["python", "probe.py"],
            cwd=here,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            preexec_fn=default_signals,
        )
    assert proc.returncode == 0, proc.stderr
    return facts_of(proc.stdout)


async def sandboxed_facts(env: SandboxEnvironment) -> dict[str, Any]:
    """The probe's facts as a step program of ``env`` sees them."""
    ran = await run_file(env, FileJob("probe.py", PROBE.read_text(), ["python3", "probe.py"], 120))
    assert ran.outcome.returncode == 0, ran.outcome
    return facts_of(ran.outcome.stdout)


def differences(official: dict[str, Any], ours: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """fact -> (plain run, ours) where they differ; the harness's own variables under one name."""
    out: dict[str, tuple[Any, Any]] = {}
    for fact in sorted(set(official) | set(ours)):
        if official.get(fact) == ours.get(fact):
            continue
        if fact.startswith("env.") and fact not in ours:
            out.setdefault(HARNESS_ENV, ("set", "absent"))
        else:
            out[fact] = (official.get(fact), ours.get(fact))
    return out


def undocumented(official: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    return [
        f"{fact}: plain run {plain!r}, ours {mine!r}"
        for fact, (plain, mine) in differences(official, ours).items()
        if fact not in DIFFERENCES
    ]
