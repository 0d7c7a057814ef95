"""The step runner of containers (``container_runner.py``) and its harness side (``container.py``),
without Docker: the guard filter, the clearing of directories, the kept file, the parsing of
answers (total: anything a container prints is a clear machinery error or a checked answer), and
that outside one of our images the runner touches nothing. In containers: tests/docker."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.util import ExecResult

from scievals.sandbox import container, seccomp
from scievals.sandbox.files import FileTooLargeError, NotRegularFileError
from scievals.sandbox.inside import container_runner as runner
from scievals.sandbox.inside import kernel
from scievals.sandbox.kept import spool
from scievals.shipped import SANDBOX, program

GUARD_CHECKS = textwrap.dedent(
    """
    import ctypes, errno, fcntl, json, os, resource, signal, sys, threading
    from scievals.sandbox import seccomp
    from scievals.sandbox.inside import kernel
    # pid 1 of a fresh pid namespace (pids there are given in order: nothing wraps around)
    group = os.fork()  # an older process group
    if group == 0:
        os.setsid()
        signal.pause()
        os._exit(0)
    out_r, out_w = os.pipe()
    checker = os.fork()
    if checker == 0:
        os.setsid()
        floor = os.getpid()
        child = os.fork()  # a younger process: the program's own
        if child == 0:
            signal.pause()
            os._exit(0)
        kernel.prctl(kernel.PR_SET_NO_NEW_PRIVS, 1)
        kernel.install_seccomp(kernel.with_floor(seccomp.guard(), seccomp.FLOOR_MARKS, floor))
        libc = ctypes.CDLL(None, use_errno=True)
        parent = os.getppid()
        checks = {
            "kill parent": lambda: os.kill(parent, 0),
            "kill -1": lambda: os.kill(-1, 0),
            "kill an older group": lambda: os.kill(-group, 0),
            "kill init": lambda: os.kill(1, 0),
            "kill self": lambda: os.kill(os.getpid(), 0),
            "kill own group (0)": lambda: os.kill(0, 0),
            "kill own group": lambda: os.killpg(os.getpid(), 0),
            "kill child": lambda: os.kill(child, 0),
            "pthread_kill self": lambda: signal.pthread_kill(threading.main_thread().ident, 0),
            "prlimit parent": lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE),
            "prlimit self": lambda: resource.prlimit(0, resource.RLIMIT_NOFILE),
            "pidfd_open parent": lambda: os.close(os.pidfd_open(parent)),
            "pidfd_open child": lambda: os.close(os.pidfd_open(child)),
            "F_SETOWN": lambda: fcntl.fcntl(out_w, fcntl.F_SETOWN, parent),
            "F_GETFL": lambda: fcntl.fcntl(out_w, fcntl.F_GETFL),
        }
        out = {}
        for label, call in checks.items():
            try:
                call()
                out[label] = None
            except OSError as exc:
                out[label] = errno.errorcode.get(exc.errno, str(exc.errno))
        proc = os.open("/proc/%d" % parent, os.O_RDONLY | os.O_DIRECTORY)
        ret = libc.syscall(ctypes.c_long(424), ctypes.c_long(proc), ctypes.c_long(0), None, 0)
        out["pidfd_send_signal /proc/PARENT"] = None if ret == 0 else errno.errorcode[ctypes.get_errno()]
        os.kill(child, signal.SIGKILL)
        os.write(out_w, json.dumps(out).encode())
        os._exit(0)
    os.close(out_w)
    os.waitpid(checker, 0)
    result = os.read(out_r, 1 << 16)
    os.kill(group, signal.SIGKILL)
    print(result.decode())
    """
)
GUARDED = {  # what the guard lets through (None) and what it refuses (EPERM)
    "kill parent": "EPERM",
    "kill -1": "EPERM",
    "kill an older group": "EPERM",
    "kill init": "EPERM",
    "kill self": None,
    "kill own group (0)": None,
    "kill own group": None,
    "kill child": None,
    "pthread_kill self": None,
    "prlimit parent": "EPERM",
    "prlimit self": None,
    "pidfd_open parent": "EPERM",
    "pidfd_open child": None,
    "F_SETOWN": "EPERM",
    "F_GETFL": None,
    "pidfd_send_signal /proc/PARENT": "EPERM",
}


@pytest.mark.skipif(os.uname().machine not in seccomp.TARGETED, reason="no syscall table")
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root's unshare")
def test_guard_keeps_signals_off_older_processes():
    out = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", GUARD_CHECKS],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == GUARDED


def test_floor_replaces_only_the_marks():
    program = seccomp.guard()
    patched = kernel.with_floor(program, seccomp.FLOOR_MARKS, 4242)
    words = [int.from_bytes(patched[i + 4 : i + 8], "little") for i in range(0, len(patched), 8)]
    assert 4242 in words and (1 << 32) - 4242 in words
    assert not set(seccomp.FLOOR_MARKS) & set(words)
    changed = [i for i in range(0, len(program), 8) if program[i : i + 8] != patched[i : i + 8]]
    assert len(changed) == 2


def test_clear_removes_everything_but_the_kept_name(tmp_path):
    top = tmp_path / "home"
    top.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("stays")
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3000):  # deeper than recursion and PATH_MAX allow
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    locked = top / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "f").write_text("x")
    os.chmod(locked / "inner", 0)
    os.chmod(locked, 0)
    os.symlink(outside, top / "link")
    os.symlink(tmp_path, top / "dirlink")
    os.mkfifo(top / "fifo")
    (top / runner.HELD).write_text("kept")
    try:
        runner.clear(str(top), keep_name=runner.HELD)
        assert sorted(os.listdir(top)) == [runner.HELD]
        assert outside.read_text() == "stays"
    finally:
        runner.clear(str(top))  # pytest's own clean-up of tmp_path would recurse too deep
    assert os.listdir(top) == []


def test_only_the_containers_main_process_is_spared_among_inits_children(monkeypatch):
    """init (1), its main process (7, started with it), this runner (50) under its exec's
    wrapper (45); 20 and 33 are what a command left to init within a second of the start: the
    start time alone would have spared them (a pinned container handed on with a process)."""
    table = {1: (0, 100), 7: (1, 100), 20: (1, 130), 33: (1, 101), 45: (0, 150), 50: (45, 150)}
    monkeypatch.setattr(runner.os, "listdir", lambda path: [str(p) for p in table] + ["self"])
    monkeypatch.setattr(runner.os, "getpid", lambda: 50)
    monkeypatch.setattr(runner, "stat_fields", lambda pid: table.get(int(pid)))
    assert runner.ancestors() == {1, 7, 45, 50}
    table[7] = (1, 100 + runner.BOOT_TICKS + 1)  # no main process: init's children all came later
    del table[20], table[33]
    assert runner.ancestors() == {1, 45, 50}


RANDOM = random.Random(7).randbytes(60)  # does not compress


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (None, {"missing": True}),
        (lambda p: os.mkfifo(p), {"not_regular": "not a regular file"}),
        (lambda p: os.mkdir(p), {"not_regular": "not a regular file"}),
        (lambda p: os.symlink("/etc/hostname", p), "not_regular"),
        (lambda p: p.write_bytes(b"x" * 101), {"too_large": 101}),
        (lambda p: p.write_bytes(b"abc" * 30), "zlib"),
        (lambda p: p.write_bytes(RANDOM), "held"),
    ],
)
def test_the_kept_file_is_read_without_following_or_blocking(tmp_path, make, expected):
    if make is not None:
        make(tmp_path / "rec")
    (tmp_path / runner.HELD).mkdir()  # what a program may leave under the held file's name
    (tmp_path / "filler").write_bytes(b"f" * 1000)  # and the rest of a directory it filled
    got = runner.collect({"keep": "rec", "max_keep": 100, "inline": 50}, str(tmp_path))["kept"]
    if isinstance(expected, dict):
        assert got == expected
    elif expected == "zlib":  # compressed, inline
        assert zlib.decompress(base64.b64decode(got["zlib"])) == b"abc" * 30
        assert got["size"] == 90
    elif expected == "held":  # compressed, held for chunks
        assert got["size"] == 60 and got["held"] > 50
        first = runner.fetch({"offset": 0, "length": 40}, str(tmp_path))
        last = runner.fetch({"offset": 40, "length": 40, "last": True}, str(tmp_path))
        packed = base64.b64decode(first["data"]) + base64.b64decode(last["data"])
        assert len(packed) == got["held"] and zlib.decompress(packed) == RANDOM
        assert os.listdir(tmp_path) == []  # emptied before the held file was written
    else:
        assert set(got) == {expected}


# ---- the harness side: answers are untrusted ----------------------------------------------------


class Scripted:
    """A sandbox whose exec prints the given answers, one per call."""

    def __init__(self, *stdouts: str, returncode: int = 0) -> None:
        self.stdouts = list(stdouts)
        self.requests: list[dict] = []
        self.returncode = returncode

    async def exec(self, cmd, input=None, timeout=None, timeout_retry=True, **_):
        self.requests.append(json.loads(input))
        return ExecResult(self.returncode == 0, self.returncode, self.stdouts.pop(0), "")


def packed(data: bytes, size: int | None = None) -> dict:
    """The kept file as the runner sends it inline."""
    text = base64.b64encode(zlib.compress(data)).decode()
    return {"zlib": text, "size": len(data) if size is None else size}


def answer(**fields) -> str:
    base = {
        "seconds": 0.5,
        "stdout": base64.b64encode(b"out").decode(),
        "stderr": base64.b64encode(b"err").decode(),
        "returncode": 0,
        "limit": None,
        "reason": None,
        "kept": packed(b"records"),
    }
    base.update(fields)
    return "noise\n" + container.PREFIX + json.dumps(base) + "\n"


def run(env, keep="rec"):
    return asyncio.run(
        container.run_file(
            env, container.FileJob("a.py", "print(1)", ["python3", "a.py"], 30, keep, 1 << 20), 1024
        )
    )


def test_a_good_answer_becomes_an_outcome_and_the_kept_bytes():
    env = Scripted(answer())
    ran = run(env)
    assert ran.outcome.returncode == 0 and ran.outcome.stdout == "out"
    assert (
        ran.outcome.stderr == "err"
        and ran.kept.path.read_bytes() == b"records"
        and ran.kept_error is None
    )
    request = env.requests[0]
    assert request["op"] == "run" and request["source"] == "print(1)"
    assert set(request["filters"]) == set(seccomp.TARGETED)


@pytest.mark.parametrize(
    ("kept", "error"),
    [
        ({"missing": True}, FileNotFoundError),
        ({"not_regular": "a FIFO"}, NotRegularFileError),
        ({"too_large": 1 << 30}, FileTooLargeError),
    ],
)
def test_kept_file_errors_are_those_of_our_sandbox(kept, error):
    ran = run(Scripted(answer(kept=kept)))
    assert ran.kept is None and isinstance(ran.kept_error, error)


def test_a_held_file_comes_in_chunks(monkeypatch):
    monkeypatch.setattr(container, "INLINE_BYTES", 10)
    monkeypatch.setattr(container, "CHUNK_BYTES", 16)
    data = RANDOM[:40]
    wire = zlib.compress(data)
    chunks = [wire[at : at + 16] for at in range(0, len(wire), 16)]
    env = Scripted(
        answer(kept={"held": len(wire), "size": 40}),
        *(container.PREFIX + json.dumps({"data": base64.b64encode(c).decode()}) for c in chunks),
    )
    ran = run(env)
    assert ran.kept.path.read_bytes() == data
    assert [r.get("offset") for r in env.requests[1:]] == list(range(0, len(wire), 16))
    assert [r.get("last") for r in env.requests[1:]][-1] is True


MALFORMED = [
    "",
    "no prefix at all",
    container.PREFIX + "not json",
    container.PREFIX + "[1, 2]",
    answer(returncode="0"),
    answer(returncode=-1),
    answer(returncode=None),  # no exit status without a timeout
    answer(limit="imaginary"),
    answer(reason=5),
    answer(seconds="soon"),
    answer(seconds=-1),
    answer(stdout="!!!"),
    answer(stdout=7),
    answer(kept={"zlib": "%%%", "size": 3}),
    answer(kept={**packed(b"abc"), "missing": True}),
    answer(kept={"zlib": base64.b64encode(b"QQ==").decode()}),  # no size
    answer(kept=packed(b"abc", size=2)),  # more than it said
    answer(kept=packed(b"abc", size=4)),  # less than it said
    answer(kept=packed(b"abc", size=1 << 40)),  # over the caller's bound
    answer(kept=packed(b"\0" * (1 << 20), size=10)),  # a bomb stops at what it said
    answer(kept={"zlib": base64.b64encode(b"abc").decode(), "size": 3}),  # not zlib
    answer(kept={"data": base64.b64encode(b"abc").decode()}),  # the old uncompressed form
    answer(kept={"held": 3, "size": 3}),  # held must be over the inline bound
    answer(kept={"held": 1 << 40, "size": 5}),  # and within what the size can pack to
    answer(kept=[]),
    answer(kept={}),
    answer(kept={"what": 1}),
]


@pytest.mark.parametrize("stdout", MALFORMED)
def test_malformed_answers_are_machinery_errors(stdout):
    with pytest.raises(container.RunnerError):
        run(Scripted(stdout))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_printed_text_is_an_answer_or_a_machinery_error(text):
    for stdout in (text, container.PREFIX + text):
        try:
            ran = run(Scripted(stdout))
        except container.RunnerError:
            continue
        assert ran is None or ran.outcome.seconds >= 0


def test_a_refusal_is_remembered_and_nothing_more_is_asked():
    env = Scripted(container.PREFIX + json.dumps({"refused": "not ours"}))
    assert run(env) is None
    assert run(env) is None and len(env.requests) == 1


def test_outside_our_images_the_runner_touches_nothing(tmp_path):
    """Run as it would be in Inspect's local sandbox: it refuses (no /etc/scievals-runtime),
    and a process of the same user, and the files beside it, are still there."""
    if os.path.exists(runner.MARKER):
        pytest.skip(f"{runner.MARKER} exists on this machine")
    bystander = subprocess.Popen(["sleep", "60"])
    (tmp_path / "keep.txt").write_text("mine")
    try:
        request = json.dumps({"op": "run", "filters": {}, "file": "a.py"})
        out = subprocess.run(
            [sys.executable, "-I", "-S", "-c", program(SANDBOX, "container_runner")],
            input=request,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert out.stdout.startswith(container.PREFIX + '{"refused"'), out.stderr
        assert bystander.poll() is None
        assert os.listdir(tmp_path) == ["keep.txt"]
    finally:
        bystander.kill()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.binary(max_size=3000).map(zlib.compress),
        st.binary(max_size=64).map(lambda b: zlib.compress(b * 500)),
    ),
    st.integers(min_value=0, max_value=1 << 16),
    st.integers(min_value=1, max_value=4096),
)
def test_inflating_a_kept_file_gives_exactly_its_size_or_a_machinery_error(wire, size, cut):
    """Whatever bytes come back as a compressed kept file, in whatever chunks: exactly ``size``
    bytes in the spool or a ``RunnerError`` (and nothing left in the spool), never more than
    ``size`` (a bomb stops there), never another error."""
    before = set(spool().iterdir())
    inflater = container.Inflater(size)
    try:
        for start in range(0, len(wire), cut):
            inflater.feed(wire[start : start + cut])
        kept = inflater.close()
    except container.RunnerError:
        inflater.abandon()
        assert set(spool().iterdir()) == before
        return
    assert kept.size == size == len(kept.path.read_bytes())
    kept.discard()
